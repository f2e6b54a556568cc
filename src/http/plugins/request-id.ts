import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** A caller's `x-request-id` is kept when it is short and plain; otherwise one is generated. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The request id of a new request: the caller's `x-request-id`, or `req_` + 16 hex digits. */
export function genRequestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && ACCEPTABLE_ID.test(given)) return given;
  return `req_${randomBytes(8).toString('hex')}`;
}

/** Echoes the request id in the `x-request-id` response header of every answer. */
export function installRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
