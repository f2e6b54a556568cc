import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';
import { hashToken } from '../../app/credentials.ts';
import { AppError } from '../../domain/errors.ts';
import { clientAddress } from './client-address.ts';

const BEARER = /^Bearer[ \t]+(\S+)/i;

/** True for the routes served without a credential (health, readiness, metrics, OpenAPI, the web pages). */
const isPublic = (request: FastifyRequest): boolean => request.routeOptions.config.public === true;

/**
 * The rate-limit key of a request: on a route served without a credential, its client address
 * ({@link clientAddress}); otherwise a hash of its Bearer token (one bucket per credential, never the token
 * itself, so the limiter's memory holds no secret), or the client address when there is none. The hash is the
 * auth hook's (`request.tokenHash`) when it has run, so the token is hashed once per request.
 */
export function credentialKey(request: FastifyRequest): string {
  if (isPublic(request)) return `public:${clientAddress(request)}`;
  if (request.tokenHash !== null) return `cred:${request.tokenHash.toString('base64url')}`;
  const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
  return token === undefined ? `ip:${clientAddress(request)}` : `cred:${hashToken(token).toString('base64url')}`;
}

/** One limit: `burst` requests per window of `burst / perS` seconds (at least 1 ms). */
const windowMs = (perS: number, burst: number): number => Math.max(1, Math.ceil((burst / perS) * 1000));

type RateLimits = Pick<Config, 'apiRateLimitPerS' | 'apiRateBurst' | 'publicRateLimitPerS' | 'publicRateBurst'>;

/**
 * Rate limiting with @fastify/rate-limit (docs/guides/security.md), counted in this process; beyond a limit
 * 429 `rate_limited` with `Retry-After` (seconds until the window ends) and a detail naming the setting:
 * - each credential: TIDINGS_API_RATE_BURST requests per window of BURST/RATE seconds
 *   (TIDINGS_API_RATE_LIMIT); runs after authentication (a route hook), so unauthenticated requests are refused
 *   before they count;
 * - each client address on the routes served without a credential (health, readiness, metrics, the OpenAPI
 *   document, the web pages and files): TIDINGS_PUBLIC_RATE_BURST per window of BURST/RATE seconds
 *   (TIDINGS_PUBLIC_RATE_LIMIT), so a caller without a credential cannot make the process build answers
 *   without bound.
 * A rate of 0 turns that limit off. Must be installed before the routes are registered.
 */
export function installRateLimit(app: FastifyInstance, config: RateLimits): void {
  const apiOn = config.apiRateLimitPerS > 0;
  const publicOn = config.publicRateLimitPerS > 0;
  if (!apiOn && !publicOn) return;
  const apiWindowMs = apiOn ? windowMs(config.apiRateLimitPerS, config.apiRateBurst) : 1;
  const publicWindowMs = publicOn ? windowMs(config.publicRateLimitPerS, config.publicRateBurst) : 1;
  app.register(rateLimit, {
    global: true,
    max: (request) => (isPublic(request) ? config.publicRateBurst : config.apiRateBurst),
    timeWindow: (request) => (isPublic(request) ? publicWindowMs : apiWindowMs),
    keyGenerator: credentialKey,
    allowList: (request) => (isPublic(request) ? !publicOn : !apiOn),
    errorResponseBuilder: (request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      const detail = isPublic(request)
        ? `Too many requests from this client address (TIDINGS_PUBLIC_RATE_LIMIT=${config.publicRateLimitPerS}/s, ` +
          `TIDINGS_PUBLIC_RATE_BURST=${config.publicRateBurst})`
        : 'Too many requests for this credential ' +
          `(TIDINGS_API_RATE_LIMIT=${config.apiRateLimitPerS}/s, TIDINGS_API_RATE_BURST=${config.apiRateBurst})`;
      const headers = { 'retry-after': String(seconds) };
      return new AppError('rate_limited', `${detail}; retry in ${seconds} s`, { headers });
    },
  });
}
