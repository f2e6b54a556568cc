import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRandomPool } from './random-pool.ts';

test('the random pool never hands out the same bytes twice, across refills', () => {
  const pool = createRandomPool(64);
  const seen = new Set<string>();
  for (let i = 0; i < 1_000; i += 1) {
    const iv = pool.take(12);
    assert.equal(iv.length, 12);
    const hex = iv.toString('hex');
    assert.ok(!seen.has(hex), `IV ${hex} repeated at draw ${i}`);
    seen.add(hex);
  }
});

test('a draw is a copy the caller owns: later draws and refills do not change it', () => {
  const pool = createRandomPool(24);
  const first = pool.take(12);
  const kept = Buffer.from(first);
  for (let i = 0; i < 10; i += 1) pool.take(12);
  assert.deepEqual(first, kept);
});

test('a draw larger than the pool is refused', () => {
  assert.throws(() => createRandomPool(16).take(17), RangeError);
});
