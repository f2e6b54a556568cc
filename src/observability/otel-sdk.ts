import { diag, DiagLogLevel, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_URL_PATH } from '@opentelemetry/semantic-conventions';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { Config } from '../config/config.ts';
import type { Logger } from '../ports/logger.ts';
import type { Tracer } from '../ports/tracer.ts';
import { createOtelTracer } from './otel-tracer.ts';
import { redactUrlsIn } from './safe-url.ts';

/** Name of the instrumentation scope of Tidings' own spans (delivery and attempt spans). */
export const TRACER_NAME = 'tidings';

/**
 * Paths of the API that get request spans: the API under /api/, but not the health probe. Probes, /metrics
 * scrapes, the web UI's files and the admin server are not traced.
 */
function untraced(route: { readonly url: string }): boolean {
  return !route.url.startsWith('/api/') || route.url.startsWith('/api/v1/health');
}

/** The name of a route handler's span: `handler - {method} {route}` (e.g. `handler - GET /api/v1/app/:appId`). */
export function handlerSpanName(method: string, route: string | undefined): string {
  return `handler - ${method} ${route ?? '(no route)'}`;
}

/**
 * The request spans of the HTTP API (@fastify/otel, registered on every Fastify instance created after the
 * SDK started, through Fastify's `fastify.initialization` diagnostics channel). One span per request, named
 * `{method} {route}` (HTTP server semantic conventions) with a child span for the route handler named by
 * {@link handlerSpanName} (@fastify/otel names it after the handler function, else after the plugin that
 * registered it, whose name Fastify takes from the plugin's source text for an anonymous function); no span
 * per lifecycle hook; `url.path` without the query string (it may carry a credential); exceptions not
 * recorded (an error message may quote a request's data).
 */
function requestInstrumentation(): FastifyOtelInstrumentation {
  return new FastifyOtelInstrumentation({
    registerOnInitialization: true,
    instrumentHooks: false,
    recordExceptions: false,
    ignorePaths: untraced,
    requestHook: (span, request) => {
      span.setAttribute(ATTR_URL_PATH, request.url.split('?', 1)[0] ?? '');
      if (request.routeOptions.url !== undefined) span.updateName(`${request.method} ${request.routeOptions.url}`);
    },
    lifecycleHook: (span, info) => {
      if (info.hookName !== 'handler') return;
      const name = handlerSpanName(info.request.method, info.request.routeOptions.url);
      span.updateName(name);
      span.setAttributes({ 'hook.name': name, 'hook.callback.name': name });
    },
  });
}

/** A started SDK: the tracer on it, and how to flush and stop it. */
export interface OtelSdk {
  readonly tracer: Tracer;
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry Node SDK (global: the caller starts it once per process). It configures itself
 * from the process environment (OTEL_* variables: exporter, protocol, endpoint, headers, sampler, batch
 * processor; docs/reference/traces.md); no metrics or logs are exported through it. The SDK's own warnings
 * and errors (an export that failed) go to `logger` at warn.
 */
export function startOtelSdk(config: Pick<Config, 'otelServiceName'>, logger: Logger): OtelSdk {
  // An exporter's error may quote its URL, credentials included: URLs are shown without them.
  const warn = (message: string, ...args: unknown[]): void =>
    logger.warn({ detail: redactUrlsIn(args.map(String).join(' ')) }, `opentelemetry: ${redactUrlsIn(message)}`);
  diag.setLogger(
    { error: warn, warn, info: () => undefined, debug: () => undefined, verbose: () => undefined },
    DiagLogLevel.WARN,
  );
  const sdk = new NodeSDK({
    serviceName: config.otelServiceName,
    instrumentations: [requestInstrumentation()],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { tracer: createOtelTracer(trace.getTracer(TRACER_NAME)), shutdown: () => sdk.shutdown() };
}
