import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AttemptRecord, RecordResult } from '../../ports/delivery-store.ts';
import { createRecorder } from './recorder.ts';

function record(deliveryId: string, fencingToken: string): AttemptRecord {
  return {
    deliveryId,
    fencingToken,
    dispatcherId: 'w',
    endpointId: 'ep',
    attemptId: `atmpt_${deliveryId}_${fencingToken}`,
    attemptNumber: 1,
    trigger: 'scheduled',
    url: 'http://127.0.0.1:9/',
    succeeded: true,
    statusCode: 200,
    responseBody: '',
    location: null,
    errorKind: null,
    errorDetail: null,
    durationMs: 1,
    next: { next: 'succeeded' },
    throttleEndpointMs: null,
    disableEndpointReason: null,
  };
}

/** A store whose writes the test answers one by one; each call's records are kept. */
function heldStore(): {
  calls: AttemptRecord[][];
  answer(): void;
  recordAttempts(records: readonly AttemptRecord[]): Promise<RecordResult>;
} {
  const calls: AttemptRecord[][] = [];
  const waiting: (() => void)[] = [];
  return {
    calls,
    answer: () => waiting.shift()?.(),
    recordAttempts(records) {
      calls.push([...records]);
      // The store records the newest token of each delivery (what the fencing guard lets through).
      return new Promise((resolve) =>
        waiting.push(() => resolve({ recorded: records.map((r) => r.deliveryId), fencedOut: [] })),
      );
    },
  };
}

const options = { maxBatch: 10, retryDelayMs: 1, maxRetryDelayMs: 1, now: () => null, onError: () => undefined };

test('two outcomes of one delivery (a stale lease and its newer one) never share a statement', async () => {
  const store = heldStore();
  const recorder = createRecorder(store, options);
  const first = recorder.record(record('d0', '1'));
  // While the first statement is out, the stale and the newer outcome of d1 and another delivery queue up.
  const stale = recorder.record(record('d1', '1'));
  const newer = recorder.record(record('d1', '2'));
  const other = recorder.record(record('d2', '1'));
  await new Promise(setImmediate);
  store.answer();
  await first;
  await new Promise(setImmediate);
  assert.deepEqual(
    store.calls[1]?.map((r) => `${r.deliveryId}:${r.fencingToken}`),
    ['d1:1', 'd2:1'],
    'the second statement holds one outcome of d1',
  );
  store.answer();
  await Promise.all([stale, other]);
  await new Promise(setImmediate);
  assert.deepEqual(
    store.calls[2]?.map((r) => `${r.deliveryId}:${r.fencingToken}`),
    ['d1:2'],
    'the newer outcome goes in the next statement',
  );
  store.answer();
  assert.equal(await newer, true);
  recorder.close();
});

test('outcomes queued while a statement is out go together in the next one, up to maxBatch', async () => {
  const store = heldStore();
  const recorder = createRecorder(store, { ...options, maxBatch: 2 });
  const all = [
    recorder.record(record('a', '1')),
    recorder.record(record('b', '1')),
    recorder.record(record('c', '1')),
    recorder.record(record('d', '1')),
  ];
  for (let i = 0; i < 3; i++) {
    await new Promise(setImmediate);
    store.answer();
  }
  assert.deepEqual(await Promise.all(all), [true, true, true, true]);
  assert.deepEqual(
    store.calls.map((c) => c.map((r) => r.deliveryId).join('')),
    ['a', 'bc', 'd'],
  );
  recorder.close();
});

test(
  'retryNow ends the back-off after a failed write: the batch is written again at once',
  { timeout: 10_000 },
  async () => {
    let calls = 0;
    const store = {
      async recordAttempts(records: readonly AttemptRecord[]): Promise<RecordResult> {
        calls += 1;
        if (calls === 1) throw new Error('connection terminated');
        return { recorded: records.map((r) => r.deliveryId), fencedOut: [] };
      },
    };
    // A back-off far longer than the test's timeout: only retryNow can end it.
    const recorder = createRecorder(store, { ...options, retryDelayMs: 600_000, maxRetryDelayMs: 600_000 });
    const written = recorder.record(record('d0', '1'));
    await new Promise(setImmediate);
    assert.equal(calls, 1, 'the first write failed and the recorder waits');
    recorder.retryNow();
    assert.equal(await written, true);
    assert.equal(calls, 2);
    recorder.retryNow(); // nothing is waiting: no effect
    recorder.close();
  },
);

test(
  'after giveUpOnFailure, writes the store takes still go through; the first failed write rejects its batch ' +
    'and the queue at once',
  { timeout: 10_000 },
  async () => {
    let fail = false;
    const calls: AttemptRecord[][] = [];
    const store = {
      async recordAttempts(records: readonly AttemptRecord[]): Promise<RecordResult> {
        calls.push([...records]);
        if (fail) throw new Error('connection terminated');
        return { recorded: records.map((r) => r.deliveryId), fencedOut: [] };
      },
    };
    // A retry delay far beyond the test: a retried write would never settle within it.
    const recorder = createRecorder(store, { ...options, retryDelayMs: 3_600_000, maxRetryDelayMs: 3_600_000 });
    recorder.giveUpOnFailure();
    assert.equal(await recorder.record(record('d1', '1')), true, 'a write the store takes is written');
    fail = true;
    const failing = recorder.record(record('d2', '1'));
    const queued = recorder.record(record('d3', '1'));
    await assert.rejects(failing, /connection terminated/);
    await assert.rejects(queued, /connection terminated/, 'the queued outcome is given up with the failed batch');
    assert.equal(calls.length, 2, 'the failed write was not retried');
    recorder.close();
  },
);

test('giveUpOnFailure ends a back-off under way: the retried batch rejects at once', { timeout: 10_000 }, async () => {
  const calls: AttemptRecord[][] = [];
  const store = {
    async recordAttempts(records: readonly AttemptRecord[]): Promise<RecordResult> {
      calls.push([...records]);
      throw new Error('connection refused');
    },
  };
  const recorder = createRecorder(store, { ...options, retryDelayMs: 3_600_000, maxRetryDelayMs: 3_600_000 });
  const pending = recorder.record(record('d1', '1'));
  await new Promise(setImmediate);
  assert.equal(calls.length, 1, 'the first write failed; the recorder waits to retry');
  recorder.giveUpOnFailure();
  await assert.rejects(pending, /connection refused/);
  assert.equal(calls.length, 1);
  recorder.close();
});
