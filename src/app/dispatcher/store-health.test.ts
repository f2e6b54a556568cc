import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStoreHealth, type StoreCall } from './store-health.ts';

test(
  'health: a failed take makes the dispatcher unhealthy until a take succeeds; "claims resumed" counts every ' +
    'failed store call since',
  () => {
    // Each case: store calls that fail (in order), then a successful take; what the dispatcher reads meanwhile and
    // after.
    const cases: {
      failures: StoreCall[];
      healthyBefore: boolean;
      resumed: { failedClaims: number; failedStoreCalls: number } | null;
    }[] = [
      { failures: [], healthyBefore: true, resumed: null },
      { failures: ['claim'], healthyBefore: false, resumed: { failedClaims: 1, failedStoreCalls: 1 } },
      { failures: ['record', 'heartbeat'], healthyBefore: true, resumed: { failedClaims: 0, failedStoreCalls: 2 } },
      {
        failures: ['claim', 'record', 'claim', 'release'],
        healthyBefore: false,
        resumed: { failedClaims: 2, failedStoreCalls: 4 },
      },
    ];
    for (const c of cases) {
      const lines: unknown[] = [];
      const errors: StoreCall[] = [];
      let resumedCalls = 0;
      const health = createStoreHealth({
        logger: { info: (obj: unknown, msg?: string) => lines.push([msg, obj]) },
        onError: (_error, during) => errors.push(during),
        onResumed: () => {
          resumedCalls += 1;
        },
      });
      for (const during of c.failures) health.failed(new Error('down'), during);
      assert.equal(health.healthy(), c.healthyBefore, `${c.failures.join(',')}: before`);
      assert.deepEqual(errors, c.failures, 'each failure is told');
      health.tookWork();
      assert.equal(health.healthy(), true);
      assert.deepEqual(lines, c.resumed === null ? [] : [['claims resumed', c.resumed]]);
      assert.equal(resumedCalls, c.resumed === null ? 0 : 1, 'the recorder is told to retry at once');
      health.tookWork();
      assert.equal(lines.length, c.resumed === null ? 0 : 1, 'the counts start over');
    }
  },
);
