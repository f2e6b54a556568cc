import { diag, DiagLogLevel, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_URL_PATH } from '@opentelemetry/semantic-conventions';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { Config } from '../config/config.ts';
import type { Logger } from '../ports/logger.ts';
import { NOOP_TRACER, type Tracer } from '../ports/tracer.ts';
import { createOtelTracer } from './otel-tracer.ts';

/** Name of the instrumentation scope of Tidings' own spans (delivery and attempt spans). */
export const TRACER_NAME = 'tidings';

/** Tracing of this process: the tracer to hand to the dispatcher and the publisher, and how to flush it. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Exports the spans still buffered and stops the SDK (graceful stop); a no-op when tracing is off. */
  shutdown(): Promise<void>;
}

/**
 * Whether tracing is on (docs/reference/traces.md): never with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER
 * starting with `none` (the SDK's own rule); otherwise when OTEL_TRACES_EXPORTER names an exporter or an OTLP
 * endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Off by default.
 */
export function tracingEnabled(config: Pick<Config, 'otelSdkDisabled' | 'tracesExporter' | 'otlpEndpoint' | 'otlpTracesEndpoint'>): boolean {
  if (config.otelSdkDisabled) return false;
  const exporters = config.tracesExporter;
  if (exporters[0] === 'none') return false;
  if (exporters.length > 0) return true;
  return config.otlpEndpoint !== undefined || config.otlpTracesEndpoint !== undefined;
}

/**
 * Paths of the API that get request spans: the API under /api/, but not the health probe. Probes, /metrics
 * scrapes, the web UI's files and the admin server are not traced.
 */
function untraced(route: { readonly url: string }): boolean {
  return !route.url.startsWith('/api/') || route.url.startsWith('/api/v1/health');
}

/**
 * The request spans of the HTTP API (@fastify/otel, registered on every Fastify instance created after the
 * SDK started, through Fastify's `fastify.initialization` diagnostics channel). One span per request, named
 * `{method} {route}` (HTTP server semantic conventions) with a child span for the route handler; no span per
 * lifecycle hook; `url.path` without the query string (it may carry a credential); exceptions not recorded
 * (an error message may quote a request's data).
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
  });
}

let active: { readonly sdk: NodeSDK; readonly tracer: Tracer; users: number } | undefined;

/**
 * Starts tracing when the configuration asks for it ({@link tracingEnabled}), else returns the no-op
 * tracer. Must run before the HTTP API's Fastify instance is created. The OpenTelemetry Node SDK configures
 * itself from the process environment (OTEL_* variables: exporter, protocol, endpoint, headers, sampler,
 * batch processor; docs/reference/traces.md); no metrics or logs are exported through it. The SDK is
 * global: a second call in the same process shares it, and the last `shutdown` stops it. The SDK's own
 * warnings and errors (an export that failed) go to `logger` at warn.
 */
export function startTracing(config: Config, logger: Logger): Tracing {
  if (!tracingEnabled(config)) return { tracer: NOOP_TRACER, shutdown: () => Promise.resolve() };
  if (active === undefined) {
    const warn = (message: string, ...args: unknown[]): void => logger.warn({ detail: args.map(String).join(' ') }, `opentelemetry: ${message}`);
    diag.setLogger({ error: warn, warn, info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
    const sdk = new NodeSDK({ serviceName: config.otelServiceName, instrumentations: [requestInstrumentation()], metricReaders: [], logRecordProcessors: [] });
    sdk.start();
    active = { sdk, tracer: createOtelTracer(trace.getTracer(TRACER_NAME)), users: 0 };
  }
  const mine = active;
  mine.users += 1;
  let closed = false;
  return {
    tracer: mine.tracer,
    async shutdown() {
      if (closed) return;
      closed = true;
      mine.users -= 1;
      if (mine.users > 0) return;
      if (active === mine) active = undefined;
      await mine.sdk.shutdown();
    },
  };
}
