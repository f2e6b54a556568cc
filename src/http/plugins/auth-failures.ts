import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashToken } from '../../app/credentials.ts';
import type { Config } from '../../config/config.ts';
import { AppError } from '../../domain/errors.ts';

const BEARER = /^Bearer[ \t]+(\S+)/i;
/** Most client addresses tracked at once; past it, addresses whose window ended are forgotten first. */
const MAX_PEERS = 100_000;
/** Most token hashes remembered as having authenticated (oldest forgotten first). */
const MAX_KNOWN = 10_000;

/** The key of a token in the set of those that authenticated: its SHA-256 (`hashToken`), base64url. */
const keyOf = (hash: Buffer): string => hash.toString('base64url');

/**
 * Rate limiting of failed authentication per client address (the socket's address: no proxy header is
 * trusted). The per-credential limit (rate-limit.ts) cannot count a caller that has no valid credential,
 * and each unknown token costs a credential lookup in the database. After TIDINGS_AUTH_FAILURE_LIMIT 401s
 * from one address within TIDINGS_AUTH_FAILURE_WINDOW, further requests from it are answered
 * 429 `rate_limited` (with `Retry-After`) before any lookup — except those whose token already
 * authenticated in this process, so a client sharing the address (a NAT, a proxy) keeps working. Every
 * 401 and 429 closes its connection (`Connection: close`): an unauthenticated caller's body is never read
 * and its socket is not kept. Installed before authentication (`onRequest` hooks run in order).
 */
export function installAuthFailureLimit(app: FastifyInstance, config: Pick<Config, 'authFailureLimit' | 'authFailureWindowMs'>, nowMs: () => number = Date.now): void {
  const peers = new Map<string, { count: number; start: number }>();
  const known = new Set<string>();
  const windowMs = config.authFailureWindowMs;

  const entry = (ip: string, now: number): { count: number; start: number } => {
    let e = peers.get(ip);
    if (e === undefined || now - e.start >= windowMs) {
      if (e === undefined && peers.size >= MAX_PEERS) {
        for (const [k, v] of peers) if (now - v.start >= windowMs) peers.delete(k);
        if (peers.size >= MAX_PEERS) peers.clear();
      }
      e = { count: 0, start: now };
      peers.set(ip, e);
    }
    return e;
  };
  const tokenOf = (request: FastifyRequest): string | undefined => BEARER.exec(request.headers.authorization ?? '')?.[1];

  if (config.authFailureLimit > 0) {
    app.addHook('onRequest', async (request) => {
      if (request.routeOptions.config.public === true) return;
      const e = peers.get(request.ip);
      if (e === undefined || e.count < config.authFailureLimit) return;
      const now = nowMs();
      if (now - e.start >= windowMs) return;
      const token = tokenOf(request);
      if (token !== undefined && known.has(keyOf(hashToken(token)))) return;
      const seconds = Math.max(1, Math.ceil((e.start + windowMs - now) / 1000));
      throw new AppError('rate_limited', `Too many failed authentications from this address; retry in ${seconds} s`, { headers: { 'retry-after': String(seconds) } });
    });
  }

  app.addHook('onSend', async (request, reply, payload) => {
    const status = reply.statusCode;
    if (status === 401 || (status === 429 && request.principal === null)) reply.header('connection', 'close');
    if (status === 401 && config.authFailureLimit > 0) entry(request.ip, nowMs()).count++;
    else if (request.principal !== null && config.authFailureLimit > 0) {
      // The auth hook's hash of this request's token: no second SHA-256 per request.
      if (request.tokenHash !== null) {
        const h = keyOf(request.tokenHash);
        known.delete(h);
        known.add(h);
        if (known.size > MAX_KNOWN) known.delete(known.values().next().value!);
      }
    }
    return payload;
  });
}
