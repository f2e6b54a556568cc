import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { partitionSuffix, rangesToMake } from './history-partitions.ts';

const H = 3_600_000;
const T = Date.UTC(2027, 0, 4);

test('the current range and the ranges ahead, aligned to the width, skipping those that exist', () => {
  assert.deepEqual(rangesToMake(T + 30 * 60_000, H, 2, []), [
    { fromMs: T, toMs: T + H },
    { fromMs: T + H, toMs: T + 2 * H },
    { fromMs: T + 2 * H, toMs: T + 3 * H },
  ]);
  assert.deepEqual(rangesToMake(T + 30 * 60_000, H, 2, [{ fromMs: T + H, toMs: T + 2 * H }]), [
    { fromMs: T, toMs: T + H },
    { fromMs: T + 2 * H, toMs: T + 3 * H },
  ]);
});

test('a range partly covered (the legacy partition up to a midnight) is cut to what is not', () => {
  assert.deepEqual(rangesToMake(T, 24 * H, 1, [{ fromMs: null, toMs: T + 6 * H }]), [
    { fromMs: T + 6 * H, toMs: T + 24 * H },
    { fromMs: T + 24 * H, toMs: T + 48 * H },
  ]);
  assert.deepEqual(rangesToMake(T, 24 * H, 0, [{ fromMs: T + 12 * H, toMs: null }]), [{ fromMs: T, toMs: T + 12 * H }]);
});

test('a partition is named after its first instant in UTC', () => {
  assert.equal(partitionSuffix(T + 13 * H + 5 * 60_000), 'p20270104t130500');
});
