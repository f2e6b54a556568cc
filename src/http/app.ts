import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Api, HttpDeps } from './deps.ts';
import { installAuth } from './plugins/auth.ts';
import { installAuthFailureLimit } from './plugins/auth-failures.ts';
import { installBodyRate } from './plugins/body-rate.ts';
import { installClientAddress } from './plugins/client-address.ts';
import { limitAddressInProgress, limitCredentialInProgress } from './plugins/in-progress.ts';
import { installFairAdmission } from './plugins/fair-admission.ts';
import { gatedServerFactory, type PipelineStats } from './plugins/pipeline-gate.ts';
import { continueAfterAuthentication, guardConnections } from './plugins/connection-guard.ts';
import { installCors } from './plugins/cors.ts';
import {
  clientErrorHandler,
  frameworkErrors,
  installBodyNotAllowed,
  installEdgeErrors,
  redactUrl,
} from './plugins/edge-errors.ts';
import { createLineSampler, type LineSampler } from './plugins/line-sampler.ts';
import { isClientAbort, logClientAbort } from './plugins/client-aborts.ts';
import { installErrorHandler, schemaErrorMessage } from './plugins/error-handler.ts';
import { installJsonBody } from './plugins/json-body.ts';
import { installPathSegmentCheck } from './plugins/path-segments.ts';
import { lazyChildLogger } from './plugins/lazy-child-logger.ts';
import { installOpenApi } from './plugins/openapi.ts';
import { requestLine } from './plugins/request-line.ts';
import { installRateLimit } from './plugins/rate-limit.ts';
import { installWebUi } from './plugins/web-ui.ts';
import { genRequestId, installRequestId } from './plugins/request-id.ts';
import { registerApiKeyRoutes } from './routes/api-key.ts';
import { registerApplicationCreate } from './routes/application-create.ts';
import { registerApplicationRead } from './routes/application-read.ts';
import { registerApplicationWrite } from './routes/application-write.ts';
import { registerAttemptRead } from './routes/attempt-read.ts';
import { registerAuthRoutes } from './routes/auth-app-portal.ts';
import { registerAuthMe } from './routes/auth-me.ts';
import { registerMessageErase } from './routes/message-erase.ts';
import { registerEndpointCreate } from './routes/endpoint-create.ts';
import { registerEndpointRead } from './routes/endpoint-read.ts';
import { registerEndpointWrite } from './routes/endpoint-write.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerMessageCreate } from './routes/message-create.ts';
import { registerMessageRead } from './routes/message-read.ts';
import { registerEndpointHealth } from './routes/endpoint-health.ts';
import { registerResend } from './routes/resend.ts';
import { registerRetryPolicy } from './routes/retry-policy.ts';
import { registerEndpointAuth } from './routes/endpoint-auth.ts';
import { registerTimeline } from './routes/timeline.ts';
import { registerEndpointFilter } from './routes/endpoint-filter.ts';
import { registerBackgroundTask } from './routes/background-task.ts';
import { registerDeadLetters } from './routes/dead-letters.ts';
import { registerSearch } from './routes/search.ts';
import { registerEndpointHeaders } from './routes/endpoint-headers.ts';
import { registerEndpointReplay } from './routes/endpoint-replay.ts';
import { registerEndpointSecretRotate } from './routes/endpoint-secret-rotate.ts';
import { registerEndpointSendExample } from './routes/endpoint-send-example.ts';
import { registerEndpointStats } from './routes/endpoint-stats.ts';
import { registerEventTypeRead } from './routes/event-type-read.ts';
import { registerEventTypeWrite } from './routes/event-type-write.ts';
import { registerMessageDestinations } from './routes/message-destinations.ts';
import { registerMessageExpunge } from './routes/message-expunge.ts';
import { registerSettings } from './routes/settings.ts';
import { registerStats } from './routes/stats.ts';
import { registerTransport } from './routes/transport.ts';

export type { HttpDeps } from './deps.ts';

/**
 * Longest path parameter, in characters: a 256-character eventId percent-encoded as the official client sends
 * it (encodeURIComponent: up to 9 characters for one UTF-16 unit, `%E2%82%AC` for `€`) fits, so every name the
 * API accepts can be named in a path.
 */
const MAX_PARAM_LENGTH = 256 * 9;

/**
 * One log line per API request — method, url, status and duration, at its end — instead of Fastify's two
 * (an "incoming request" line is half the logging cost of every call and says nothing the last one does not).
 * Credentials in the query string are redacted from the url; refusals (401, 429) are sampled by
 * `refusals`, and clients that went away before their answer (a reset connection, a stream closed early) by
 * `aborts` (both TIDINGS_REFUSAL_LOG_RATE), at info without a stack.
 */
class OneLineLogController extends LogController {
  readonly #refusals: LineSampler;
  readonly #plain: FastifyBaseLogger;
  readonly #aborts: LineSampler;

  /** `plain`: the process logger without redaction, for the completed line only (see {@link requestLine}). */
  constructor(refusals: LineSampler, plain: FastifyBaseLogger, aborts: LineSampler) {
    super();
    this.#refusals = refusals;
    this.#plain = plain;
    this.#aborts = aborts;
  }

  override streamError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    const url = redactUrl(request.url);
    if (isClientAbort(error, request))
      logClientAbort(this.#aborts, request, reply, error, 'client went away while the answer was streamed', url);
    else reply.log.warn({ err: error }, 'response terminated with an error with headers already sent');
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if ((reply.statusCode === 401 || reply.statusCode === 429) && !this.#refusals.take()) return;
    if (error && isClientAbort(error, request)) {
      const url = redactUrl(request.url);
      logClientAbort(this.#aborts, request, reply, error, 'client went away before the answer was sent', url);
      return;
    }
    // An error may carry anything: that line goes through the redacting request logger.
    if (error)
      reply.log.error(
        {
          req: { method: request.method, url: redactUrl(request.url) },
          res: { statusCode: reply.statusCode },
          responseTime: reply.elapsedTime,
          err: error,
        },
        'request errored',
      );
    else this.#plain.info(requestLine(request, reply), 'request completed');
  }
}

/** Version named in the OpenAPI document. */
const API_VERSION = '1.0.0';

/**
 * Builds the HTTP API (docs/design.md#the-http-api) without listening: Bearer auth, request ids, the error handler, the
 * JSON body parser (bodies up to `config.maxBodyBytes`), the OpenAPI document, and one route file per
 * operation. Call `ready()` or `listen()` on the result.
 */
export function buildApp(deps: HttpDeps): FastifyInstance {
  const { config } = deps;
  const refusals = createLineSampler({
    ratePerS: config.refusalLogRatePerS,
    logger: deps.logger,
    kind: 'refused request',
  });
  const aborts = createLineSampler({ ratePerS: config.refusalLogRatePerS, logger: deps.logger, kind: 'client abort' });
  const info = (obj: object, msg: string): void => deps.logger.info(obj, msg);
  let pipelineStats: () => PipelineStats = () => ({ peakRunning: 0, peakWaiting: 0, closed: 0 });
  const fastify = Fastify({
    // Pipelined requests of one connection run at most TIDINGS_API_PIPELINE_DEPTH at once (ADR 0019).
    serverFactory: gatedServerFactory(
      {
        depth: config.apiPipelineDepth,
        queue: config.apiPipelineQueue,
        onClose: (figures) => {
          if (refusals.take())
            info(figures, 'connection closed: more pipelined requests waiting than TIDINGS_API_PIPELINE_QUEUE');
        },
      },
      (stats) => {
        pipelineStats = stats;
      },
    ),
    // The client address of the per-address limits: X-Forwarded-For only from TIDINGS_TRUSTED_PROXIES (proxy-addr).
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : false,
    loggerInstance: deps.logger,
    bodyLimit: config.maxBodyBytes,
    genReqId: genRequestId,
    childLoggerFactory: lazyChildLogger,
    // pino's redaction walks every path of REDACT_PATHS on every line; the completed line holds none of them.
    logController: new OneLineLogController(refusals, deps.logger.child({}, { redact: [] }), aborts),
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Slow clients (ADR 0010): headers, the whole request, idle keep-alive and idle sockets are each bounded.
    requestTimeout: config.apiRequestTimeoutMs,
    keepAliveTimeout: config.apiKeepAliveTimeoutMs,
    connectionTimeout: config.apiIdleTimeoutMs,
    http: {
      headersTimeout: config.apiHeadersTimeoutMs,
      // Node checks the two timeouts above on this period (30 s by default, which would stretch them).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.apiHeadersTimeoutMs / 4))),
      // A missing Host is answered in the error contract by the shape checks, not by Node's empty 400.
      requireHostHeader: false,
    },
    frameworkErrors,
    schemaErrorFormatter: schemaErrorMessage,
    clientErrorHandler: clientErrorHandler(refusals, info),
  });
  const guardStats = guardConnections(fastify.server, config.apiMaxConnections, refusals, info);
  fastify.decorate('connectionStats', () => ({ ...guardStats(), pipeline: pipelineStats() }));
  continueAfterAuthentication(fastify);
  const app: Api = fastify.withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installRequestId(fastify);
  installErrorHandler(fastify, deps.databaseError, aborts);
  installPathSegmentCheck(fastify);
  installJsonBody(fastify, deps.config.maxBodyBytes, deps.config.maxJsonDepth);
  installEdgeErrors(fastify);
  // Per-address and per-credential limits (ADR 0019): addresses before authentication, credentials after it.
  installClientAddress(fastify);
  limitAddressInProgress(fastify, config);
  const authFailures = installAuthFailureLimit(fastify, config);
  installAuth(fastify, deps, authFailures);
  limitCredentialInProgress(fastify, config);
  installBodyNotAllowed(fastify);
  installBodyRate(fastify, config);
  installCors(fastify, deps.config);
  installRateLimit(fastify, deps.config);
  installFairAdmission(fastify, config);
  // A named plugin: Fastify names an anonymous one after its source text, which then reaches traces and errors.
  app.register(async function apiRoutes(scoped) {
    const api = scoped.withTypeProvider<ZodTypeProvider>();
    await installOpenApi(api, API_VERSION);
    registerHealthRoutes(api, deps);
    registerApplicationCreate(api, deps);
    registerApplicationRead(api, deps);
    registerApplicationWrite(api, deps);
    registerEndpointCreate(api, deps);
    registerEndpointRead(api, deps);
    registerEndpointWrite(api, deps);
    registerMessageCreate(api, deps);
    registerMessageRead(api, deps);
    registerAttemptRead(api, deps);
    registerTimeline(api, deps);
    registerResend(api, deps);
    registerEndpointHealth(api, deps);
    registerRetryPolicy(api, deps);
    registerEndpointAuth(api, deps);
    registerApiKeyRoutes(api, deps);
    registerAuthRoutes(api, deps);
    registerAuthMe(api);
    registerEndpointFilter(api, deps);
    registerMessageErase(api, deps);
    registerEventTypeRead(api, deps);
    registerEventTypeWrite(api, deps);
    registerEndpointSecretRotate(api, deps);
    registerEndpointHeaders(api, deps);
    registerEndpointStats(api, deps);
    registerEndpointSendExample(api, deps);
    registerMessageExpunge(api, deps);
    registerMessageDestinations(api, deps);
    registerEndpointReplay(api, deps);
    registerDeadLetters(api, deps);
    registerSearch(api, deps);
    registerBackgroundTask(api, deps);
    registerSettings(api, deps);
    registerStats(api, deps);
    registerTransport(api, deps);
  });
  installWebUi(fastify, deps.config);
  // Replay tasks run in the API process: stepped while the server is up, stopped (after the step in
  // progress) when it closes.
  fastify.addHook('onReady', async () => deps.taskRunner.start());
  fastify.addHook('onClose', async () => deps.taskRunner.stop());
  return fastify;
}
