import { z } from 'zod';
import { int, durationMs, faultPointList, type SettingTable } from '../parse.ts';

/** Logs, the /metrics endpoint, OpenTelemetry traces, and the test-only fault points. */
export const OBSERVABILITY_SETTINGS = {
  metricsToken: {
    env: 'TIDINGS_METRICS_TOKEN',
    schema: z.string().min(16).optional(),
    defaultValue: undefined,
    unit: 'secret',
    description:
      'Bearer token that /metrics requires (API and admin server); any other request gets 401. Unset: /metrics ' +
      'is served without authentication (it carries no application or endpoint identifier).',
  },
  metricsBacklogCap: {
    env: 'TIDINGS_METRICS_BACKLOG_CAP',
    schema: int(1, 100_000_000),
    defaultValue: '1000',
    unit: 'deliveries',
    description:
      'Each backlog gauge count stops here, so a scrape costs the same at any backlog size (the age of the ' +
      'oldest due delivery is exact).',
  },
  metricsBacklogCacheMs: {
    env: 'TIDINGS_METRICS_BACKLOG_CACHE',
    schema: durationMs(0),
    defaultValue: '5s',
    unit: 'duration',
    description:
      'A backlog reading younger than this is served to the next scrapes; concurrent scrapes share one query.',
  },
  logLevel: {
    env: 'TIDINGS_LOG_LEVEL',
    schema: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
    defaultValue: 'info',
    unit: 'level',
    description: 'pino log level.',
  },
  otlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    schema: z.string().url().optional(),
    defaultValue: undefined,
    unit: 'URL',
    description:
      'OpenTelemetry: base URL of the OTLP receiver (traces go to <URL>/v1/traces). Set (or ' +
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_TRACES_EXPORTER=otlp): tracing is on. Unset: off, at no ' +
      'cost. The SDK reads the other OTEL_* variables itself (docs/reference/traces.md).',
  },
  otlpTracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    schema: z.string().url().optional(),
    defaultValue: undefined,
    unit: 'URL',
    description: 'OpenTelemetry: full URL traces are sent to, over OTEL_EXPORTER_OTLP_ENDPOINT. Set: tracing is on.',
  },
  tracesExporter: {
    env: 'OTEL_TRACES_EXPORTER',
    schema: z.string().transform((text) =>
      text
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e !== ''),
    ),
    defaultValue: '',
    unit: 'exporter list',
    description:
      'OpenTelemetry: trace exporters (otlp, console, zipkin, none). Naming one turns tracing on without an ' +
      'endpoint (OTLP then goes to http://localhost:4318); none turns it off.',
  },
  otelSdkDisabled: {
    env: 'OTEL_SDK_DISABLED',
    schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
    defaultValue: 'false',
    unit: 'boolean',
    description: 'OpenTelemetry: true turns tracing off whatever else is set.',
  },
  otelServiceName: {
    env: 'OTEL_SERVICE_NAME',
    schema: z.string().min(1),
    defaultValue: 'tidings',
    unit: 'text',
    description: 'OpenTelemetry: the service.name of every span (with tracing on).',
  },
  testFaultPoints: {
    env: 'TIDINGS_TEST_FAULT_POINTS',
    schema: faultPointList,
    defaultValue: '',
    unit: 'fault points',
    description:
      'Test only (the fault-injection suite, test/faults): arms named fault points, e.g. `after_send:exit` ' +
      '(the process kills itself after a request left, before its outcome is recorded) or ' +
      '`before_record@2:stall_ms=5000`. Points: after_claim, after_send, before_record, after_record (the ' +
      'record committed, before a broker message is acknowledged), before_heartbeat, ' +
      'after_commit_before_response. Never set in production; logged at start-up.',
  },
} satisfies SettingTable;
