import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { mulberry32 } from '../../test/support/random.ts';
import { classifyAttempt } from './attempt-outcome.ts';
import {
  attemptPolicy,
  effectiveRetryPolicy,
  leaseCoversAttempt,
  mergeRetryPolicy,
  retryPolicyIssues,
  type RetryPolicyFields,
  type RetryPolicyLimits,
} from './retry-policy.ts';
import { decideNextStep, type RetryPolicy } from './retry-schedule.ts';

const INSTALLATION = { delaysMs: [5_000, 300_000], attemptDeadlineMs: 15_000 };
const LIMITS: RetryPolicyLimits = {
  maxAttempts: 50,
  maxDelays: 20,
  minDelayMs: 1000,
  maxDelayMs: 86_400_000,
  leaseMs: 60_000,
};
const [EP, TYPE, INST, SCHED] = ['endpoint', 'eventType', 'installation', 'schedule'] as const;

/** The endpoint's and the event type's fields → schedule, timeout, attempts, and the source of each. */
type Row = readonly [
  RetryPolicyFields | null,
  RetryPolicyFields | null,
  readonly number[],
  number,
  number,
  readonly string[],
];

test('each field falls back on its own: endpoint → event type → installation; attempts: entries + 1', () => {
  const rows: readonly Row[] = [
    [null, null, [5_000, 300_000], 15_000, 3, [INST, INST, SCHED]],
    [{ scheduleMs: [1000] }, null, [1000], 15_000, 2, [EP, INST, SCHED]],
    [null, { maxAttempts: 5, attemptTimeoutMs: 2000 }, [5_000, 300_000], 2000, 5, [INST, TYPE, TYPE]],
    [{ maxAttempts: 1 }, { scheduleMs: [9000, 9000], maxAttempts: 7 }, [9000, 9000], 15_000, 1, [TYPE, INST, EP]],
    [{ attemptTimeoutMs: 100, scheduleMs: [2000] }, { attemptTimeoutMs: 900 }, [2000], 100, 2, [EP, EP, SCHED]],
  ];
  for (const [endpoint, eventType, scheduleMs, attemptTimeoutMs, maxAttempts, sources] of rows) {
    const got = effectiveRetryPolicy(endpoint, eventType, INSTALLATION);
    const want = [scheduleMs, attemptTimeoutMs, maxAttempts];
    assert.deepEqual([got.scheduleMs, got.attemptTimeoutMs, got.maxAttempts], want);
    assert.deepEqual([got.sources.schedule, got.sources.attemptTimeout, got.sources.maxAttempts], sources);
    // The snapshot a delivery stores resolves at its attempt to the same values.
    const atAttempt = attemptPolicy(mergeRetryPolicy(endpoint, eventType), INSTALLATION.delaysMs);
    const deadlineMs = atAttempt.deadlineMs ?? INSTALLATION.attemptDeadlineMs;
    assert.deepEqual([atAttempt.delaysMs, deadlineMs, atAttempt.maxAttempts], want);
  }
});

test("the snapshot merges field by field, the endpoint's winning; no field set anywhere is null", () => {
  assert.equal(mergeRetryPolicy(null, null), null);
  assert.equal(mergeRetryPolicy({}, {}), null);
  assert.deepEqual(mergeRetryPolicy({ maxAttempts: 2 }, { maxAttempts: 9, scheduleMs: [1000] }), {
    maxAttempts: 2,
    scheduleMs: [1000],
  });
  assert.deepEqual(mergeRetryPolicy(null, { attemptTimeoutMs: 5 }), { attemptTimeoutMs: 5 });
});

test("an attempt's deadline never exceeds what the lease allows (lease − 1 s), whatever the snapshot says", () => {
  const delays = INSTALLATION.delaysMs;
  assert.equal(attemptPolicy({ attemptTimeoutMs: 59_000 }, delays, 60_000).deadlineMs, 59_000);
  assert.equal(attemptPolicy({ attemptTimeoutMs: 90_000 }, delays, 60_000).deadlineMs, 59_000, 'lease shortened since');
  assert.equal(attemptPolicy(null, delays, 60_000).deadlineMs, undefined, "none set: the installation's");
  assert.equal(leaseCoversAttempt(60_000, 59_000), true);
  assert.equal(leaseCoversAttempt(60_000, 59_001), false);
});

test('maxAttempts ends the schedule early, or repeats its last delay past its end', () => {
  const failed = classifyAttempt({
    type: 'response',
    statusCode: 500,
    location: null,
    retryAfter: null,
    bodyPrefix: '',
    bodyError: null,
    durationMs: 1,
  });
  const walk = (policy: RetryPolicy): (number | string)[] => {
    const out: (number | string)[] = [];
    for (let n = 1; n <= 10; n++) {
      const step = decideNextStep({
        attemptNumber: n,
        classification: failed,
        retryAfterMs: null,
        manual: false,
        policy,
        random: mulberry32(1),
      });
      out.push(step.next === 'retry' ? step.delayMs : step.next === 'dead' ? step.reason : step.next);
      if (step.next !== 'retry') break;
    }
    return out;
  };
  const base = { delaysMs: [10, 20, 40], jitter: 0, retryAfterMinMs: 0, retryAfterMaxMs: 0 };
  assert.deepEqual(walk(base), [10, 20, 40, 'exhausted'], 'no maxAttempts: entries + 1');
  assert.deepEqual(walk({ ...base, maxAttempts: 2 }), [10, 'exhausted']);
  assert.deepEqual(walk({ ...base, maxAttempts: 1 }), ['exhausted']);
  assert.deepEqual(walk({ ...base, maxAttempts: 6 }), [10, 20, 40, 40, 40, 'exhausted'], 'the last delay repeats');
  assert.deepEqual(walk({ ...base, delaysMs: [], maxAttempts: 3 }), ['exhausted'], 'no delay to wait: one attempt');
});

test("a policy outside the installation's limits is refused field by field, each message naming its setting", () => {
  const locs = (p: RetryPolicyFields): string[] =>
    retryPolicyIssues(p, LIMITS).map((i) => `${i.loc.join('.')}: ${i.msg}`);
  const atLimits = { scheduleMs: [1000, 86_400_000], attemptTimeoutMs: 59_000, maxAttempts: 50 };
  assert.deepEqual(locs(atLimits), [], 'at the limits');
  assert.deepEqual(locs({ maxAttempts: 0 }), [
    'body.maxAttempts: must be a whole number from 1 to 50 (TIDINGS_RETRY_POLICY_MAX_ATTEMPTS)',
  ]);
  assert.deepEqual(locs({ maxAttempts: 51 }).length, 1);
  const length =
    'body.schedule: must hold 1 to 20 delays (TIDINGS_RETRY_POLICY_MAX_DELAYS); ' +
    'for a single attempt set maxAttempts to 1';
  assert.deepEqual(locs({ scheduleMs: [] }), [length]);
  const tooMany = Array.from({ length: 21 }, () => 0);
  assert.deepEqual(locs({ scheduleMs: tooMany }), [length], 'entries then not checked one by one');
  assert.deepEqual(locs({ scheduleMs: [1000, 86_400_001, 999] }), [
    'body.schedule.1: must be at most 86400000 ms (TIDINGS_RETRY_POLICY_MAX_DELAY)',
    'body.schedule.2: must be at least 1000 ms (TIDINGS_RETRY_POLICY_MIN_DELAY)',
  ]);
  assert.deepEqual(locs({ attemptTimeoutMs: 59_001 }), [
    'body.attemptTimeout: must be from 1 to 59000 ms: ' +
      'TIDINGS_LEASE (60000 ms) must exceed the attempt timeout plus 1000 ms',
  ]);
  assert.deepEqual(locs({ attemptTimeoutMs: 0 }).length, 1);
});
