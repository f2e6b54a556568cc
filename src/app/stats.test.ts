import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { STATS_WINDOWS, windowStart } from './stats.ts';

const Q = 900_000;

test('a 7-day window starts at the 15-minute boundary at or before until - 7 d (since 1 ms before it)', () => {
  const { windowMs, bucketMs } = STATS_WINDOWS['7d'];
  for (const until of [
    Date.UTC(2027, 0, 4, 10, 0, 0, 1),
    Date.UTC(2027, 0, 4, 10, 14, 59, 999),
    Date.UTC(2027, 0, 4),
  ]) {
    const since = windowStart(until, windowMs, bucketMs);
    assert.equal((since + 1) % Q, 0, 'the first instant of the window is a boundary');
    assert.ok(since + 1 <= until - windowMs + 1, 'never later than asked');
    assert.ok(since + 1 > until - windowMs - Q, 'at most one roll-up width earlier');
  }
});

test('the shorter windows start exactly their width before until', () => {
  const until = Date.UTC(2027, 0, 4, 10, 7, 3, 5);
  for (const w of ['5m', '1h', '24h'] as const) {
    const { windowMs, bucketMs } = STATS_WINDOWS[w];
    assert.equal(windowStart(until, windowMs, bucketMs), until - windowMs, w);
  }
});
