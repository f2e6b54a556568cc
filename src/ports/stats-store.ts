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
  /** Pending deliveries whose due time has come. */
  readonly dueNow: number;
  /** Age of the oldest due delivery (now − its due time), ms; null when nothing is due. */
  readonly oldestDueAgeMs: number | null;
  /** Leased deliveries whose lease has not expired (attempts in flight). */
  readonly leasedInFlight: number;
  /** Pending deliveries due later (retries in back-off); held deliveries of paused endpoints excluded. */
  readonly scheduledLater: number;
  /** Pending deliveries held by a paused endpoint (due at 'infinity'). */
  readonly held: number;
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

/** Time-in-state figures over the window (since, until]. */
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
  /** Attempts per bucket of `bucketMs`, buckets aligned to multiples of `bucketMs` since the Unix epoch, oldest first. */
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

/** The waiting work, as one backlog query reads it (each count stops at the cap: the cap of TIDINGS_METRICS_BACKLOG_CAP). */
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
