/**
 * Endpoint health and operator flow control (docs/adr/0004-endpoint-flow-control.md): pause / resume, limits, and the
 * health read model. Instants are Dates (database clock); durations and latencies in ms.
 */
/**
 * `actor` (pause, resume, probe, close): who asked, as the history reason names it ("the operator", "a portal
 * token of the application", "an API key of the application"); see actorOf in src/app/endpoint-health.ts.
 */
export interface EndpointHealthStore {
  /**
   * Pauses an active endpoint: its deliveries are held pending (due at 'infinity') without attempts and
   * nothing is skipped; new messages wait too. Idempotent. Returns false when the endpoint does not exist.
   * @throws AppError `conflict` when the endpoint is disabled (enable it first)
   */
  pause(endpointId: string, now: Date | null, actor: string): Promise<boolean>;
  /** Resumes a paused endpoint: held deliveries become due now. Idempotent. False when it does not exist. */
  resume(endpointId: string, now: Date | null, actor: string): Promise<boolean>;
  /**
   * Ends an open breaker's cool-down now, so that the next claim sends exactly one probe (its outcome closes
   * or re-opens the breaker), with a health-history row `breaker_probe_requested`; wakes dispatchers. A
   * half-open or closed breaker is left alone. Returns the breaker state before, or null when the endpoint
   * does not exist.
   */
  probeNow(endpointId: string, now: Date | null, actor: string): Promise<BreakerState | null>;
  /**
   * Closes the breaker (failure streak and cool-down growth back to zero), with a health-history row
   * `breaker_closed` (reason "closed by <actor>"); wakes dispatchers. A closed breaker is left alone.
   * Returns the breaker state before, or null when the endpoint does not exist.
   */
  closeBreaker(endpointId: string, now: Date | null, actor: string): Promise<BreakerState | null>;
  /** Sets the per-endpoint limits (null = unlimited). False when the endpoint does not exist. */
  setLimits(endpointId: string, limits: EndpointLimits): Promise<boolean>;
  /** The endpoint's health now and over recent windows, or null when it does not exist. */
  health(endpointId: string, now: Date | null): Promise<EndpointHealth | null>;
}

/** Per-endpoint limits enforced by the claim across all dispatchers. */
export interface EndpointLimits {
  /** Requests in flight at most. */
  readonly maxInFlight: number | null;
  /** Requests per second (token bucket refill). */
  readonly rateLimitPerS: number | null;
  /** Bucket size; null = one second's worth. */
  readonly rateBurst: number | null;
}

/** Attempt figures over one recent window. */
export interface HealthWindow {
  readonly windowS: number;
  readonly attempts: number;
  readonly succeeded: number;
  readonly failed: number;
  /** succeeded / attempts, or null without attempts. */
  readonly successRatio: number | null;
  readonly p50LatencyMs: number | null;
  readonly p99LatencyMs: number | null;
  /** Attempts answered with a redirect (3xx; never followed, so each is a failed attempt). */
  readonly redirects: number;
}

/** A circuit breaker's state (docs/adr/0004-endpoint-flow-control.md). */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** The health read model of one endpoint. */
export interface EndpointHealth {
  readonly status: 'active' | 'paused' | 'disabled';
  readonly statusReason: string | null;
  readonly statusChangedAt: Date | null;
  readonly breaker: {
    readonly state: BreakerState;
    readonly consecutiveFailures: number;
    readonly openUntil: Date | null;
    readonly openedInARow: number;
    readonly changedAt: Date | null;
  };
  readonly failingSince: Date | null;
  readonly lastSuccessAt: Date | null;
  readonly throttledUntil: Date | null;
  readonly limits: EndpointLimits;
  /** Live leases now (attempts in flight across all dispatchers). */
  readonly inFlight: number;
  /** Attempts started in the last second. */
  readonly currentRatePerS: number;
  /** Deliveries by state. */
  readonly deliveries: Readonly<Record<string, number>>;
  readonly windows: readonly HealthWindow[];
  /** The latest attempt of the last 24 h answered with a redirect, with its Location; null when none. */
  readonly lastRedirect: { readonly at: Date; readonly statusCode: number; readonly location: string | null } | null;
  /** Latest health events (breaker transitions, disable, pause/resume), newest first. */
  readonly history: readonly { readonly kind: string; readonly reason: string | null; readonly at: Date }[];
}
