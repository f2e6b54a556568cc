import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';
import { AppError } from '../../domain/errors.ts';
import { clientAddress } from './client-address.ts';
import { whenAnswered } from './pipeline-gate.ts';

/** Seconds a caller refused for too many requests in progress is told to wait (most answers take far less). */
const RETRY_AFTER_S = 1;

/** Counts of requests in progress by key; a key whose count falls to zero is forgotten. */
class InProgress {
  readonly #counts = new Map<string, number>();

  /** Takes a slot for `key` until `request` is answered; false when `limit` are already taken. */
  take(key: string, limit: number, request: FastifyRequest, reply: FastifyReply): boolean {
    const n = this.#counts.get(key) ?? 0;
    if (n >= limit) return false;
    this.#counts.set(key, n + 1);
    whenAnswered(request.raw, reply.raw, () => {
      const left = (this.#counts.get(key) ?? 1) - 1;
      if (left <= 0) this.#counts.delete(key);
      else this.#counts.set(key, left);
    });
    return true;
  }
}

/**
 * The 429 of a caller over one of the limits. `Connection: close`: the refused request's body is not read, so
 * a slow body cannot hold the connection after its refusal.
 */
function refusal(detail: string): AppError {
  return new AppError('concurrency_limited', `${detail}; retry in ${RETRY_AFTER_S} s`, {
    headers: { 'retry-after': String(RETRY_AFTER_S), connection: 'close' },
  });
}

/**
 * Bounds the requests of one client address in progress at once (TIDINGS_API_ADDRESS_CONCURRENCY; the address
 * of {@link clientAddress}), with or without a credential, from the end of their headers until their answer
 * is written or their connection closes. Installed first among the `onRequest` hooks, before authentication.
 * @throws AppError `concurrency_limited` (429, `Retry-After`)
 */
export function limitAddressInProgress(app: FastifyInstance, config: Pick<Config, 'apiAddressConcurrency'>): void {
  const limit = config.apiAddressConcurrency;
  if (limit === 0) return;
  const slots = new InProgress();
  app.addHook('onRequest', async (request, reply) => {
    if (!slots.take(clientAddress(request), limit, request, reply)) {
      throw refusal(
        'Too many requests from this client address in progress at once ' +
          `(TIDINGS_API_ADDRESS_CONCURRENCY=${limit})`,
      );
    }
  });
}

/**
 * Bounds the requests of one credential in progress at once (TIDINGS_API_CREDENTIAL_CONCURRENCY), slow bodies
 * included, so one credential cannot hold every connection or every database slot of the process and the
 * others are served beside it. Keyed by the hash of the Bearer token the auth hook took; installed after it.
 * @throws AppError `concurrency_limited` (429, `Retry-After`)
 */
export function limitCredentialInProgress(
  app: FastifyInstance,
  config: Pick<Config, 'apiCredentialConcurrency'>,
): void {
  const limit = config.apiCredentialConcurrency;
  if (limit === 0) return;
  const slots = new InProgress();
  app.addHook('onRequest', async (request, reply) => {
    if (request.principal === null || request.tokenHash === null) return;
    if (!slots.take(request.tokenHash.toString('base64url'), limit, request, reply)) {
      throw refusal(
        'Too many requests of this credential in progress at once ' + `(TIDINGS_API_CREDENTIAL_CONCURRENCY=${limit})`,
      );
    }
  });
}
