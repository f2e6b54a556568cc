import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IdempotencyPruning } from '../ports/idempotency-store.ts';
import type { RetentionStore } from '../ports/retention-store.ts';
import type { TaskStore } from '../ports/task-store.ts';
import { createRetentionJob, nextRunDelayMs } from './retention-job.ts';

const fixed = (value: number) => ({ next: () => value });

test('the retention period is jittered within ±jitter: the extremes of the random source map to the band edges', () => {
  assert.equal(nextRunDelayMs(300_000, 0.2, fixed(0)), 240_000);
  assert.equal(nextRunDelayMs(300_000, 0.2, fixed(0.5)), 300_000);
  assert.equal(nextRunDelayMs(300_000, 0.2, fixed(0.999999)), 360_000);
  assert.equal(nextRunDelayMs(300_000, 0, fixed(0.9)), 300_000);
});

test('one run loops each step in batches until a short batch, and stop waits for a run in progress', async () => {
  const calls: string[] = [];
  let pruned = 5;
  const retention: RetentionStore = {
    payloadRetentionClasses: async () => [null, 24],
    expirePayloads: async (input) => {
      calls.push(`expire:${input.retentionHours}`);
      return { read: 0, expunged: 0, cursor: null };
    },
    pruneSucceeded: async (input) => {
      calls.push('prune');
      const n = Math.min(pruned, input.batch);
      pruned -= n;
      return n;
    },
    newestMessageId: async () => assert.fail('not called'),
    eraseBatch: async () => assert.fail('not called'),
  };
  const idempotency: IdempotencyPruning = {
    pruneExpired: async () => {
      calls.push('keys');
      return 0;
    },
  };
  const tasks: Pick<TaskStore, 'stepNext'> = { stepNext: async () => false };
  const job = createRetentionJob({
    stores: { retention, idempotency, tasks },
    clock: { nowMs: () => 0, sqlNow: () => null },
    random: fixed(0.5),
    logger: {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
      child() {
        return this;
      },
    },
    config: {
      payloadRetentionMs: 3_600_000,
      retentionSucceededAgeMs: 1000,
      retentionBatch: 2,
      retentionIntervalMs: 0,
      retentionJitter: 0.2,
      historyPartitionWidthMs: 86_400_000,
      historyPartitionsAhead: 3,
      historyPartitionLockTimeoutMs: 1000,
    },
  });
  const report = await job.runOnce();
  assert.equal(report.deliveriesPruned, 5);
  assert.deepEqual(calls, ['expire:null', 'expire:24', 'prune', 'prune', 'prune', 'keys']);
  job.start();
  await job.stop();
});
