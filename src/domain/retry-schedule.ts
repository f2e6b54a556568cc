import type { Classification } from './attempt-outcome.ts';
import { DeadReason } from './delivery-state.ts';

/**
 * Retry policy (docs/design.md#retries-and-endpoint-health). All durations in milliseconds.
 *
 * `delaysMs[i]` is the wait after the (i+1)-th failed attempt, so a delivery gets `delaysMs.length + 1`
 * attempts in all: the first one immediately, then one after each delay. Default (Svix's schedule):
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h → 8 attempts.
 */
export interface RetryPolicy {
  readonly delaysMs: readonly number[];
  /** Jitter as a fraction: 0.2 means each delay is drawn uniformly from [0.8·d, 1.2·d]. */
  readonly jitter: number;
  /** Retry-After values are clamped to [retryAfterMinMs, retryAfterMaxMs]. */
  readonly retryAfterMinMs: number;
  readonly retryAfterMaxMs: number;
  /**
   * Attempts in all, the first included (a retry policy's `maxAttempts`, src/domain/retry-policy.ts). Absent:
   * `delaysMs.length + 1`. Past the end of `delaysMs` the last delay repeats.
   */
  readonly maxAttempts?: number;
}

/** The default schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; ±20 % jitter. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  delaysMs: Object.freeze([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]),
  jitter: 0.2,
  retryAfterMinMs: 1_000,
  retryAfterMaxMs: 3_600_000,
});

/** What happens to a delivery after one attempt. `delayMs` is added to the database clock by SQL. */
export type NextStep =
  | { readonly next: 'succeeded' }
  | { readonly next: 'retry'; readonly delayMs: number }
  | { readonly next: 'dead'; readonly reason: DeadReason };

/**
 * Parses a Retry-After header (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) into milliseconds from
 * `nowMs`, clamped to the policy's band. Returns null for a missing, negative, non-numeric or unparsable
 * value (garbage is ignored, never trusted).
 */
export function parseRetryAfterMs(value: string | null, nowMs: number, policy: RetryPolicy): number | null {
  if (value === null) return null;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000;
  } else {
    // An HTTP-date in one of the three forms of RFC 9110 §5.6.7 (IMF-fixdate, RFC 850, asctime); anything
    // else is not one (Date.parse accepts far more).
    const imf = /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text);
    const rfc850 = /^[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/.test(text);
    const asctime = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/.test(text);
    if (!imf && !rfc850 && !asctime) return null;
    const at = Date.parse(asctime ? `${text} GMT` : text);
    if (Number.isNaN(at)) return null;
    ms = at - nowMs;
    if (ms < 0) return null;
  }
  if (!Number.isFinite(ms)) return null;
  return Math.min(policy.retryAfterMaxMs, Math.max(policy.retryAfterMinMs, ms));
}

/**
 * Applies ±jitter to a delay: `delayMs · (1 − jitter + 2 · jitter · r)` for `r` in [0, 1), rounded to a
 * whole millisecond.
 */
export function jitterDelayMs(delayMs: number, jitter: number, random: () => number): number {
  return Math.round(delayMs * (1 - jitter + 2 * jitter * random()));
}

/** Input of {@link decideNextStep}. */
export interface DecideInput {
  /** 1-based number of the attempt just made. */
  readonly attemptNumber: number;
  readonly classification: Classification;
  /** Clamped Retry-After in ms (see {@link parseRetryAfterMs}), or null. */
  readonly retryAfterMs: number | null;
  /** A manual attempt (resend) is never retried (docs/design.md#delivery-lifecycle). */
  readonly manual: boolean;
  readonly policy: RetryPolicy;
  /** Uniform source in [0, 1). */
  readonly random: () => number;
}

/**
 * Decides the next step after an attempt (docs/design.md#delivery-lifecycle,
 * docs/design.md#retries-and-endpoint-health): delivered → succeeded; 410 → dead (`gone`); a failed manual attempt →
 * dead (`manual_attempt_failed`) when it was not part of a live schedule; the last attempt (`maxAttempts`, else the
 * schedule's entries + 1) → dead (`exhausted`); otherwise retry after the jittered delay of this attempt (the last
 * delay once past the schedule's end), or after the clamped Retry-After when that is longer (a receiver may slow us
 * down, never speed us up).
 */
export function decideNextStep(input: DecideInput): NextStep {
  const { classification, policy } = input;
  if (classification.verdict === 'delivered') return { next: 'succeeded' };
  if (classification.verdict === 'gone') return { next: 'dead', reason: DeadReason.gone };
  if (input.manual) return { next: 'dead', reason: DeadReason.manualFailed };
  const maxAttempts = policy.maxAttempts ?? policy.delaysMs.length + 1;
  if (input.attemptNumber >= maxAttempts) return { next: 'dead', reason: DeadReason.exhausted };
  const scheduled = policy.delaysMs[Math.min(input.attemptNumber, policy.delaysMs.length) - 1];
  if (scheduled === undefined) return { next: 'dead', reason: DeadReason.exhausted };
  const jittered = jitterDelayMs(scheduled, policy.jitter, input.random);
  return { next: 'retry', delayMs: Math.max(jittered, input.retryAfterMs ?? 0) };
}
