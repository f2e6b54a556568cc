/**
 * Installation statistics read from the deliveries, endpoints, background tasks and the timeline
 * (docs/adr/0013-observability.md). A `scope` narrows every figure to one application or one endpoint;
 * `appId: null` is the whole installation.
 */

/** What a statistics read covers: ids, already resolved and authorized by the caller. */
export interface StatsScope {
  readonly appId: string | null;
  readonly endpointId: string | null;
}

/** Deliveries by state (docs/design.md#delivery-lifecycle). */
export interface DeliveryStateCounts {
  readonly pending: number;
  readonly leased: number;
  readonly succeeded: number;
  readonly dead: number;
  readonly skipped: number;
  readonly canceled: number;
}

/** The waiting work at one instant. */
export interface Backlog {
  /** Pending deliveries whose due time has come and that no hold of their endpoint keeps back. */
  readonly dueNow: number;
  /** Age of the oldest of {@link dueNow} (now − its due time), ms; null when nothing is due. */
  readonly oldestDueAgeMs: number | null;
  /** Leased deliveries whose lease has not expired (attempts in flight). */
  readonly leasedInFlight: number;
  /** Pending deliveries due later (retries in back-off); held deliveries of paused endpoints excluded. */
  readonly scheduledLater: number;
  /**
   * Pending deliveries held back by their endpoint: every delivery of a paused endpoint, and those due now
   * whose endpoint's breaker is not closed or whose endpoint a receiver's Retry-After throttles
   * (src/adapters/postgres/delivery-holds.ts). The sum of {@link heldBy}.
   */
  readonly held: number;
  /** {@link held} by what holds them. */
  readonly heldBy: { readonly paused: number; readonly breaker: number; readonly throttled: number };
}

/** The overview of an installation or an application. */
export interface StatsOverview {
  readonly deliveries: DeliveryStateCounts;
  readonly backlog: Backlog;
  /** Transitions into `dead` during the last 24 hours (timeline rows). */
  readonly deadLettersLast24h: number;
  /** Endpoints whose breaker is open or half-open; `endpointIds` holds at most `limit` of them, oldest change first. */
  readonly openBreakers: { readonly count: number; readonly endpointIds: readonly string[] };
  /** Background tasks (replay, recover, erasure) still running. */
  readonly runningTasks: number;
}

/** p50 / p90 / p99 of a duration, ms (null when `count` is 0), over `count` samples. */
export interface Percentiles {
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly count: number;
}

/** One bucket of the attempts series: attempts recorded in [at, at + bucketMs). */
export interface SeriesPoint {
  readonly at: Date;
  readonly attempts: number;
  readonly succeeded: number;
  readonly failed: number;
}

/**
 * Time-in-state figures over the window (since, until]. Counts are exact; percentiles are estimated from
 * fixed log-scale histograms, within PERCENTILE_RELATIVE_ERROR (src/domain/duration-histogram.ts) of the
 * exact `percentile_cont` figures (docs/adr/0015-time-in-state-rollups.md).
 */
export interface TimeInState {
  /** claimed instant − due time of every first claim of a due delivery ('leased'/'claimed' rows). */
  readonly queueWaitMs: Percentiles;
  /** Duration of every recorded attempt (timeline rows that carry a latency). */
  readonly attemptLatencyMs: Percentiles;
  /** Publish → success of every delivery that succeeded in the window. */
  readonly timeToDeliveredMs: Percentiles;
  /** Attempts recorded, and of them those that succeeded. */
  readonly attempts: number;
  readonly succeeded: number;
  /** Attempts whose outcome was a scheduled retry. */
  readonly retriesScheduled: number;
  /** Transitions into `dead`. */
  readonly deadLetterInflow: number;
  /** Claims of an expired lease (a dispatcher died or stalled). */
  readonly reclaims: number;
  /**
   * Attempts per bucket of `bucketMs`, buckets aligned to multiples of `bucketMs` since the Unix epoch, oldest first.
   */
  readonly series: readonly SeriesPoint[];
}

/** Reads statistics. `now` is the instant of "now" (null = the database clock). */
export interface StatsStore {
  /** @param breakerListLimit most endpoint ids listed under openBreakers */
  overview(scope: StatsScope, now: Date | null, breakerListLimit: number): Promise<StatsOverview>;
  /**
   * Time-in-state over (since, until]. `bucketMs` divides the series.
   * @throws nothing beyond database errors
   */
  timeInState(scope: StatsScope, since: Date, until: Date, bucketMs: number): Promise<TimeInState>;
}

/**
 * The bucket widths the time-in-state rollups are kept at, and for how long (docs/adr/0015-time-in-state-rollups.md).
 * A read uses the finest level that divides its series bucket and is kept for its whole window: 1 s for
 * 5 min, 10 s for 1 h, 1 min for 24 h, 15 min for 7 d — a few hundred rollup rows per read.
 */
export const ROLLUP_LEVELS: readonly { readonly levelMs: number; readonly keepMs: number }[] = Object.freeze([
  Object.freeze({ levelMs: 1_000, keepMs: 10 * 60_000 }),
  Object.freeze({ levelMs: 10_000, keepMs: 2 * 3_600_000 }),
  Object.freeze({ levelMs: 60_000, keepMs: 25 * 3_600_000 }),
  Object.freeze({ levelMs: 900_000, keepMs: 8 * 86_400_000 }),
]);

/**
 * The rollup level a time-in-state read over `windowMs` with series buckets of `bucketMs` uses: the finest
 * of {@link ROLLUP_LEVELS} that divides `bucketMs` and is kept at least `windowMs` plus one level longer;
 * null when none is (the read then counts raw timeline rows only).
 */
export function rollupLevelFor(windowMs: number, bucketMs: number): number | null {
  for (const l of ROLLUP_LEVELS) if (bucketMs % l.levelMs === 0 && l.keepMs >= windowMs + l.levelMs) return l.levelMs;
  return null;
}

/** What one roll-up step did. */
export interface RollupStep {
  /** False when another process held the roll-up (nothing was done). */
  readonly ran: boolean;
  /** Timeline ids folded into the rollups by this step (the watermark's move). */
  readonly rolledIds: number;
  /** The watermark after the step: every timeline row with an id up to it is counted in the rollups. */
  readonly rolledId: number;
  /** True when no committed timeline row above the watermark could be folded yet (run again later). */
  readonly caughtUp: boolean;
}

/**
 * Folds timeline rows into the time-in-state rollups, from a watermark over timeline ids
 * (docs/adr/0015-time-in-state-rollups.md). One step is one short transaction; steps of several processes
 * are serialized by a row lock (a process that finds it taken does nothing).
 */
export interface StatsRollup {
  /**
   * Folds at most `maxIds` timeline ids above the watermark, of rows whose writers have all finished, and
   * prunes rollup rows older than their level's keep. `now` is the instant of "now" (null = database clock).
   * @throws nothing beyond database errors
   */
  step(now: Date | null, maxIds: number): Promise<RollupStep>;
}

/**
 * The waiting work, as one backlog query reads it (each count stops at the cap: the cap of
 * TIDINGS_METRICS_BACKLOG_CAP).
 */
export interface BacklogReading {
  /** Pending deliveries due now. */
  readonly due: number;
  /** Pending deliveries due later (back-off), paused endpoints' held deliveries excluded. */
  readonly scheduled: number;
  /** Pending deliveries held by a paused endpoint. */
  readonly held: number;
  /** Leased deliveries with a live lease. */
  readonly leased: number;
  /** Endpoints whose breaker is open or half-open. */
  readonly breakersOpen: number;
  /** now − due time of the oldest due delivery, ms; 0 when none is due. */
  readonly oldestDueAgeMs: number;
}
