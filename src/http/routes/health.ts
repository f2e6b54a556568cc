import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';
import { metricsRequestAllowed } from '../../observability/metrics.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { singleFlight } from '../plugins/single-flight.ts';

/**
 * The body of a 503 from `/readyz`, the same on the API and on a dispatcher's admin server: an error's `code` and
 * `detail` (why: the broker when it is not connected, else `otherwise`) with the `status` and parts of a 200.
 */
export function notReadyBody(
  parts: Readonly<Record<string, string>>,
  otherwise: string,
): Readonly<Record<string, string>> {
  const broker =
    parts.broker !== undefined && parts.broker !== 'connected'
      ? `The broker (${parts.transport}) is ${parts.broker}`
      : null;
  return { code: 'service_unavailable', detail: broker ?? otherwise, status: 'not_ready', ...parts };
}

/**
 * Health and operations routes, all without authentication: Svix `GET /api/v1/health` (204 while the API
 * process is up), `GET /livez` (process alive), `GET /readyz` (the database answers; 503
 * `service_unavailable` when not, body of `notReadyBody`), `GET /metrics` (Prometheus text; with
 * TIDINGS_METRICS_TOKEN set, only for that Bearer token).
 */
export function registerHealthRoutes(
  app: Api,
  deps: Pick<HttpDeps, 'ready' | 'readiness' | 'metrics' | 'config'>,
): void {
  app.get(
    '/api/v1/health',
    {
      config: { public: true },
      schema: { tags: ['Health'], summary: 'Health (Svix)', response: { 204: z.null().describe('Up') } },
    },
    async (_request, reply) => {
      return reply.code(204).send(null);
    },
  );

  app.get('/livez', { config: { public: true }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    const ready = await deps.ready().catch(() => false);
    // A broker transport's state is reported, and named when it is why the process is not ready.
    const parts = deps.readiness?.() ?? {};
    if (!ready) return reply.code(503).send(notReadyBody(parts, 'The database cannot be reached'));
    return { status: 'ready', ...parts };
  });

  // Scrapes that arrive while the text is being built share it (ADR 0019).
  const metricsText = singleFlight(() => deps.metrics.registry.metrics());
  app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    if (!metricsRequestAllowed(request.headers.authorization, deps.config.metricsToken))
      throw new AppError(
        'authentication_failed',
        'TIDINGS_METRICS_TOKEN is set: /metrics needs Authorization: Bearer <that token>',
      );
    const text = await metricsText();
    return reply.type(deps.metrics.registry.contentType).send(text);
  });
}
