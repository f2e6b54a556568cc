import { Gauge, type Registry } from 'prom-client';
import type { BacklogReading } from '../ports/stats-store.ts';

/** Options of {@link registerBacklogGauges}. */
export interface BacklogGaugeOptions {
  /** Runs the one backlog query; `cap` bounds each count (its cost stays flat past the cap). */
  readonly read: (cap: number) => Promise<BacklogReading>;
  /** TIDINGS_METRICS_BACKLOG_CAP: counts stop here. */
  readonly cap: number;
  /** TIDINGS_METRICS_BACKLOG_CACHE: a reading younger than this is served again, ms. */
  readonly cacheMs: number;
  /** Monotonic time, ms (tests steer it). */
  readonly nowMs: () => number;
  /** Told when the query fails (the gauges then keep their last values). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Registers the backlog gauges on `registry` (docs/reference/metrics.md): each scrape uses a reading at
 * most `cacheMs` old; concurrent scrapes share one query in flight. A failed query leaves the last values
 * and is retried by the next scrape.
 * @returns `refresh()`, which runs the query now (shared with a scrape in flight) and resolves when done
 */
export function registerBacklogGauges(registry: Registry, options: BacklogGaugeOptions): { refresh(): Promise<void> } {
  let last: { at: number; reading: BacklogReading } | null = null;
  let inFlight: Promise<void> | null = null;
  const query = (): Promise<void> => {
    inFlight ??= options
      .read(options.cap)
      .then(
        (reading) => {
          last = { at: options.nowMs(), reading };
        },
        (error: unknown) => {
          options.onError?.(error);
        },
      )
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
  const current = async (): Promise<BacklogReading | null> => {
    if (last === null || options.nowMs() - last.at >= options.cacheMs) await query();
    return last?.reading ?? null;
  };
  const deliveries = new Gauge({
    name: 'tidings_backlog_deliveries',
    help:
      'Waiting deliveries by kind: due (pending, due now), scheduled (pending, due later), held (paused ' +
      'endpoint), leased (live lease). Each count stops at tidings_backlog_count_cap.',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      const r = await current();
      if (r === null) return;
      for (const kind of ['due', 'scheduled', 'held', 'leased'] as const) this.set({ kind }, r[kind]);
    },
  });
  new Gauge({
    name: 'tidings_backlog_oldest_due_age_seconds',
    help: 'now − due time of the oldest due delivery, seconds (0 when none is due).',
    registers: [registry],
    async collect() {
      const r = await current();
      if (r !== null) this.set(r.oldestDueAgeMs / 1000);
    },
  });
  new Gauge({
    name: 'tidings_breakers_open',
    help: 'Endpoints whose circuit breaker is open or half-open (stops at tidings_backlog_count_cap).',
    registers: [registry],
    async collect() {
      const r = await current();
      if (r !== null) this.set(r.breakersOpen);
    },
  });
  new Gauge({
    name: 'tidings_backlog_count_cap',
    help: 'The value at which each tidings_backlog_deliveries count stops (TIDINGS_METRICS_BACKLOG_CAP).',
    registers: [registry],
  }).set(options.cap);
  void deliveries;
  return { refresh: query };
}
