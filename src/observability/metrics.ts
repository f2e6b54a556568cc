import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Buckets of the time histograms, seconds: 1 ms to 48 h, about three per decade (docs/adr/0013-observability.md).
 * A retry schedule reaches hours, so publish → delivered needs the long end; an attempt needs the short one.
 */
export const TIME_BUCKETS_S: readonly number[] = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 18_000,
  36_000, 86_400, 172_800,
]);

/** Buckets of the batch-size histograms (rows per claim or per record statement). */
export const BATCH_BUCKETS: readonly number[] = Object.freeze([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);

/**
 * The Prometheus metrics of one process (prom-client), served at `/metrics`; docs/reference/metrics.md lists
 * them and a test keeps the two in step. Labels are bounded sets (outcome = an error kind of
 * src/domain/error-kinds.ts or `succeeded`, reason = a dead-letter reason, …): no application or endpoint
 * id is ever a label (ADR 0013).
 */
export interface Metrics {
  readonly registry: Registry;
  readonly messagesPublished: Counter;
  readonly attempts: Counter<'outcome'>;
  readonly deliveriesReclaimed: Counter;
  readonly writesFencedOut: Counter;
  readonly leasesLost: Counter;
  readonly deadLettered: Counter<'reason'>;
  readonly retriesScheduled: Counter;
  readonly breakerTransitions: Counter<'to'>;
  readonly endpointsDisabled: Counter<'trigger'>;
  readonly claimBatchSize: Histogram;
  readonly recordBatchSize: Histogram;
  readonly inFlight: Gauge;
  readonly attemptDuration: Histogram;
  readonly queueWait: Histogram;
  readonly publishToFirstAttempt: Histogram;
  readonly publishToDelivered: Histogram;
  readonly claimErrors: Counter;
  readonly operationalEventsDropped: Counter;
}

/** Makes a fresh registry with every Tidings metric (one per process; tests make their own). */
export function createMetrics(options: { readonly defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'tidings_' });
  const registers = [registry];
  const time = (name: string, help: string) => new Histogram({ name, help, buckets: [...TIME_BUCKETS_S], registers });
  return {
    registry,
    messagesPublished: new Counter({
      name: 'tidings_messages_published_total',
      help: 'Messages accepted by the publish API.',
      registers,
    }),
    attempts: new Counter({
      name: 'tidings_attempts_total',
      help: 'Delivery attempts recorded, by outcome (succeeded or the error kind).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    deliveriesReclaimed: new Counter({
      name: 'tidings_deliveries_reclaimed_total',
      help: 'Deliveries claimed again after their lease expired.',
      registers,
    }),
    writesFencedOut: new Counter({
      name: 'tidings_writes_fenced_out_total',
      help: 'Outcome writes refused because the fencing token no longer matched.',
      registers,
    }),
    leasesLost: new Counter({
      name: 'tidings_leases_lost_total',
      help: 'Lease renewals that matched zero rows.',
      registers,
    }),
    deadLettered: new Counter({
      name: 'tidings_dead_lettered_total',
      help: 'Deliveries that became dead letters, by reason.',
      labelNames: ['reason'] as const,
      registers,
    }),
    retriesScheduled: new Counter({
      name: 'tidings_retries_scheduled_total',
      help: 'Attempts whose outcome was a retry later.',
      registers,
    }),
    breakerTransitions: new Counter({
      name: 'tidings_breaker_transitions_total',
      help: 'Endpoint circuit breakers that opened or closed, by the state entered.',
      labelNames: ['to'] as const,
      registers,
    }),
    endpointsDisabled: new Counter({
      name: 'tidings_endpoints_disabled_total',
      help: 'Endpoints disabled by the dispatcher, by trigger (gone: a 410; automatic: failing for the whole period).',
      labelNames: ['trigger'] as const,
      registers,
    }),
    claimBatchSize: new Histogram({
      name: 'tidings_claim_batch_size',
      help: 'Deliveries leased per claim that leased any.',
      buckets: [...BATCH_BUCKETS],
      registers,
    }),
    recordBatchSize: new Histogram({
      name: 'tidings_record_batch_size',
      help: 'Attempt outcomes written per record statement.',
      buckets: [...BATCH_BUCKETS],
      registers,
    }),
    inFlight: new Gauge({
      name: 'tidings_dispatcher_in_flight',
      help: 'Webhook requests open in this dispatcher (outcomes waiting to be written not counted).',
      registers,
    }),
    attemptDuration: time('tidings_attempt_duration_seconds', 'Duration of each recorded attempt, seconds.'),
    queueWait: time(
      'tidings_queue_wait_seconds',
      'Due time → start of the attempt, of each scheduled attempt recorded, seconds.',
    ),
    publishToFirstAttempt: time(
      'tidings_publish_to_first_attempt_seconds',
      'Publish → start of the first attempt of each delivery, seconds.',
    ),
    publishToDelivered: time(
      'tidings_publish_to_delivered_seconds',
      'Publish → recorded success of each delivery that succeeded, seconds.',
    ),
    claimErrors: new Counter({
      name: 'tidings_claim_errors_total',
      help: 'Claims that failed (database unreachable, ...).',
      registers,
    }),
    operationalEventsDropped: new Counter({
      name: 'tidings_operational_events_dropped_total',
      help: 'Operational events not published because their statement failed (the record they report on committed).',
      registers,
    }),
  };
}

/**
 * Whether a `/metrics` request may read the metrics: always when no TIDINGS_METRICS_TOKEN is set; otherwise
 * only with `Authorization: Bearer <that token>` (compared as SHA-256 digests in constant time).
 */
export function metricsRequestAllowed(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer (.+)$/.exec(authorization ?? '');
  if (match === null) return false;
  const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}
