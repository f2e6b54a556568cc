import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';
import { hashToken } from '../../app/credentials.ts';
import { AppError } from '../../domain/errors.ts';

const BEARER = /^Bearer[ \t]+(\S+)/i;

/**
 * The rate-limit key of a request: a hash of its Bearer token (one bucket per credential, never the token
 * itself, so the limiter's memory holds no secret), or the client address when there is none. The hash is the
 * auth hook's (`request.tokenHash`) when it has run, so the token is hashed once per request.
 */
export function credentialKey(request: FastifyRequest): string {
  if (request.tokenHash !== null) return `cred:${request.tokenHash.toString('base64url')}`;
  const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
  return token === undefined ? `ip:${request.ip}` : `cred:${hashToken(token).toString('base64url')}`;
}

/**
 * Rate limiting of the API per credential (docs/guides/security.md) with @fastify/rate-limit: at most
 * TIDINGS_API_RATE_BURST requests per window of BURST/RATE seconds for each credential, counted in this
 * process; beyond it 429 `rate_limited` with `Retry-After` (seconds until the window ends). Runs after
 * authentication (a route hook, so unauthenticated requests are refused before they count). Public routes
 * (health, readiness, metrics, OpenAPI) are not limited. TIDINGS_API_RATE_LIMIT=0 turns it off. Must be
 * installed before the routes are registered.
 */
export function installRateLimit(app: FastifyInstance, config: Pick<Config, 'apiRateLimitPerS' | 'apiRateBurst'>): void {
  if (config.apiRateLimitPerS === 0) return;
  app.register(rateLimit, {
    global: true,
    max: config.apiRateBurst,
    timeWindow: Math.max(1, Math.ceil((config.apiRateBurst / config.apiRateLimitPerS) * 1000)),
    keyGenerator: credentialKey,
    allowList: (request) => request.routeOptions.config.public === true,
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new AppError('rate_limited', `Too many requests for this credential; retry in ${seconds} s`, { headers: { 'retry-after': String(seconds) } });
    },
  });
}
