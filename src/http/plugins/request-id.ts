import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** A caller's `x-request-id` is kept when it is short and plain; otherwise one is generated. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The request id of a new request: the caller's `x-request-id`, or `req_` + 16 random hex digits, taken from a
 * version 4 UUID: `randomUUID` hands out ids from a CSPRNG buffer it refills once per 128 of them, where
 * `randomBytes(8)` was a native call per request (docs/adr/0016-hot-path-cost.md, decision 8).
 */
export function genRequestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && ACCEPTABLE_ID.test(given)) return given;
  // Groups 1 and 5 of a version 4 UUID are all random digits (RFC 9562 §5.4: only the version and variant
  // bits are fixed, in groups 3 and 4).
  const uuid = randomUUID();
  return `req_${uuid.slice(0, 8)}${uuid.slice(24, 32)}`;
}

/** Echoes the request id in the `x-request-id` response header of every answer. */
export function installRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
