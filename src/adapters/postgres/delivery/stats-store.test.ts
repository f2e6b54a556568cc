import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { rollupLevelFor } from '../../../ports/stats-store.ts';
import { planRead } from './stats-store.ts';

const T = Date.UTC(2026, 0, 1, 12, 0, 0);

test(
  'each window reads the finest rollup level that divides its ' + 'series bucket and is kept for the whole window',
  () => {
    assert.equal(rollupLevelFor(300_000, 10_000), 1_000);
    assert.equal(rollupLevelFor(3_600_000, 60_000), 10_000);
    assert.equal(rollupLevelFor(86_400_000, 900_000), 60_000);
    assert.equal(rollupLevelFor(7 * 86_400_000, 7_200_000), 900_000);
    assert.equal(rollupLevelFor(30 * 86_400_000, 7_200_000), null, 'no level is kept that long: raw rows only');
  },
);

test(
  'a 24 h read covers whole minutes, then whole ten and single seconds up to until: raw rows only at the edges ' +
    'under a level',
  () => {
    const since = T - 86_400_000 + 12_345;
    const until = T + 754_321; // 12:12:34.321
    const plan = planRead(since, until, 60_000);
    assert.equal(plan.f1, T - 86_400_000 + 60_000, 'the first whole minute after since');
    assert.deepEqual(plan.parts, [
      { levelMs: 60_000, from: plan.f1, to: T + 720_000 },
      { levelMs: 10_000, from: T + 720_000, to: T + 750_000 },
      { levelMs: 1_000, from: T + 750_000, to: T + 754_000 },
    ]);
    assert.equal(plan.g, T + 754_000, 'the raw trailing edge is under a second');
  },
);

test('without a level, or in a window shorter than one level bucket, every row is read raw', () => {
  assert.deepEqual(planRead(T, T + 5_000, null), { parts: [], f1: T + 5_001, g: T + 5_001 });
  const short = planRead(T + 100, T + 900, 1_000);
  assert.deepEqual(short.parts, []);
  assert.equal(short.f1, short.g);
});
