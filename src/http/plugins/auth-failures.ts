import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.ts';
import { AppError } from '../../domain/errors.ts';

/** Most client addresses tracked at once; past it, addresses whose window ended are forgotten first. */
const MAX_PEERS = 100_000;

/** The settings of the failed-authentication limit. */
type FailureSettings = Pick<Config, 'authFailureLimit' | 'authFailureWindowMs'>;

/** The failed authentications of each client address, and the answer to the next one. */
export interface AuthFailures {
  /**
   * Counts one failed authentication from `address` (a request whose credential was checked and is not
   * valid) and returns the error to answer it with: 401 `authentication_failed` (`detail`), or 429
   * `rate_limited` once the address is past TIDINGS_AUTH_FAILURE_LIMIT within TIDINGS_AUTH_FAILURE_WINDOW.
   */
  refuse(address: string, detail: string): AppError;
}

/**
 * Limits failed authentications per client address (ADR 0010, ADR 0019). The credential is always checked
 * first, so the limit can only turn a refusal into a stronger one (401 → 429 with `Retry-After`): a valid
 * credential is never refused by it, whoever shares its address (a NAT, a TLS proxy, a restart that
 * forgot which tokens were seen). Every 401 and every 429 without a principal closes its connection
 * (`Connection: close`): the refused caller's body is never read and its socket is not kept.
 * @returns the tracker the auth hook reports failures to
 */
export function installAuthFailureLimit(
  app: FastifyInstance,
  config: FailureSettings,
  nowMs: () => number = Date.now,
): AuthFailures {
  app.addHook('onSend', async (request, reply, payload) => {
    const status = reply.statusCode;
    if (status === 401 || (status === 429 && request.principal === null)) reply.header('connection', 'close');
    return payload;
  });
  return createAuthFailures(config, nowMs);
}

/** The tracker of {@link installAuthFailureLimit}, on its own (unit tests). */
export function createAuthFailures(config: FailureSettings, nowMs: () => number = Date.now): AuthFailures {
  const peers = new Map<string, { count: number; start: number }>();
  const limit = config.authFailureLimit;
  const windowMs = config.authFailureWindowMs;
  const unauthenticated = (detail: string): AppError =>
    new AppError('authentication_failed', detail, { headers: { 'www-authenticate': 'Bearer' } });

  return {
    refuse(address, detail) {
      if (limit === 0) return unauthenticated(detail);
      const now = nowMs();
      let e = peers.get(address);
      if (e === undefined || now - e.start >= windowMs) {
        if (e === undefined && peers.size >= MAX_PEERS) {
          for (const [k, v] of peers) if (now - v.start >= windowMs) peers.delete(k);
          if (peers.size >= MAX_PEERS) peers.clear();
        }
        e = { count: 0, start: now };
        peers.set(address, e);
      }
      e.count++;
      if (e.count <= limit) return unauthenticated(detail);
      const seconds = Math.max(1, Math.ceil((e.start + windowMs - now) / 1000));
      const setting = `TIDINGS_AUTH_FAILURE_LIMIT=${limit} per TIDINGS_AUTH_FAILURE_WINDOW=${windowMs} ms`;
      const text =
        `Too many failed authentications from this client address (${setting}): ${detail}; ` + `retry in ${seconds} s`;
      return new AppError('rate_limited', text, { headers: { 'retry-after': String(seconds) } });
    },
  };
}
