import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { mulberry32, sequenceRandom } from '../../test/support/random.ts';
import { classifyAttempt, type SendResult } from './attempt-outcome.ts';
import { ErrorKind, type ErrorKind as ErrorKindValue } from './error-kinds.ts';
import {
  decideNextStep,
  DEFAULT_RETRY_POLICY,
  jitterDelayMs,
  parseRetryAfterMs,
  type NextStep,
  type RetryPolicy,
} from './retry-schedule.ts';

/** 2026-01-01T00:00:00Z: the "now" of every row. */
const NOW_MS = Date.UTC(2026, 0, 1);
const SEED = 42;
/** The first draws of mulberry32(42); pinned so that the literal delays below can be checked by hand. */
const SEED_42_DRAWS = [
  0.6011037519201636, 0.44829055899754167, 0.8524657934904099, 0.6697340414393693, 0.17481389874592423,
  0.5265925421845168, 0.2732279943302274,
];

function response(
  statusCode: number,
  retryAfter: string | null = null,
  extra: Partial<Extract<SendResult, { type: 'response' }>> = {},
): SendResult {
  return {
    type: 'response',
    statusCode,
    location: null,
    retryAfter,
    bodyPrefix: '',
    bodyError: null,
    durationMs: 12,
    ...extra,
  };
}
function transport(errorKind: ErrorKindValue): SendResult {
  return { type: 'error', errorKind, detail: errorKind, durationMs: 12 };
}

interface Row {
  readonly attempt: number;
  readonly result: SendResult;
  readonly manual?: boolean;
  readonly policy?: RetryPolicy;
  readonly expected: NextStep;
  /** For a retry: NOW_MS + delayMs, as SQL would compute from `$now`. */
  readonly nextAt?: string;
  readonly why: string;
}

// Each row draws from a fresh mulberry32(42): first draw r = 0.6011037519201636, so every scheduled delay d
// becomes round(d · (0.8 + 0.4 · r)) = round(d · 1.04044150…). Hand-checked: 5000 · 1.0404415 = 5202.2.
const ROWS: readonly Row[] = [
  // Scheduled failures walk the default list: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (jittered).
  {
    attempt: 1,
    result: response(500),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: '500 after attempt 1 → 5 s',
  },
  {
    attempt: 2,
    result: response(502),
    expected: { next: 'retry', delayMs: 312132 },
    nextAt: '2026-01-01T00:05:12.132Z',
    why: '502 after attempt 2 → 5 min',
  },
  {
    attempt: 3,
    result: transport(ErrorKind.timeoutHeaders),
    expected: { next: 'retry', delayMs: 1872795 },
    nextAt: '2026-01-01T00:31:12.795Z',
    why: 'headers timeout after attempt 3 → 30 min',
  },
  {
    attempt: 4,
    result: transport(ErrorKind.connectRefused),
    expected: { next: 'retry', delayMs: 7491179 },
    nextAt: '2026-01-01T02:04:51.179Z',
    why: 'connection refused after attempt 4 → 2 h',
  },
  {
    attempt: 5,
    result: response(503),
    expected: { next: 'retry', delayMs: 18727947 },
    nextAt: '2026-01-01T05:12:07.947Z',
    why: '503 after attempt 5 → 5 h',
  },
  {
    attempt: 6,
    result: response(429),
    expected: { next: 'retry', delayMs: 37455894 },
    nextAt: '2026-01-01T10:24:15.894Z',
    why: '429 without Retry-After after attempt 6 → 10 h',
  },
  {
    attempt: 7,
    result: response(408),
    expected: { next: 'retry', delayMs: 37455894 },
    nextAt: '2026-01-01T10:24:15.894Z',
    why: '408 after attempt 7 → 10 h',
  },
  {
    attempt: 8,
    result: response(500),
    expected: { next: 'dead', reason: 'exhausted' },
    why: 'attempt 8 is the last of the default schedule',
  },
  {
    attempt: 9,
    result: transport(ErrorKind.reset),
    expected: { next: 'dead', reason: 'exhausted' },
    why: 'past the schedule',
  },
  {
    attempt: 1,
    result: response(404),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'other 4xx are retried',
  },
  {
    attempt: 1,
    result: response(302, null, { location: 'https://elsewhere.example/' }),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'a redirect is a failed attempt',
  },
  {
    attempt: 1,
    result: transport(ErrorKind.dns),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'DNS failure',
  },
  {
    attempt: 1,
    result: transport(ErrorKind.blockedAddress),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'blocked address is retried like any failure',
  },
  // Retry-After: a longer one wins, a shorter one does not; clamped to [1 s, 1 h]; garbage ignored.
  {
    attempt: 1,
    result: response(429, '120'),
    expected: { next: 'retry', delayMs: 120_000 },
    nextAt: '2026-01-01T00:02:00.000Z',
    why: 'Retry-After 120 s beats 5 s',
  },
  {
    attempt: 1,
    result: response(503, '  120 '),
    expected: { next: 'retry', delayMs: 120_000 },
    nextAt: '2026-01-01T00:02:00.000Z',
    why: 'Retry-After with spaces',
  },
  {
    attempt: 1,
    result: response(503, '2'),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'Retry-After 2 s does not shorten 5 s',
  },
  {
    attempt: 2,
    result: response(429, '120'),
    expected: { next: 'retry', delayMs: 312132 },
    nextAt: '2026-01-01T00:05:12.132Z',
    why: 'Retry-After 120 s does not shorten 5 min',
  },
  {
    attempt: 1,
    result: response(429, 'Thu, 01 Jan 2026 00:00:30 GMT'),
    expected: { next: 'retry', delayMs: 30_000 },
    nextAt: '2026-01-01T00:00:30.000Z',
    why: 'Retry-After as an HTTP-date 30 s ahead',
  },
  {
    attempt: 1,
    result: response(429, 'Thu, 01 Jan 2026 03:00:00 GMT'),
    expected: { next: 'retry', delayMs: 3_600_000 },
    nextAt: '2026-01-01T01:00:00.000Z',
    why: 'HTTP-date 3 h ahead is clamped to 1 h',
  },
  {
    attempt: 1,
    result: response(429, '999999'),
    expected: { next: 'retry', delayMs: 3_600_000 },
    nextAt: '2026-01-01T01:00:00.000Z',
    why: 'Retry-After seconds clamped to 1 h',
  },
  {
    attempt: 1,
    result: response(429, 'Wed, 31 Dec 2025 23:59:00 GMT'),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'HTTP-date in the past is ignored',
  },
  {
    attempt: 1,
    result: response(429, '-5'),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'negative Retry-After is ignored',
  },
  {
    attempt: 1,
    result: response(429, 'soon'),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'garbage Retry-After is ignored',
  },
  {
    attempt: 1,
    result: response(429, '1.5'),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'fractional Retry-After is not delay-seconds',
  },
  {
    attempt: 1,
    result: response(429, '2026-01-01T00:10:00Z'),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'an ISO date is not an HTTP-date',
  },
  {
    attempt: 8,
    result: response(429, '60'),
    expected: { next: 'dead', reason: 'exhausted' },
    why: 'Retry-After does not add attempts',
  },
  {
    attempt: 1,
    result: response(429, '0'),
    policy: { delaysMs: [10, 20], jitter: 0.2, retryAfterMinMs: 1_000, retryAfterMaxMs: 3_600_000 },
    expected: { next: 'retry', delayMs: 1_000 },
    nextAt: '2026-01-01T00:00:01.000Z',
    why: 'Retry-After 0 is raised to the 1 s floor, which beats a 10 ms schedule',
  },
  {
    attempt: 1,
    result: response(429, '0'),
    expected: { next: 'retry', delayMs: 5202 },
    nextAt: '2026-01-01T00:00:05.202Z',
    why: 'Retry-After 0 never speeds a retry up',
  },
  // Terminal outcomes.
  { attempt: 1, result: response(410), expected: { next: 'dead', reason: 'gone' }, why: '410 Gone: dead at once' },
  {
    attempt: 3,
    result: response(410, '60'),
    expected: { next: 'dead', reason: 'gone' },
    why: '410 with Retry-After: still dead',
  },
  { attempt: 1, result: response(200), expected: { next: 'succeeded' }, why: '200' },
  { attempt: 8, result: response(204), expected: { next: 'succeeded' }, why: '2xx on the last attempt' },
  {
    attempt: 2,
    result: response(200, null, { bodyError: ErrorKind.timeoutBody }),
    expected: { next: 'succeeded' },
    why: '2xx whose body was cut',
  },
  // Manual attempts (resend) are never retried.
  {
    attempt: 1,
    manual: true,
    result: response(500),
    expected: { next: 'dead', reason: 'manual_attempt_failed' },
    why: 'failed manual attempt',
  },
  {
    attempt: 1,
    manual: true,
    result: response(429, '5'),
    expected: { next: 'dead', reason: 'manual_attempt_failed' },
    why: 'manual attempt answered 429',
  },
  {
    attempt: 1,
    manual: true,
    result: transport(ErrorKind.timeoutConnect),
    expected: { next: 'dead', reason: 'manual_attempt_failed' },
    why: 'manual attempt timed out',
  },
  { attempt: 1, manual: true, result: response(200), expected: { next: 'succeeded' }, why: 'manual attempt delivered' },
  {
    attempt: 1,
    manual: true,
    result: response(410),
    expected: { next: 'dead', reason: 'gone' },
    why: 'manual attempt answered 410',
  },
];

test('the seeded source gives the pinned sequence (the literal delays below depend on it)', () => {
  const random = mulberry32(SEED);
  assert.deepEqual(
    SEED_42_DRAWS.map(() => random()),
    SEED_42_DRAWS,
  );
});

test('attempt number × outcome × Retry-After → exact next step and next instant (seeded random)', () => {
  for (const row of ROWS) {
    const policy = row.policy ?? DEFAULT_RETRY_POLICY;
    const classification = classifyAttempt(row.result);
    const retryAfterMs = parseRetryAfterMs(
      row.result.type === 'response' ? row.result.retryAfter : null,
      NOW_MS,
      policy,
    );
    const step = decideNextStep({
      attemptNumber: row.attempt,
      classification,
      retryAfterMs,
      manual: row.manual ?? false,
      policy,
      random: mulberry32(SEED),
    });
    assert.deepEqual(step, row.expected, row.why);
    if (step.next === 'retry')
      assert.equal(new Date(NOW_MS + step.delayMs).toISOString(), row.nextAt, `${row.why}: next instant`);
    else assert.equal(row.nextAt, undefined, `${row.why}: a row without a retry names no next instant`);
  }
});

test('the default schedule gives 8 attempts, the last failure is dead with reason exhausted', () => {
  const random = mulberry32(SEED);
  const delays: number[] = [];
  let attempt = 1;
  for (;;) {
    const step = decideNextStep({
      attemptNumber: attempt,
      classification: classifyAttempt(response(500)),
      retryAfterMs: null,
      manual: false,
      policy: DEFAULT_RETRY_POLICY,
      random,
    });
    if (step.next !== 'retry') {
      assert.deepEqual(step, { next: 'dead', reason: 'exhausted' });
      break;
    }
    delays.push(step.delayMs);
    attempt += 1;
  }
  assert.equal(attempt, 8, 'eight attempts in all');
  assert.deepEqual(
    DEFAULT_RETRY_POLICY.delaysMs,
    [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
  );
  // One stream of draws: delay i uses draw i. 5000 · (0.8 + 0.4 · 0.6011…) = 5202.2; 300000 · (0.8 + 0.4 · 0.4483…) =
  // 293794.9 …
  assert.deepEqual(delays, [5202, 293795, 2053775, 7688834, 15658660, 36382933, 32734483]);
  assert.equal(DEFAULT_RETRY_POLICY.jitter, 0.2);
  assert.equal(DEFAULT_RETRY_POLICY.retryAfterMinMs, 1_000);
  assert.equal(DEFAULT_RETRY_POLICY.retryAfterMaxMs, 3_600_000);
});

test('a configured schedule of n delays gives n + 1 attempts', () => {
  const policy: RetryPolicy = { delaysMs: [10, 20, 40], jitter: 0, retryAfterMinMs: 0, retryAfterMaxMs: 1_000 };
  const failed = classifyAttempt(response(500));
  const steps = [1, 2, 3, 4].map((attemptNumber) =>
    decideNextStep({
      attemptNumber,
      classification: failed,
      retryAfterMs: null,
      manual: false,
      policy,
      random: mulberry32(1),
    }),
  );
  assert.deepEqual(steps, [
    { next: 'retry', delayMs: 10 },
    { next: 'retry', delayMs: 20 },
    { next: 'retry', delayMs: 40 },
    { next: 'dead', reason: 'exhausted' },
  ]);
  const none: RetryPolicy = { ...policy, delaysMs: [] };
  assert.deepEqual(
    decideNextStep({
      attemptNumber: 1,
      classification: failed,
      retryAfterMs: null,
      manual: false,
      policy: none,
      random: mulberry32(1),
    }),
    { next: 'dead', reason: 'exhausted' },
  );
});

test('jitter stays within ±20 % and spreads across the whole band', () => {
  const random = mulberry32(7);
  for (const delayMs of DEFAULT_RETRY_POLICY.delaysMs) {
    let low = Infinity;
    let high = -Infinity;
    for (let i = 0; i < 5_000; i += 1) {
      const value = jitterDelayMs(delayMs, 0.2, random);
      assert.ok(Number.isInteger(value), `${value} is a whole number of ms`);
      assert.ok(value >= delayMs * 0.8 && value <= delayMs * 1.2, `${value} within ±20 % of ${delayMs}`);
      low = Math.min(low, value);
      high = Math.max(high, value);
    }
    assert.ok(low < delayMs * 0.81, `lowest ${low} reaches near −20 % of ${delayMs}`);
    assert.ok(high > delayMs * 1.19, `highest ${high} reaches near +20 % of ${delayMs}`);
  }
});

test('jitter endpoints: r = 0 gives −20 %, r = 0.5 the delay itself, r → 1 gives +20 %, jitter 0 the delay', () => {
  assert.equal(jitterDelayMs(5_000, 0.2, sequenceRandom(0)), 4_000);
  assert.equal(jitterDelayMs(5_000, 0.2, sequenceRandom(0.5)), 5_000);
  assert.equal(jitterDelayMs(5_000, 0.2, sequenceRandom(0.25)), 4_500);
  assert.equal(jitterDelayMs(5_000, 0.2, sequenceRandom(0.75)), 5_500);
  assert.equal(jitterDelayMs(5_000, 0.2, sequenceRandom(0.9999999)), 6_000);
  assert.equal(jitterDelayMs(36_000_000, 0.2, sequenceRandom(0)), 28_800_000);
  assert.equal(jitterDelayMs(5_000, 0, sequenceRandom(0.9)), 5_000);
  assert.equal(jitterDelayMs(0, 0.2, sequenceRandom(0.9)), 0);
  assert.equal(jitterDelayMs(1_001, 0.2, sequenceRandom(0.5)), 1_001, 'rounded to whole ms');
});

test(
  'parseRetryAfterMs: delay-seconds and HTTP-date, clamped to ' + '[min, max]; missing, negative or garbage → null',
  () => {
    const policy = DEFAULT_RETRY_POLICY;
    const cases: [string | null, number | null][] = [
      [null, null],
      ['', null],
      ['   ', null],
      ['120', 120_000],
      [' 7 ', 7_000],
      ['1', 1_000],
      ['0', 1_000],
      ['3600', 3_600_000],
      ['3601', 3_600_000],
      ['99999999999999999999999', 3_600_000],
      ['-1', null],
      ['+5', null],
      ['1.5', null],
      ['1e3', null],
      ['0x10', null],
      ['Infinity', null],
      ['NaN', null],
      ['5 s', null],
      ['soon', null],
      ['Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
      ['Thu, 01 Jan 2026 00:00:00 GMT', 1_000],
      ['Thu, 01 Jan 2026 00:00:00 UTC', null],
      ['Thu, 01 Jan 2026 05:00:00 GMT', 3_600_000],
      ['Wed, 31 Dec 2025 23:59:59 GMT', null],
      ['2026-01-01T00:00:30Z', null],
      ['Thu, 01 Jan 2026 00:00:30 +0000', null],
    ];
    for (const [header, expected] of cases)
      assert.equal(parseRetryAfterMs(header, NOW_MS, policy), expected, JSON.stringify(header));
    const band: RetryPolicy = { ...policy, retryAfterMinMs: 2_000, retryAfterMaxMs: 10_000 };
    assert.equal(parseRetryAfterMs('1', NOW_MS, band), 2_000);
    assert.equal(parseRetryAfterMs('5', NOW_MS, band), 5_000);
    assert.equal(parseRetryAfterMs('11', NOW_MS, band), 10_000);
    assert.equal(
      parseRetryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', NOW_MS + 500, band),
      4_500,
      'an HTTP-date counts from now to the ms',
    );
  },
);

test('the decision draws from the random source it is given, and the same seed gives the same delay', () => {
  const failed = classifyAttempt(response(500));
  const input = {
    attemptNumber: 2,
    classification: failed,
    retryAfterMs: null,
    manual: false,
    policy: DEFAULT_RETRY_POLICY,
  };
  assert.deepEqual(
    decideNextStep({ ...input, random: mulberry32(9) }),
    decideNextStep({ ...input, random: mulberry32(9) }),
  );
  assert.deepEqual(decideNextStep({ ...input, random: sequenceRandom(0) }), { next: 'retry', delayMs: 240_000 });
  assert.deepEqual(decideNextStep({ ...input, random: sequenceRandom(0.5) }), { next: 'retry', delayMs: 300_000 });
});
