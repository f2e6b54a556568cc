import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Classification } from './attempt-outcome.ts';
import {
  breakerAfter,
  endpointRequests,
  FAILING_EVENT_ATTEMPT,
  GONE_DISABLE_REASON,
  planRecordActions,
  recordPolicyParams,
  settledState,
  type BreakerBefore,
  type EndpointAtRecord,
  type EndpointHealthChange,
  type OutcomePolicy,
  type RecordedAttempt,
  type RecordedDelivery,
} from './outcome-rules.ts';

const policy: OutcomePolicy = {
  breakerThreshold: 3,
  breakerCooldownMs: 1000,
  breakerMaxCooldownMs: 3000,
  autoDisableAfterMs: 60_000,
};
const at = new Date('2026-01-01T00:00:00.000Z');

function attempt(over: Partial<RecordedAttempt> = {}): RecordedAttempt {
  return {
    deliveryId: 'd1',
    endpointId: 'ep_1',
    attemptId: 'atmpt_1',
    attemptNumber: 1,
    succeeded: false,
    statusCode: 500,
    errorKind: 'http_status',
    throttleEndpointMs: null,
    disableEndpointReason: null,
    ...over,
  };
}
function written(over: Partial<RecordedDelivery> = {}): RecordedDelivery {
  return { id: 'd1', appId: 'app_1', messageId: 'msg_1', state: 'pending', deadReason: null, ...over };
}
function health(over: Partial<EndpointHealthChange> = {}): EndpointHealthChange {
  return {
    endpointId: 'ep_1',
    appId: 'app_1',
    breakerState: 'closed',
    breakerChanged: false,
    consecutiveFailures: 1,
    breakerOpenUntil: null,
    failingSince: at,
    shouldDisable: false,
    ...over,
  };
}
/** The actions as short words: `type:detail`. */
function words(
  records: RecordedAttempt[],
  deliveries: RecordedDelivery[],
  endpoints: EndpointHealthChange[],
): string[] {
  return planRecordActions(records, deliveries, endpoints).map((a) => {
    if (a.type === 'throttle') return `throttle:${a.ms}`;
    if (a.type === 'disable') return `disable:${String(a.event.data.trigger)}`;
    if (a.type === 'health-event') return `health:${a.kind}`;
    return `publish:${a.event.type}`;
  });
}

const planCases: readonly {
  name: string;
  records: RecordedAttempt[];
  deliveries: RecordedDelivery[];
  endpoints?: EndpointHealthChange[];
  actions: string[];
}[] = [
  {
    name: 'a success with an unchanged breaker causes nothing',
    records: [attempt({ succeeded: true, statusCode: 200, errorKind: null })],
    deliveries: [written({ state: 'succeeded' })],
    actions: [],
  },
  {
    name: 'a failure that will be retried causes nothing before attempt 4',
    records: [attempt({ attemptNumber: 3 })],
    deliveries: [written()],
    actions: [],
  },
  {
    name: 'the 4th failed attempt of a delivery that still retries sends message.attempt.failing',
    records: [attempt({ attemptNumber: FAILING_EVENT_ATTEMPT })],
    deliveries: [written()],
    actions: ['publish:message.attempt.failing'],
  },
  {
    name: 'the 4th failed attempt is not "failing" when the delivery is dead',
    records: [attempt({ attemptNumber: 4 })],
    deliveries: [written({ state: 'dead', deadReason: 'exhausted' })],
    actions: ['publish:message.attempt.exhausted'],
  },
  {
    name: 'the 5th failed attempt is not "failing" again',
    records: [attempt({ attemptNumber: 5 })],
    deliveries: [written()],
    actions: [],
  },
  {
    name: 'the last attempt of the schedule sends message.attempt.exhausted',
    records: [attempt({ attemptNumber: 8 })],
    deliveries: [written({ state: 'dead', deadReason: 'exhausted' })],
    actions: ['publish:message.attempt.exhausted'],
  },
  {
    name: 'a dead letter for another reason (gone, failed resend) is not exhausted',
    records: [attempt({ statusCode: 410 })],
    deliveries: [written({ state: 'dead', deadReason: 'gone' })],
    actions: [],
  },
  {
    name: '410 Gone disables the endpoint',
    records: [attempt({ statusCode: 410, disableEndpointReason: GONE_DISABLE_REASON })],
    deliveries: [written({ state: 'dead', deadReason: 'gone' })],
    actions: ['disable:gone'],
  },
  {
    name: 'a Retry-After throttle holds the endpoint back',
    records: [attempt({ statusCode: 429, throttleEndpointMs: 60_000 })],
    deliveries: [written()],
    actions: ['throttle:60000'],
  },
  {
    name: 'an outcome fenced out causes nothing, not even its 410 or throttle',
    records: [attempt({ disableEndpointReason: GONE_DISABLE_REASON, throttleEndpointMs: 5, attemptNumber: 4 })],
    deliveries: [],
    actions: [],
  },
  {
    name: 'an endpoint failing for the auto-disable period is disabled',
    records: [attempt()],
    deliveries: [written()],
    endpoints: [health({ shouldDisable: true })],
    actions: ['disable:automatic'],
  },
  {
    name: 'a breaker that opened gets a health event and endpoint.breaker_opened',
    records: [attempt()],
    deliveries: [written()],
    endpoints: [health({ breakerState: 'open', breakerChanged: true, consecutiveFailures: 3 })],
    actions: ['health:breaker_opened', 'publish:endpoint.breaker_opened'],
  },
  {
    name: 'a breaker that closed gets a health event and endpoint.recovered',
    records: [attempt({ succeeded: true })],
    deliveries: [written({ state: 'succeeded' })],
    endpoints: [health({ breakerState: 'closed', breakerChanged: true })],
    actions: ['health:breaker_closed', 'publish:endpoint.recovered'],
  },
  {
    name: 'an open breaker that stays open says nothing',
    records: [attempt()],
    deliveries: [written()],
    endpoints: [health({ breakerState: 'open' })],
    actions: [],
  },
  {
    name: 'order: per outcome throttle and 410, then per endpoint auto-disable and breaker, then message events',
    records: [
      attempt({ attemptNumber: 4, throttleEndpointMs: 7 }),
      attempt({ deliveryId: 'd2', endpointId: 'ep_2', disableEndpointReason: GONE_DISABLE_REASON }),
    ],
    deliveries: [written(), written({ id: 'd2', state: 'dead', deadReason: 'gone' })],
    endpoints: [health({ shouldDisable: true, breakerState: 'open', breakerChanged: true })],
    actions: [
      'throttle:7',
      'disable:gone',
      'disable:automatic',
      'health:breaker_opened',
      'publish:endpoint.breaker_opened',
      'publish:message.attempt.failing',
    ],
  },
];

for (const c of planCases) {
  test(`outcome rules: ${c.name}`, () => {
    assert.deepEqual(words(c.records, c.deliveries, c.endpoints ?? []), c.actions);
  });
}

test(
  'outcome rules: the events carry the ids, the reasons and the last attempt as the operational webhooks publish ' +
    'them',
  () => {
    const actions = planRecordActions(
      [attempt({ attemptNumber: 4, disableEndpointReason: GONE_DISABLE_REASON })],
      [written()],
      [
        health({
          shouldDisable: true,
          failingSince: at,
          breakerState: 'open',
          breakerChanged: true,
          consecutiveFailures: 10,
          breakerOpenUntil: new Date(at.getTime() + 30_000),
        }),
      ],
    );
    assert.deepEqual(actions, [
      {
        type: 'disable',
        endpointId: 'ep_1',
        reason: GONE_DISABLE_REASON,
        event: {
          type: 'endpoint.disabled',
          appId: 'app_1',
          data: { appId: 'app_1', endpointId: 'ep_1', trigger: 'gone', reason: GONE_DISABLE_REASON },
        },
      },
      {
        type: 'disable',
        endpointId: 'ep_1',
        reason: 'every attempt failed since 2026-01-01T00:00:00.000Z',
        event: {
          type: 'endpoint.disabled',
          appId: 'app_1',
          data: {
            appId: 'app_1',
            endpointId: 'ep_1',
            trigger: 'automatic',
            failSince: '2026-01-01T00:00:00.000Z',
            reason: 'every attempt failed since 2026-01-01T00:00:00.000Z',
          },
        },
      },
      {
        type: 'health-event',
        endpointId: 'ep_1',
        kind: 'breaker_opened',
        reason: '10 consecutive failures; open until 2026-01-01T00:00:30.000Z',
      },
      {
        type: 'publish',
        event: {
          type: 'endpoint.breaker_opened',
          appId: 'app_1',
          data: { appId: 'app_1', endpointId: 'ep_1', consecutiveFailures: 10, openUntil: '2026-01-01T00:00:30.000Z' },
        },
      },
      {
        type: 'publish',
        event: {
          type: 'message.attempt.failing',
          appId: 'app_1',
          data: {
            appId: 'app_1',
            msgId: 'msg_1',
            endpointId: 'ep_1',
            lastAttempt: { id: 'atmpt_1', responseStatusCode: 500, errorKind: 'http_status' },
          },
        },
      },
    ]);
  },
);

const classified = (verdict: Classification['verdict'], statusCode: number | null): Classification => ({
  verdict,
  statusCode,
  errorKind: verdict === 'delivered' ? null : 'http_status',
});
const requestCases: readonly [
  string,
  Classification,
  number | null,
  { throttleMs: number | null; disableReason: string | null },
][] = [
  [
    '429 with Retry-After throttles the endpoint',
    classified('retryable', 429),
    5000,
    { throttleMs: 5000, disableReason: null },
  ],
  [
    '503 with Retry-After throttles the endpoint',
    classified('retryable', 503),
    1000,
    { throttleMs: 1000, disableReason: null },
  ],
  [
    '429 without a usable Retry-After does not',
    classified('retryable', 429),
    null,
    { throttleMs: null, disableReason: null },
  ],
  [
    '500 with Retry-After does not (it only sets the next delay)',
    classified('retryable', 500),
    5000,
    { throttleMs: null, disableReason: null },
  ],
  [
    '410 Gone disables the endpoint',
    classified('gone', 410),
    null,
    { throttleMs: null, disableReason: GONE_DISABLE_REASON },
  ],
  [
    'a timeout asks nothing',
    { verdict: 'retryable', statusCode: null, errorKind: 'timeout_headers' },
    null,
    { throttleMs: null, disableReason: null },
  ],
];
for (const [name, classification, retryAfterMs, expected] of requestCases) {
  test(`endpoint requests: ${name}`, () => assert.deepEqual(endpointRequests(classification, retryAfterMs), expected));
}

const breakerCases: readonly [string, BreakerBefore, number, number, ReturnType<typeof breakerAfter>][] = [
  [
    'closed, failures below the threshold: stays closed, counts',
    { state: 'closed', consecutiveFailures: 1, openedInARow: 0 },
    0,
    1,
    { state: 'closed', consecutiveFailures: 2, openedInARow: 0, opensForMs: null },
  ],
  [
    'closed, failures reach the threshold: opens for the first cool-down',
    { state: 'closed', consecutiveFailures: 2, openedInARow: 0 },
    0,
    1,
    { state: 'open', consecutiveFailures: 3, openedInARow: 1, opensForMs: 1000 },
  ],
  [
    'half-open, the probe failed: reopens for twice as long',
    { state: 'half_open', consecutiveFailures: 3, openedInARow: 1 },
    0,
    1,
    { state: 'open', consecutiveFailures: 4, openedInARow: 2, opensForMs: 2000 },
  ],
  [
    'half-open again: the cool-down stops at its maximum',
    { state: 'half_open', consecutiveFailures: 5, openedInARow: 3 },
    0,
    1,
    { state: 'open', consecutiveFailures: 6, openedInARow: 4, opensForMs: 3000 },
  ],
  [
    'open, a late failure (in flight when it opened): stays open, cool-down unchanged',
    { state: 'open', consecutiveFailures: 3, openedInARow: 1 },
    0,
    1,
    { state: 'open', consecutiveFailures: 4, openedInARow: 1, opensForMs: null },
  ],
  [
    'any success in the batch closes it and resets the counters',
    { state: 'half_open', consecutiveFailures: 9, openedInARow: 2 },
    1,
    4,
    { state: 'closed', consecutiveFailures: 0, openedInARow: 0, opensForMs: null },
  ],
];
for (const [name, before, ok, failed, expected] of breakerCases) {
  test(`breaker: ${name}`, () => assert.deepEqual(breakerAfter(before, ok, failed, policy), expected));
}

test('the record statement gets the policy in its parameter order', () => {
  assert.deepEqual(recordPolicyParams(policy), [3, 1000, 3000, 60_000]);
});

const active: EndpointAtRecord = { deleted: false, status: 'active' };
const settleCases: readonly [
  string,
  'succeeded' | 'pending' | 'dead',
  EndpointAtRecord,
  string | null,
  boolean,
  { state: string; held: boolean; reason: string | null },
][] = [
  [
    'a success stands, even on a deleted endpoint',
    'succeeded',
    { deleted: true, status: 'active' },
    null,
    false,
    { state: 'succeeded', held: false, reason: null },
  ],
  [
    'a retry is scheduled',
    'pending',
    active,
    null,
    false,
    { state: 'pending', held: false, reason: 'retry_scheduled' },
  ],
  [
    'a retry of a deleted endpoint is canceled',
    'pending',
    { deleted: true, status: 'active' },
    null,
    false,
    { state: 'canceled', held: false, reason: 'endpoint_deleted' },
  ],
  [
    'a dead letter of a deleted endpoint is canceled',
    'dead',
    { deleted: true, status: 'active' },
    null,
    false,
    { state: 'canceled', held: false, reason: 'endpoint_deleted' },
  ],
  [
    'a retry of a disabled endpoint is skipped',
    'pending',
    { deleted: false, status: 'disabled' },
    null,
    false,
    { state: 'skipped', held: false, reason: 'endpoint_disabled' },
  ],
  [
    'a retry of a paused endpoint waits until it is resumed',
    'pending',
    { deleted: false, status: 'paused' },
    null,
    false,
    { state: 'pending', held: true, reason: 'retry_scheduled' },
  ],
  [
    'a dead letter stays dead on a disabled endpoint',
    'dead',
    { deleted: false, status: 'disabled' },
    null,
    false,
    { state: 'dead', held: false, reason: 'exhausted' },
  ],
  [
    'a failed resend returns the delivery to where it was',
    'dead',
    active,
    'skipped',
    true,
    { state: 'skipped', held: false, reason: 'resent' },
  ],
  [
    'a successful resend is succeeded',
    'succeeded',
    active,
    'dead',
    true,
    { state: 'succeeded', held: false, reason: 'resent' },
  ],
];
for (const [name, next, endpoint, resendReturn, manual, expected] of settleCases) {
  test(`settled state: ${name}`, () =>
    assert.deepEqual(
      settledState(next, endpoint, resendReturn, next === 'dead' ? 'exhausted' : null, manual),
      expected,
    ));
}
