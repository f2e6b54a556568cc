import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

/**
 * The small admin server of a dispatcher-only process: `GET /livez` (the process runs), `GET /readyz`
 * (the database answers and the last claim succeeded; 503 otherwise) and `GET /metrics` (Prometheus text).
 */
export function buildAdminServer(options: { readonly logger: FastifyBaseLogger; readonly registry: Registry; readonly ready: () => Promise<boolean> }): FastifyInstance {
  const app = Fastify({ loggerInstance: options.logger, disableRequestLogging: true });
  app.get('/livez', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const ok = await options.ready().catch(() => false);
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready' });
  });
  app.get('/metrics', async (_req, reply) => reply.type(options.registry.contentType).send(await options.registry.metrics()));
  return app;
}
