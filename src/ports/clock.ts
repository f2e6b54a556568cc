/**
 * Time seam (docs/design.md#the-protocol). Pure code gets instants from here; SQL gets `sqlNow()` as `$now`.
 */
export interface Clock {
  /** Current instant, Unix ms. Used for webhook-timestamp and durations. */
  nowMs(): number;
  /**
   * The instant SQL should treat as "now": null in production (SQL then uses `clock_timestamp()`, the
   * database clock), a fixed instant under a test clock.
   */
  sqlNow(): Date | null;
}

/** Uniform random source. `next()` is in [0, 1). Production uses a cryptographic source. */
export interface Random {
  next(): number;
}
