import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../config/config.ts';
import type { DeliveryStore } from '../ports/delivery-store.ts';
import { createFaultPoints } from './fault-points.ts';

const silent = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silent,
};

test('fault points are inert unless TIDINGS_TEST_FAULT_POINTS arms them', () => {
  assert.deepEqual(loadConfig({}).testFaultPoints, []);
  assert.equal(createFaultPoints(loadConfig({}).testFaultPoints, silent), null);
});

test('the fault point setting parses points, hit numbers and actions', () => {
  const config = loadConfig({
    TIDINGS_TEST_FAULT_POINTS: 'after_send:exit, before_record@2:stall_ms=1500,before_heartbeat@*:stall_ms=10',
  });
  assert.deepEqual(config.testFaultPoints, [
    { point: 'after_send', hit: 1, action: 'exit', stallMs: 0 },
    { point: 'before_record', hit: 2, action: 'stall', stallMs: 1500 },
    { point: 'before_heartbeat', hit: 'every', action: 'stall', stallMs: 10 },
  ]);
});

test('a misspelt fault point is refused at start-up, named with the accepted forms', () => {
  assert.throws(
    () => loadConfig({ TIDINGS_TEST_FAULT_POINTS: 'after_sent:exit,after_send@0:exit,before_record:sleep' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 1);
      assert.match(
        error.problems[0] ?? '',
        new RegExp(
          ['"after_sent:exit"', '"after_send@0:exit"', '"before_record:sleep"']
            .map((given) => `${given} is not a fault point`)
            .join('.*'),
        ),
      );
      return true;
    },
  );
});

test('a stall fault point holds the wrapped store call on the armed pass only', async () => {
  const calls: string[] = [];
  const store: DeliveryStore = {
    claim: async () => ({ deliveries: [], reclaimed: 0, deadLettered: 0 }),
    extendLeases: async () => [],
    releaseLeases: async () => [],
    recordAttempts: async (records) => {
      calls.push(`record ${records.length}`);
      return { recorded: [], fencedOut: [] };
    },
  };
  const faults = createFaultPoints(
    loadConfig({ TIDINGS_TEST_FAULT_POINTS: 'before_record@2:stall_ms=50' }).testFaultPoints,
    silent,
  );
  assert.ok(faults !== null);
  const wrapped = faults.deliveryStore(store);
  const t0 = performance.now();
  await wrapped.recordAttempts([], null);
  const first = performance.now() - t0;
  await wrapped.recordAttempts([], null);
  const second = performance.now() - t0 - first;
  assert.deepEqual(calls, ['record 0', 'record 0']);
  assert.ok(first < 45, `first pass not held (${first} ms)`);
  assert.ok(second >= 45, `second pass held (${second} ms)`);
});
