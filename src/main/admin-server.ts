import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../config/config.ts';
import { AppError, wireCode } from '../domain/errors.ts';
import { gatedServerFactory } from '../http/plugins/pipeline-gate.ts';
import { singleFlight } from '../http/plugins/single-flight.ts';
import { notReadyBody } from '../http/routes/health.ts';
import { metricsRequestAllowed } from '../observability/metrics.ts';

/** The settings of the admin server: the API's limits on slow, pipelining and fast callers (ADR 0010, ADR 0021). */
export type AdminServerConfig = Pick<
  Config,
  | 'apiHeadersTimeoutMs'
  | 'apiRequestTimeoutMs'
  | 'apiKeepAliveTimeoutMs'
  | 'apiIdleTimeoutMs'
  | 'apiPipelineDepth'
  | 'apiPipelineQueue'
  | 'publicRateLimitPerS'
  | 'publicRateBurst'
  | 'trustedProxies'
>;

/** What {@link buildAdminServer} serves and with which settings. */
export interface AdminServerOptions {
  readonly logger: FastifyBaseLogger;
  readonly registry: Registry;
  readonly ready: () => Promise<boolean>;
  /** What `/readyz` reports beside its status (a broker transport's state); absent = nothing. */
  readonly readiness?: () => Readonly<Record<string, string>>;
  /** TIDINGS_METRICS_TOKEN: when set, /metrics is served only for that Bearer token. */
  readonly metricsToken?: string | undefined;
  readonly config: AdminServerConfig;
}

const METRICS_TOKEN_DETAIL = 'TIDINGS_METRICS_TOKEN is set: /metrics needs Authorization: Bearer <that token>';

/**
 * The small admin server of a dispatcher-only process: `GET /livez` (the process runs), `GET /readyz`
 * (the database answers and the last claim succeeded; 503 otherwise) and `GET /metrics` (Prometheus text;
 * with `metricsToken`, only for that Bearer token). Its routes are served without a credential, so it keeps
 * the API's edge limits: the header, request, keep-alive and idle timeouts, at most
 * TIDINGS_API_PIPELINE_DEPTH pipelined requests of a connection at once, TIDINGS_PUBLIC_RATE_LIMIT per
 * client address (429 `rate_limited`), and one metrics text built for all the scrapes that ask while it is
 * being built.
 */
export function buildAdminServer(options: AdminServerOptions): FastifyInstance {
  const { config } = options;
  const app = Fastify({
    loggerInstance: options.logger,
    // No line per request (the admin routes are scraped often): through the log controller, as Fastify 5 wants.
    logController: new LogController({ disableRequestLogging: true }),
    serverFactory: gatedServerFactory({ depth: config.apiPipelineDepth, queue: config.apiPipelineQueue }, () => {}),
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
    requestTimeout: config.apiRequestTimeoutMs,
    keepAliveTimeout: config.apiKeepAliveTimeoutMs,
    connectionTimeout: config.apiIdleTimeoutMs,
    http: {
      headersTimeout: config.apiHeadersTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.apiHeadersTimeoutMs / 4))),
    },
  });
  app.setErrorHandler((error, _request, reply) => {
    if (!(error instanceof AppError)) return reply.code(500).send({ code: 'internal_error', detail: 'Internal error' });
    return reply
      .code(error.status)
      .headers(error.headers)
      .send({ code: wireCode(error.code), detail: error.detail });
  });
  if (config.publicRateLimitPerS > 0) {
    const rate = `TIDINGS_PUBLIC_RATE_LIMIT=${config.publicRateLimitPerS}/s`;
    const setting = `${rate}, TIDINGS_PUBLIC_RATE_BURST=${config.publicRateBurst}`;
    void app.register(rateLimit, {
      max: config.publicRateBurst,
      timeWindow: Math.max(1, Math.ceil((config.publicRateBurst / config.publicRateLimitPerS) * 1000)),
      keyGenerator: (request) => normalizeIP(request.ip ?? 'unknown'),
      errorResponseBuilder: (_request, context) => {
        const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
        const detail = `Too many requests from this client address (${setting}); retry in ${seconds} s`;
        return new AppError('rate_limited', detail, { headers: { 'retry-after': String(seconds) } });
      },
    });
  }
  const metricsText = singleFlight(() => options.registry.metrics());
  void app.register(async (routes) => {
    routes.get('/livez', async () => ({ status: 'ok' }));
    routes.get('/readyz', async (_req, reply) => {
      const ok = await options.ready().catch(() => false);
      const parts = options.readiness?.() ?? {};
      if (ok) return { status: 'ready', ...parts };
      return reply.code(503).send(notReadyBody(parts, 'The database cannot be reached or the last claim failed'));
    });
    routes.get('/metrics', async (req, reply) => {
      if (!metricsRequestAllowed(req.headers.authorization, options.metricsToken)) {
        return reply.code(401).send({ code: 'authentication_failed', detail: METRICS_TOKEN_DETAIL });
      }
      return reply.type(options.registry.contentType).send(await metricsText());
    });
  });
  return app;
}
