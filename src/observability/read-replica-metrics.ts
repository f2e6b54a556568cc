import { Gauge, type Registry } from 'prom-client';
import { upGauge, zeroedCounter } from './metric-kinds.ts';

/** The reasons a read meant for the replica ran on the primary (a closed set: the label's values). */
export const READ_FALLBACK_REASONS = ['unavailable', 'lagging', 'lag_unknown'] as const;

/** One of {@link READ_FALLBACK_REASONS}. */
export type ReadFallbackReason = (typeof READ_FALLBACK_REASONS)[number];

/** What the gauges read at each scrape. */
export interface ReadReplicaState {
  /** Whether the last check reached the replica. */
  up(): boolean;
  /** The bound on the replica's staleness now, ms; null = unknown or down. */
  lagNowMs(): number | null;
}

/**
 * Registers the read replica's metrics on `registry` (docs/reference/metrics.md), for a process that routes reads
 * to one (TIDINGS_READ_DATABASE_URL): a counter of the reads that ran on the primary instead, by reason (every
 * reason starts at 0, so a rate over it is defined from the first scrape), the replica's reachability and the bound
 * on its staleness.
 * @returns `fallback(reason)`, to count one such read
 */
export function registerReadReplicaMetrics(
  registry: Registry,
  state: ReadReplicaState,
): { fallback(reason: ReadFallbackReason): void } {
  const fallbacks = zeroedCounter(
    registry,
    {
      name: 'tidings_read_replica_fallback_total',
      help:
        'Reads meant for the read replica that ran on the primary, by reason: unavailable (down, or the read was ' +
        'cancelled by recovery), lagging (past TIDINGS_READ_MAX_LAG), lag_unknown.',
    },
    'reason',
    READ_FALLBACK_REASONS,
  );
  upGauge(
    registry,
    { name: 'tidings_read_replica_up', help: '1 when the last lag check reached the read replica, else 0.' },
    () => state.up(),
  );
  new Gauge({
    name: 'tidings_read_replica_lag_seconds',
    registers: [registry],
    help:
      "Upper bound of the read replica's staleness now: the last check's plus the time since, seconds " +
      '(NaN when unknown or down).',
    collect() {
      const lag = state.lagNowMs();
      this.set(lag === null ? Number.NaN : lag / 1000);
    },
  });
  return { fallback: (reason) => fallbacks.inc({ reason }) };
}
