import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { RollupStep, StatsRollup } from '../ports/stats-store.ts';
import { createStatsRollupJob } from './stats-rollup-job.ts';

const silent = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silent;
  },
} as never;
const clock = { nowMs: () => 0, sqlNow: () => new Date(0) };

test(
  'one run takes roll-up steps until caught up, and does nothing ' + 'more when another process holds the roll-up',
  async () => {
    const steps: RollupStep[] = [
      { ran: true, rolledIds: 100, rolledId: 100, caughtUp: false },
      { ran: true, rolledIds: 40, rolledId: 140, caughtUp: true },
      { ran: false, rolledIds: 0, rolledId: 0, caughtUp: true },
    ];
    const batches: number[] = [];
    const rollup: StatsRollup = {
      step: async (_now, maxIds) => {
        batches.push(maxIds);
        return steps.shift()!;
      },
    };
    const job = createStatsRollupJob({
      rollup,
      config: { statsRollupIntervalMs: 0, statsRollupBatch: 100 },
      clock,
      logger: silent,
    });
    assert.equal(await job.runOnce(), 140);
    assert.deepEqual(batches, [100, 100]);
    assert.equal(await job.runOnce(), 0, 'the step found the roll-up taken');
    assert.equal(batches.length, 3);
    await job.stop();
  },
);
