import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The Prometheus metrics of one process (prom-client), served at `/metrics`. The counts the guarantee
 * depends on (reclaimed, fenced out, lease lost) are here (DESIGN §3).
 */
export interface Metrics {
  readonly registry: Registry;
  readonly messagesPublished: Counter<'app'>;
  readonly attempts: Counter<'outcome'>;
  readonly deliveriesReclaimed: Counter;
  readonly writesFencedOut: Counter;
  readonly leasesLost: Counter;
  readonly deadLettered: Counter<'reason'>;
  readonly inFlight: Gauge;
  readonly attemptDuration: Histogram;
  readonly claimErrors: Counter;
}

/** Makes a fresh registry with every Tidings metric (one per process; tests make their own). */
export function createMetrics(options: { readonly defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'tidings_' });
  const registers = [registry];
  return {
    registry,
    messagesPublished: new Counter({ name: 'tidings_messages_published_total', help: 'Messages accepted by the publish API.', labelNames: ['app'] as const, registers }),
    attempts: new Counter({ name: 'tidings_attempts_total', help: 'Delivery attempts recorded, by outcome (succeeded or the error kind).', labelNames: ['outcome'] as const, registers }),
    deliveriesReclaimed: new Counter({ name: 'tidings_deliveries_reclaimed_total', help: 'Deliveries claimed again after their lease expired.', registers }),
    writesFencedOut: new Counter({ name: 'tidings_writes_fenced_out_total', help: 'Outcome writes refused because the fencing token no longer matched.', registers }),
    leasesLost: new Counter({ name: 'tidings_leases_lost_total', help: 'Lease renewals that matched zero rows.', registers }),
    deadLettered: new Counter({ name: 'tidings_dead_lettered_total', help: 'Deliveries that became dead letters, by reason.', labelNames: ['reason'] as const, registers }),
    inFlight: new Gauge({ name: 'tidings_dispatcher_in_flight', help: 'Attempts in flight in this dispatcher.', registers }),
    attemptDuration: new Histogram({ name: 'tidings_attempt_duration_seconds', help: 'Duration of delivery attempts, seconds.', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers }),
    claimErrors: new Counter({ name: 'tidings_claim_errors_total', help: 'Claims that failed (database unreachable, ...).', registers }),
  };
}
