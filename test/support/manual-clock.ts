import type { Clock } from '../../src/ports/clock.ts';

/** 2026-01-01T00:00:00Z in Unix ms: the default start of a {@link ManualClock}. */
export const DEFAULT_CLOCK_START_MS = Date.UTC(2026, 0, 1);

/**
 * A {@link Clock} that moves only when the test moves it (time is steered through a
 * seam, never by sleeping).
 *
 * `nowMs()` is the instant in Unix ms; `sqlNow()` is the same instant as a `Date`, which the stores pass
 * to SQL as `$now` instead of `clock_timestamp()`, so lease expiry and due times follow this clock.
 */
export class ManualClock implements Clock {
  #nowMs: number;

  /** @param startMs initial instant, Unix ms (default {@link DEFAULT_CLOCK_START_MS}). */
  constructor(startMs: number = DEFAULT_CLOCK_START_MS) {
    this.#nowMs = checkInstant(startMs);
  }

  /** The current instant, Unix ms. */
  nowMs(): number {
    return this.#nowMs;
  }

  /** The current instant as a new `Date` (never null: SQL must use this instant, not the database clock). */
  sqlNow(): Date {
    return new Date(this.#nowMs);
  }

  /**
   * Moves the clock forward.
   * @param ms milliseconds, finite and ≥ 0 (a clock under test never runs backwards by accident; use
   *   {@link ManualClock.set} to jump to an earlier instant on purpose).
   * @returns the new instant, Unix ms.
   * @throws RangeError when `ms` is negative or not finite.
   */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`ManualClock.advance: ${ms} is not a finite, non-negative number of ms`);
    this.#nowMs += ms;
    return this.#nowMs;
  }

  /**
   * Jumps to an instant (forward or backward).
   * @param ms Unix ms, finite.
   * @throws RangeError when `ms` is not finite.
   */
  set(ms: number): void {
    this.#nowMs = checkInstant(ms);
  }
}

function checkInstant(ms: number): number {
  if (!Number.isFinite(ms)) throw new RangeError(`ManualClock: ${ms} is not a finite instant in ms`);
  return ms;
}
