import type { Classification } from './attempt-outcome.ts';

/*
 * What a recorded outcome causes, in one place. An attempt's own next step (delivered / retry at T / dead
 * letter) is decided before the record, by `decideNextStep` (retry-schedule.ts); everything the record of that
 * outcome then causes — to the delivery, to its endpoint, and to the operational webhooks — is ruled here:
 *
 *   attempt ──classify──▶ next step ──record statement──▶ rows ──planRecordActions──▶ actions ──adapter──▶ same
 *   transaction
 *
 * Two kinds of rule, both stated in this file and table-tested in outcome-rules.test.ts:
 *
 * - Rules decided here, in TypeScript, from the rows the record statement returns: 429/503 with Retry-After
 *   throttles the endpoint, 410 Gone disables it, an endpoint failing for `autoDisableAfterMs` is disabled,
 *   a breaker that changed state gets a health event, and the operational events (`endpoint.disabled`,
 *   `endpoint.breaker_opened`, `endpoint.recovered`, `message.attempt.exhausted`,
 *   `message.attempt.failing`). {@link planRecordActions} returns them as a list of actions that the store
 *   adapter executes, in order, inside the record's transaction.
 * - Rules the SQL executes, because they must read and change a row in the same statement to stay exact
 *   across dispatchers (counters relative to the row's value, the endpoint's state at the instant of the
 *   write): the state a delivery settles in when its endpoint changed while the attempt was in flight
 *   ({@link settledState}; RECORD_ATTEMPTS and SWEEP in the delivery SQL), the breaker's transitions
 *   ({@link breakerAfter}; RECORD_ATTEMPTS, with {@link recordPolicyParams} as its inputs), and the half-open
 *   step (an open breaker whose cool-down is over lets one probe through; the claim function). The
 *   functions here are their specification; the statements' comments point back to them, and
 *   test/integration/outcome-rules-sql.test.ts runs every case of both functions through the record
 *   statement on both engines and compares the rows with them.
 *
 * The policy's defaults are those of the config schema (src/config/config.ts), never repeated here.
 */

/**
 * Endpoint health policy: when a breaker opens, how long it stays open, when an endpoint is disabled.
 * Durations in ms. Settings TIDINGS_BREAKER_THRESHOLD, TIDINGS_BREAKER_COOLDOWN, TIDINGS_BREAKER_MAX_COOLDOWN,
 * TIDINGS_AUTO_DISABLE_AFTER (src/config/config.ts holds their defaults).
 */
export interface OutcomePolicy {
  /** Consecutive failed scheduled attempts that open a closed breaker (≥ 1). */
  readonly breakerThreshold: number;
  /** First cool-down of an open breaker, ms; doubles with each opening in a row. */
  readonly breakerCooldownMs: number;
  /** Longest cool-down, ms. */
  readonly breakerMaxCooldownMs: number;
  /** An endpoint whose attempts have only failed for this long is disabled, ms. */
  readonly autoDisableAfterMs: number;
}

/**
 * The consecutive failed attempt of one message after which `message.attempt.failing` is sent (Svix sends it after the
 * 4th).
 */
export const FAILING_EVENT_ATTEMPT = 4;

/** Reason recorded when a 410 Gone disables an endpoint. */
export const GONE_DISABLE_REASON = 'receiver answered 410 Gone';

/** Operational event types (Svix's names where Svix has one; docs/reference lists their payloads). */
export const OperationalEventType = Object.freeze({
  endpointDisabled: 'endpoint.disabled',
  breakerOpened: 'endpoint.breaker_opened',
  endpointRecovered: 'endpoint.recovered',
  attemptExhausted: 'message.attempt.exhausted',
  attemptFailing: 'message.attempt.failing',
} as const);
export type OperationalEventType = (typeof OperationalEventType)[keyof typeof OperationalEventType];

/** An event about the platform itself, published as a message of the operational application. */
export interface OperationalEvent {
  /** Event type, e.g. `endpoint.disabled`. */
  readonly type: string;
  /** The application the event is about (never the operational application itself). */
  readonly appId: string;
  /** Event data (the `data` object of the payload). */
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * What an attempt asks of its endpoint, beside its own next step: hold the endpoint back for `throttleMs`
 * (a 429 or 503 with a Retry-After, clamped; null = no throttle), or disable it with `disableReason` (410 Gone,
 * the receiver's "stop sending"; null = leave it).
 */
export function endpointRequests(
  classification: Classification,
  retryAfterMs: number | null,
): { readonly throttleMs: number | null; readonly disableReason: string | null } {
  const status = classification.statusCode;
  const throttles = (status === 429 || status === 503) && retryAfterMs !== null;
  return {
    throttleMs: throttles ? retryAfterMs : null,
    disableReason: classification.verdict === 'gone' ? GONE_DISABLE_REASON : null,
  };
}

/** One outcome sent to the record statement (the fields the rules read; a port's attempt record fits). */
export interface RecordedAttempt {
  readonly deliveryId: string;
  readonly endpointId: string;
  readonly attemptId: string;
  /** 1-based. */
  readonly attemptNumber: number;
  readonly succeeded: boolean;
  readonly statusCode: number | null;
  readonly errorKind: string | null;
  readonly throttleEndpointMs: number | null;
  readonly disableEndpointReason: string | null;
}

/** A delivery row the record statement wrote (an outcome that was not fenced out), in its new state. */
export interface RecordedDelivery {
  readonly id: string;
  readonly appId: string;
  readonly messageId: string | null;
  readonly state: string;
  readonly deadReason: string | null;
}

/** An endpoint whose health row the record statement changed, as it is after the statement. */
export interface EndpointHealthChange {
  readonly endpointId: string;
  readonly appId: string;
  readonly breakerState: string;
  /** The breaker changed state in this statement. */
  readonly breakerChanged: boolean;
  readonly consecutiveFailures: number | null;
  readonly breakerOpenUntil: Date | null;
  readonly failingSince: Date | null;
  /** Every attempt has failed for at least `autoDisableAfterMs` (compared with the statement's instant). */
  readonly shouldDisable: boolean;
}

/**
 * One consequence of a record statement, executed by the store adapter in the record's transaction, in list order:
 * - `throttle`: hold the endpoint back until now + `ms` (never shortens an existing throttle);
 * - `disable`: disable the endpoint with `reason` (its pending deliveries become skipped); `event` is published
 *   only when this action made the transition (once per transition);
 * - `health-event`: append `kind`/`reason` to the endpoint's health history;
 * - `publish`: publish an operational event (a configured operational application only; `event` may also be
 *   told to metrics).
 */
export type RecordAction =
  | { readonly type: 'throttle'; readonly endpointId: string; readonly ms: number }
  | { readonly type: 'disable'; readonly endpointId: string; readonly reason: string; readonly event: OperationalEvent }
  | {
      readonly type: 'health-event';
      readonly endpointId: string;
      readonly kind: 'breaker_opened' | 'breaker_closed';
      readonly reason: string;
    }
  | { readonly type: 'publish'; readonly event: OperationalEvent };

/**
 * The consequences of one committed-to-be record statement, from its input and its returned rows.
 * Outcomes that were fenced out (no row in `deliveries`) cause nothing. Order: per outcome, its throttle and
 * its 410 disable; per changed endpoint, its auto-disable and its breaker change; then per outcome, the
 * message events (`exhausted` for a dead letter of the schedule, `failing` at attempt
 * {@link FAILING_EVENT_ATTEMPT} while the delivery still retries).
 */
export function planRecordActions(
  records: readonly RecordedAttempt[],
  deliveries: readonly RecordedDelivery[],
  endpoints: readonly EndpointHealthChange[],
): RecordAction[] {
  const byId = new Map(deliveries.map((d) => [d.id, d]));
  const actions: RecordAction[] = [];
  for (const r of records) {
    const d = byId.get(r.deliveryId);
    if (d === undefined) continue;
    if (r.throttleEndpointMs !== null)
      actions.push({ type: 'throttle', endpointId: r.endpointId, ms: r.throttleEndpointMs });
    if (r.disableEndpointReason !== null) {
      const data = { appId: d.appId, endpointId: r.endpointId, trigger: 'gone', reason: r.disableEndpointReason };
      actions.push({
        type: 'disable',
        endpointId: r.endpointId,
        reason: r.disableEndpointReason,
        event: { type: OperationalEventType.endpointDisabled, appId: d.appId, data },
      });
    }
  }
  for (const ep of endpoints) {
    if (ep.shouldDisable) {
      const reason = `every attempt failed since ${ep.failingSince?.toISOString()}`;
      const data = {
        appId: ep.appId,
        endpointId: ep.endpointId,
        trigger: 'automatic',
        failSince: ep.failingSince?.toISOString(),
        reason,
      };
      actions.push({
        type: 'disable',
        endpointId: ep.endpointId,
        reason,
        event: { type: OperationalEventType.endpointDisabled, appId: ep.appId, data },
      });
    }
    if (!ep.breakerChanged) continue;
    if (ep.breakerState === 'open') {
      actions.push({
        type: 'health-event',
        endpointId: ep.endpointId,
        kind: 'breaker_opened',
        reason: `${ep.consecutiveFailures} consecutive failures; open until ${ep.breakerOpenUntil?.toISOString()}`,
      });
      actions.push({
        type: 'publish',
        event: {
          type: OperationalEventType.breakerOpened,
          appId: ep.appId,
          data: {
            appId: ep.appId,
            endpointId: ep.endpointId,
            consecutiveFailures: ep.consecutiveFailures,
            openUntil: ep.breakerOpenUntil?.toISOString(),
          },
        },
      });
    } else {
      actions.push({
        type: 'health-event',
        endpointId: ep.endpointId,
        kind: 'breaker_closed',
        reason: 'an attempt succeeded',
      });
      actions.push({
        type: 'publish',
        event: {
          type: OperationalEventType.endpointRecovered,
          appId: ep.appId,
          data: { appId: ep.appId, endpointId: ep.endpointId },
        },
      });
    }
  }
  for (const r of records) {
    const d = byId.get(r.deliveryId);
    if (d === undefined || r.succeeded) continue;
    const data = {
      appId: d.appId,
      msgId: d.messageId,
      endpointId: r.endpointId,
      lastAttempt: { id: r.attemptId, responseStatusCode: r.statusCode, errorKind: r.errorKind },
    };
    if (d.state === 'dead' && d.deadReason === 'exhausted')
      actions.push({ type: 'publish', event: { type: OperationalEventType.attemptExhausted, appId: d.appId, data } });
    if (r.attemptNumber === FAILING_EVENT_ATTEMPT && d.state === 'pending')
      actions.push({ type: 'publish', event: { type: OperationalEventType.attemptFailing, appId: d.appId, data } });
  }
  return actions;
}

/**
 * The record statement's policy parameters: threshold, cool-down ms, max cool-down ms, auto-disable after ms (its
 * breaker_threshold, cooldown_ms, max_cooldown_ms, auto_disable_after_ms): the statement executes
 * {@link breakerAfter} and the auto-disable test with them.
 */
export function recordPolicyParams(policy: OutcomePolicy): readonly [number, number, number, number] {
  return [policy.breakerThreshold, policy.breakerCooldownMs, policy.breakerMaxCooldownMs, policy.autoDisableAfterMs];
}

/** Breaker states (the endpoint row's `breaker_state`). */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** An endpoint's breaker before a record statement. */
export interface BreakerBefore {
  readonly state: BreakerState;
  readonly consecutiveFailures: number;
  /** Openings in a row (reset by a success). */
  readonly openedInARow: number;
}

/**
 * The breaker after a statement that recorded `ok` successful and `failed` failed scheduled attempts of the
 * endpoint (manual resends say nothing about health). Executed by RECORD_ATTEMPTS: any success closes it and
 * resets the counters; a failed probe (half-open) reopens it; a closed breaker opens when the consecutive
 * failures reach the threshold; each opening's cool-down is `min(max, cooldown · 2^openedInARow)` ms. The
 * claim moves an open breaker whose cool-down is over to half-open and lets one probe through.
 */
export function breakerAfter(
  before: BreakerBefore,
  ok: number,
  failed: number,
  policy: OutcomePolicy,
): {
  readonly state: BreakerState;
  readonly consecutiveFailures: number;
  readonly openedInARow: number;
  readonly opensForMs: number | null;
} {
  if (ok > 0) return { state: 'closed', consecutiveFailures: 0, openedInARow: 0, opensForMs: null };
  const failures = before.consecutiveFailures + failed;
  const opens = before.state === 'half_open' || (before.state === 'closed' && failures >= policy.breakerThreshold);
  if (!opens)
    return { state: before.state, consecutiveFailures: failures, openedInARow: before.openedInARow, opensForMs: null };
  const opensForMs = Math.min(
    policy.breakerMaxCooldownMs,
    policy.breakerCooldownMs * 2 ** Math.min(before.openedInARow, 30),
  );
  return { state: 'open', consecutiveFailures: failures, openedInARow: before.openedInARow + 1, opensForMs };
}

/** The endpoint of a delivery at the instant its outcome is written. */
export interface EndpointAtRecord {
  readonly deleted: boolean;
  readonly status: 'active' | 'paused' | 'disabled';
}

/**
 * The state a delivery settles in when its outcome (`next`: succeeded, pending for a retry, or dead) is
 * written, given its endpoint at that instant and, for a resend, the state it had before (`resendReturn`).
 * Executed by RECORD_ATTEMPTS in the same statement as the write: a success stands; a deleted endpoint
 * cancels (nothing is sent after deletion); a failed resend returns the delivery where it was; a retry of a
 * disabled endpoint is skipped; a retry of a paused endpoint waits until resumed (`held`). `reason` is the
 * timeline row's reason (null: none beyond the state).
 */
export function settledState(
  next: 'succeeded' | 'pending' | 'dead',
  endpoint: EndpointAtRecord,
  resendReturn: string | null,
  deadReason: string | null,
  manual: boolean,
): { readonly state: string; readonly held: boolean; readonly reason: string | null } {
  const held = next === 'pending' && endpoint.status === 'paused';
  let state: string;
  if (next === 'succeeded') state = 'succeeded';
  else if (endpoint.deleted) state = 'canceled';
  else if (next === 'dead' && resendReturn !== null) state = resendReturn;
  else if (next === 'pending' && endpoint.status === 'disabled') state = 'skipped';
  else state = next;
  let reason: string | null = manual ? 'resent' : null;
  if (state === 'dead') reason = deadReason;
  else if (state === 'pending') reason = 'retry_scheduled';
  else if (state === 'canceled') reason = 'endpoint_deleted';
  else if (state === 'skipped' && next === 'pending') reason = 'endpoint_disabled';
  return { state, held: held && state === 'pending', reason };
}
