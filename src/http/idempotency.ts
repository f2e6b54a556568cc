import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../app/credentials.ts';
import { AppError } from '../domain/errors.ts';
import type { IdempotencyScope, StoredAnswer } from '../ports/idempotency-store.ts';
import type { HttpDeps } from './deps.ts';
import { WIRE_LIMITS } from './schemas/common.ts';

/** The principal of an authenticated route (the auth hook guarantees it). */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === null) throw new AppError('authentication_failed', 'Not authenticated');
  return request.principal;
}

/**
 * Fingerprint of a request (docs/design.md#publishing): SHA-256 over method, path with query, and the raw body bytes,
 * so the same key with anything different is refused with 422 `idempotency_key_mismatch`.
 */
export function fingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method}\n${request.url}\n`)
    .update(request.rawBody ?? Buffer.alloc(0))
    .digest('hex');
}

/**
 * The idempotency scope of a request (docs/design.md#publishing): (principal, method + route template, key), with the
 * request's fingerprint; null when it carries no `Idempotency-Key`.
 * @throws AppError `validation` for an empty or over-long key, or one given twice
 */
export function keyScope(deps: Pick<HttpDeps, 'config'>, request: FastifyRequest): IdempotencyScope | null {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return null;
  if (typeof header !== 'string' || header === '' || header.length > WIRE_LIMITS.nameMaxLength) {
    throw new AppError('validation', [
      {
        loc: ['header', 'idempotency-key'],
        msg: `must be 1–${WIRE_LIMITS.nameMaxLength} characters, given once`,
        type: 'value_error',
      },
    ]);
  }
  const principal = principalOf(request);
  return {
    owner: principal.kind === 'admin' ? 'admin' : principal.appId,
    route: `${request.method} ${request.routeOptions.url ?? ''}`,
    key: header,
    fingerprint: fingerprint(request),
    ttlMs: deps.config.idempotencyTtlMs,
    waitMs: deps.config.idempotencyWaitMs,
  };
}

/** Sends an idempotent answer; a replay is marked with `idempotent-replayed: true`. */
export function sendAnswer(
  reply: FastifyReply,
  answer: StoredAnswer & { readonly replayed: boolean },
  body: unknown = answer.body,
): FastifyReply {
  if (answer.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(answer.status).send(body);
}
