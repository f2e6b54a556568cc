import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.ts';

/** Request headers a browser may send to the API. */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'x-request-id'];
/** Response headers a browser script may read. */
const EXPOSED_HEADERS = ['retry-after', 'x-request-id', 'idempotent-replayed'];

/**
 * CORS (docs/guides/security.md): off unless TIDINGS_CORS_ORIGINS names origins (or `*`); then @fastify/cors answers
 * preflight requests (which carry no credentials, so they skip authentication) and adds the CORS headers for
 * those origins only. Credentials are Bearer tokens, never cookies, so `credentials` stays off.
 */
export function installCors(app: FastifyInstance, config: Pick<Config, 'corsOrigins'>): void {
  if (config.corsOrigins.length === 0) return;
  app.register(cors, {
    origin: config.corsOrigins.includes('*') ? '*' : [...config.corsOrigins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
}
