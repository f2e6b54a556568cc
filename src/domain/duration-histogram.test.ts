import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { mulberry32 } from '../../test/support/random.ts';
import {
  addInto,
  BOUNDS,
  bucketOf,
  countOf,
  PERCENTILE_RELATIVE_ERROR,
  percentiles,
  representative,
} from './duration-histogram.ts';

/** PostgreSQL's percentile_cont over whole values: linear interpolation between the closest ranks. */
function percentileCont(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const h = p * (sorted.length - 1);
  const lo = Math.floor(h);
  return sorted[lo]! + (h - lo) * (sorted[Math.ceil(h)]! - sorted[lo]!);
}

function histogramOf(values: readonly number[]): Record<number, number> {
  const h: Record<number, number> = {};
  for (const v of values) h[bucketOf(v)] = (h[bucketOf(v)] ?? 0) + 1;
  return h;
}

test('the bucket bounds are pinned: they are part of the stored rollup format (ADR 0015)', () => {
  assert.equal(BOUNDS.length, 305);
  assert.deepEqual(BOUNDS.slice(0, 20), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 21]);
  assert.equal(BOUNDS.at(-1), 2 ** 40);
  assert.equal(bucketOf(48 * 3_600_000), 202, '48 h');
  let checksum = 0;
  for (const b of BOUNDS) checksum = (checksum * 31 + b) % 1_000_000_007;
  assert.equal(checksum, 64_739_003, 'changing the bounds needs a migration that rebuilds the rollups');
});

test('every bucket is at most 2^(1/8) wide relative to its lower bound, so the bound is under 4.6 %', () => {
  for (let i = 1; i + 1 < BOUNDS.length; i += 1)
    assert.ok(BOUNDS[i + 1]! - 1 <= BOUNDS[i]! * 2 ** (1 / 8), `bucket ${i}`);
  assert.ok(PERCENTILE_RELATIVE_ERROR > 0.04 && PERCENTILE_RELATIVE_ERROR < 0.046, String(PERCENTILE_RELATIVE_ERROR));
});

test('a value falls in the bucket whose lower bound is the largest not above it; negatives count as 0', () => {
  for (const [v, i] of [
    [-5, 0],
    [0, 0],
    [1, 1],
    [16, 16],
    [17, 16],
    [18, 17],
    [2 ** 40 + 5, BOUNDS.length - 1],
  ] as const)
    assert.equal(bucketOf(v), i, `bucketOf(${v})`);
  for (let i = 0; i < BOUNDS.length; i += 1) assert.equal(bucketOf(BOUNDS[i]!), i);
  assert.equal(representative(15), 15);
  assert.equal(representative(16), 16.5, 'the middle of 16 and 17 ms');
  assert.equal(representative(17), 18.5, 'the middle of 18 and 19 ms');
});

test('values up to 15 ms give the exact percentile_cont figures', () => {
  const values = [0, 1, 1, 3, 7, 15, 15, 2, 9];
  const got = percentiles(histogramOf(values), [0, 0.5, 0.9, 0.99, 1]);
  assert.deepEqual(
    got,
    [0, 0.5, 0.9, 0.99, 1].map((p) => percentileCont(values, p)),
  );
});

test('percentiles of random samples stay within the stated bound of percentile_cont', () => {
  const random = mulberry32(7);
  for (let round = 0; round < 200; round += 1) {
    const n = 1 + Math.floor(random() * 300);
    const scale = 10 ** (random() * 8);
    const values = Array.from({ length: n }, () => Math.round(random() * random() * scale));
    const h = histogramOf(values);
    assert.equal(countOf(h), n);
    const fractions = [0.5, 0.9, 0.99];
    percentiles(h, fractions).forEach((got, i) => {
      const exact = percentileCont(values, fractions[i]!);
      assert.ok(
        Math.abs(got! - exact) <= PERCENTILE_RELATIVE_ERROR * exact + 1e-9,
        `round ${round}: p${fractions[i]} ${got} vs ${exact}`,
      );
    });
  }
});

test('histograms add bucket by bucket, and an empty one has no percentiles', () => {
  const into: Record<number, number> = { 3: 1 };
  addInto(into, { 3: 2, 40: 1 });
  assert.deepEqual(into, { 3: 3, 40: 1 });
  assert.deepEqual(percentiles({}, [0.5, 0.99]), [null, null]);
});
