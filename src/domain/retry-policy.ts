import type { ValidationIssue } from './errors.ts';

/*
 * Retry policies of endpoints and event types (docs/adr/0025-retry-policy-snapshot.md). A policy sets any of three
 * fields; each field falls back on its own:
 *
 *   the endpoint's policy  →  the event type's policy  →  the installation's settings
 *
 * (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE, and attempts = the schedule's entries + 1). The endpoint's and
 * the event type's fields are merged when a delivery is created and stored on the delivery (its snapshot), so a
 * delivery keeps the policy it was created with; the installation's settings are read at each attempt, as before.
 * The SQL function tidings_retry_policy (migration 1764000012000) executes {@link mergeRetryPolicy}.
 */

/** A policy as an endpoint or an event type sets it, and as a delivery stores it: each field absent = fall back. */
export interface RetryPolicyFields {
  /** Delay after each failed attempt, ms (≥ 1 entry); past its end the last delay repeats. */
  readonly scheduleMs?: readonly number[];
  /** Overall deadline of one attempt, ms (TIDINGS_ATTEMPT_DEADLINE's role). */
  readonly attemptTimeoutMs?: number;
  /** Attempts in all, the first included (≥ 1). */
  readonly maxAttempts?: number;
}

/** Where an effective field came from; `schedule` (maxAttempts only): the effective schedule's entries + 1. */
export type RetryPolicySource = 'endpoint' | 'eventType' | 'installation' | 'schedule';

/** The installation's settings a policy falls back on. */
export interface InstallationRetry {
  /** TIDINGS_RETRY_SCHEDULE, ms. */
  readonly delaysMs: readonly number[];
  /** TIDINGS_ATTEMPT_DEADLINE, ms. */
  readonly attemptDeadlineMs: number;
}

/** A policy with every field resolved, and where each came from. */
export interface EffectiveRetryPolicy {
  readonly scheduleMs: readonly number[];
  readonly attemptTimeoutMs: number;
  readonly maxAttempts: number;
  readonly sources: {
    readonly schedule: RetryPolicySource;
    readonly attemptTimeout: RetryPolicySource;
    readonly maxAttempts: RetryPolicySource;
  };
}

/** The limits a policy is held to (src/config/config.ts holds the settings). Durations in ms. */
export interface RetryPolicyLimits {
  /** TIDINGS_RETRY_POLICY_MAX_ATTEMPTS. */
  readonly maxAttempts: number;
  /** TIDINGS_RETRY_POLICY_MAX_DELAYS: most entries of a schedule. */
  readonly maxDelays: number;
  /** TIDINGS_RETRY_POLICY_MIN_DELAY. */
  readonly minDelayMs: number;
  /** TIDINGS_RETRY_POLICY_MAX_DELAY. */
  readonly maxDelayMs: number;
  /** TIDINGS_LEASE: an attempt timeout plus {@link LEASE_MARGIN_MS} must fit in it. */
  readonly leaseMs: number;
}

/**
 * The least a lease must exceed an attempt's deadline by (the start-up rule of TIDINGS_LEASE and
 * TIDINGS_ATTEMPT_DEADLINE, which a policy's attempt timeout follows too): a lease shorter than one attempt would
 * let a second dispatcher take a delivery whose request is still in flight (docs/guides/failure-table.md, 9).
 */
export const LEASE_MARGIN_MS = 1000;

/** Whether a lease of `leaseMs` covers an attempt of `attemptMs` with its margin. */
export function leaseCoversAttempt(leaseMs: number, attemptMs: number): boolean {
  return leaseMs >= attemptMs + LEASE_MARGIN_MS;
}

/** The longest attempt timeout a lease of `leaseMs` allows. */
export function longestAttemptMs(leaseMs: number): number {
  return leaseMs - LEASE_MARGIN_MS;
}

/**
 * The fields of `eventType` overlaid by those of `endpoint` (field by field: the endpoint's wins); null when
 * neither sets any. This is what a delivery stores when it is created.
 */
export function mergeRetryPolicy(
  endpoint: RetryPolicyFields | null,
  eventType: RetryPolicyFields | null,
): RetryPolicyFields | null {
  const merged = { ...defined(eventType), ...defined(endpoint) };
  return Object.keys(merged).length === 0 ? null : merged;
}

/** Only the fields that are set (a stored policy never holds a null field). */
function defined(policy: RetryPolicyFields | null): RetryPolicyFields {
  if (policy === null) return {};
  return {
    ...(policy.scheduleMs === undefined ? {} : { scheduleMs: policy.scheduleMs }),
    ...(policy.attemptTimeoutMs === undefined ? {} : { attemptTimeoutMs: policy.attemptTimeoutMs }),
    ...(policy.maxAttempts === undefined ? {} : { maxAttempts: policy.maxAttempts }),
  };
}

/**
 * Every field resolved: endpoint → event type → installation. Attempts not set anywhere are the effective
 * schedule's entries + 1, as TIDINGS_RETRY_SCHEDULE's are.
 */
export function effectiveRetryPolicy(
  endpoint: RetryPolicyFields | null,
  eventType: RetryPolicyFields | null,
  installation: InstallationRetry,
): EffectiveRetryPolicy {
  type Picked<K extends keyof RetryPolicyFields> = { value: RetryPolicyFields[K]; source: RetryPolicySource } | null;
  const pick = <K extends keyof RetryPolicyFields>(key: K): Picked<K> => {
    if (endpoint?.[key] !== undefined) return { value: endpoint[key], source: 'endpoint' };
    if (eventType?.[key] !== undefined) return { value: eventType[key], source: 'eventType' };
    return null;
  };
  const schedule = pick('scheduleMs');
  const timeout = pick('attemptTimeoutMs');
  const attempts = pick('maxAttempts');
  const scheduleMs = schedule?.value ?? installation.delaysMs;
  return {
    scheduleMs,
    attemptTimeoutMs: timeout?.value ?? installation.attemptDeadlineMs,
    maxAttempts: attempts?.value ?? scheduleMs.length + 1,
    sources: {
      schedule: schedule?.source ?? 'installation',
      attemptTimeout: timeout?.source ?? 'installation',
      maxAttempts: attempts?.source ?? 'schedule',
    },
  };
}

/** What one attempt of a delivery runs with. */
export interface AttemptPolicy {
  readonly delaysMs: readonly number[];
  /** Attempts in all: the snapshot's, else the schedule's entries + 1 (the installation's rule). */
  readonly maxAttempts: number;
  /** The snapshot's attempt timeout, ms, cut to what the lease allows; undefined = the installation's deadline. */
  readonly deadlineMs: number | undefined;
}

/**
 * The policy of one attempt: the delivery's snapshot (null = none) over the installation's schedule read now
 * (`delaysMs`, TIDINGS_RETRY_SCHEDULE). The deadline never exceeds what `leaseMs` allows
 * ({@link longestAttemptMs}): a lease shortened after a policy was set still outlasts the request.
 */
export function attemptPolicy(
  snapshot: RetryPolicyFields | null | undefined,
  delaysMs: readonly number[],
  leaseMs?: number,
): AttemptPolicy {
  const schedule = snapshot?.scheduleMs ?? delaysMs;
  const timeout = snapshot?.attemptTimeoutMs;
  const cut =
    timeout === undefined || leaseMs === undefined
      ? timeout
      : Math.max(1, Math.min(timeout, longestAttemptMs(leaseMs)));
  return { delaysMs: schedule, maxAttempts: snapshot?.maxAttempts ?? schedule.length + 1, deadlineMs: cut };
}

/**
 * Why a policy breaks the installation's limits, one issue per field (loc `['body', field]`, or
 * `['body', 'schedule', i]` for one delay): attempts in [1, maxAttempts]; a schedule of 1 to maxDelays entries,
 * each in [minDelayMs, maxDelayMs] (not checked one by one when there are too many); an attempt timeout ≥ 1 ms
 * that the lease covers with its margin. Each message names the setting that decided it. Empty when the policy is
 * within the limits.
 */
export function retryPolicyIssues(policy: RetryPolicyFields, limits: RetryPolicyLimits): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const at = (loc: readonly (string | number)[], msg: string, what: string): void => {
    issues.push({ loc: ['body', ...loc], msg, type: `value_error.retry_policy.${what}` });
  };
  const { maxAttempts, scheduleMs, attemptTimeoutMs } = policy;
  const attemptsOk = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= limits.maxAttempts;
  if (maxAttempts !== undefined && !attemptsOk(maxAttempts)) {
    at(
      ['maxAttempts'],
      `must be a whole number from 1 to ${limits.maxAttempts} (TIDINGS_RETRY_POLICY_MAX_ATTEMPTS)`,
      'max_attempts',
    );
  }
  if (scheduleMs !== undefined && (scheduleMs.length < 1 || scheduleMs.length > limits.maxDelays)) {
    at(
      ['schedule'],
      `must hold 1 to ${limits.maxDelays} delays (TIDINGS_RETRY_POLICY_MAX_DELAYS); ` +
        'for a single attempt set maxAttempts to 1',
      'schedule_length',
    );
  } else {
    scheduleMs?.forEach((ms, i) => {
      if (ms > limits.maxDelayMs) {
        at(['schedule', i], `must be at most ${limits.maxDelayMs} ms (TIDINGS_RETRY_POLICY_MAX_DELAY)`, 'delay');
      } else if (ms < limits.minDelayMs) {
        at(['schedule', i], `must be at least ${limits.minDelayMs} ms (TIDINGS_RETRY_POLICY_MIN_DELAY)`, 'delay');
      }
    });
  }
  const timeoutOk = (ms: number): boolean => ms >= 1 && leaseCoversAttempt(limits.leaseMs, ms);
  if (attemptTimeoutMs !== undefined && !timeoutOk(attemptTimeoutMs)) {
    const lease = `TIDINGS_LEASE (${limits.leaseMs} ms) must exceed the attempt timeout plus ${LEASE_MARGIN_MS} ms`;
    at(['attemptTimeout'], `must be from 1 to ${longestAttemptMs(limits.leaseMs)} ms: ${lease}`, 'attempt_timeout');
  }
  return issues;
}
