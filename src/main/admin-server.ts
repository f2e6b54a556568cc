import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { metricsRequestAllowed } from '../observability/metrics.ts';

/**
 * The small admin server of a dispatcher-only process: `GET /livez` (the process runs), `GET /readyz`
 * (the database answers and the last claim succeeded; 503 otherwise) and `GET /metrics` (Prometheus text; with `metricsToken`, only for that Bearer token).
 */
export function buildAdminServer(options: { readonly logger: FastifyBaseLogger; readonly registry: Registry; readonly ready: () => Promise<boolean>; readonly metricsToken?: string | undefined }): FastifyInstance {
  const app = Fastify({ loggerInstance: options.logger, disableRequestLogging: true });
  app.get('/livez', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const ok = await options.ready().catch(() => false);
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready' });
  });
  app.get('/metrics', async (req, reply) => {
    if (!metricsRequestAllowed(req.headers.authorization, options.metricsToken)) return reply.code(401).send({ code: 'authentication_failed', detail: 'TIDINGS_METRICS_TOKEN is set: /metrics needs Authorization: Bearer <that token>' });
    return reply.type(options.registry.contentType).send(await options.registry.metrics());
  });
  return app;
}
