import type { Config } from '../config/config.ts';
import type { Logger } from '../ports/logger.ts';
import { NOOP_TRACER, type Tracer } from '../ports/tracer.ts';
import type { OtelSdk } from './otel-sdk.ts';

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
export function tracingEnabled(
  config: Pick<Config, 'otelSdkDisabled' | 'tracesExporter' | 'otlpEndpoint' | 'otlpTracesEndpoint'>,
): boolean {
  if (config.otelSdkDisabled) return false;
  const exporters = config.tracesExporter;
  if (exporters[0] === 'none') return false;
  if (exporters.length > 0) return true;
  return config.otlpEndpoint !== undefined || config.otlpTracesEndpoint !== undefined;
}

let active: { readonly sdk: Promise<OtelSdk>; users: number } | undefined;

/**
 * Starts tracing when the configuration asks for it ({@link tracingEnabled}), else returns the no-op tracer
 * and loads nothing of OpenTelemetry (the SDK's modules take seconds and tens of MB to load). Must complete
 * before the HTTP API's Fastify instance is created (its request spans hook into the creation). The SDK is
 * global: a second call in the same process shares it, and the last `shutdown` stops it.
 * @see startOtelSdk (src/observability/otel-sdk.ts) for what the SDK reads and exports
 */
export async function startTracing(config: Config, logger: Logger): Promise<Tracing> {
  if (!tracingEnabled(config)) return { tracer: NOOP_TRACER, shutdown: () => Promise.resolve() };
  active ??= { sdk: import('./otel-sdk.ts').then((m) => m.startOtelSdk(config, logger)), users: 0 };
  const mine = active;
  mine.users += 1;
  let sdk: OtelSdk;
  try {
    sdk = await mine.sdk;
  } catch (error) {
    if (active === mine) active = undefined;
    throw error;
  }
  let closed = false;
  return {
    tracer: sdk.tracer,
    async shutdown() {
      if (closed) return;
      closed = true;
      mine.users -= 1;
      if (mine.users > 0) return;
      if (active === mine) active = undefined;
      await sdk.shutdown();
    },
  };
}
