import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keptSamples, parseLsn, replicaLagMs, type LsnSample } from './replica-lag.ts';

const s = (lsn: number, atMs: number): LsnSample => ({ lsn: BigInt(lsn), atMs });

test('replicaLagMs: the smaller of the two bounds, or null when neither applies', () => {
  const samples = [s(100, 1_000), s(200, 2_000), s(300, 3_000)];
  // [name, replayed position, age of the last replayed commit (ms), now (ms), wanted bound (ms)]
  const cases: [string, number | null, number | null, number, number | null][] = [
    ["replayed this check's position: as fresh as the primary when the check began", 300, 60_000, 3_010, 10],
    ["ahead of this check's position (commits since)", 350, null, 3_010, 10],
    ['idle primary: an old last commit, but the newest sample is replayed', 300, 600_000, 3_005, 5],
    ['behind: the newest replayed sample bounds it', 250, 5_000, 3_000, 1_000],
    ['behind: a recent last commit bounds it better', 250, 200, 3_000, 200],
    ['behind every sample: the commit time alone', 50, 4_000, 3_000, 4_000],
    ['behind every sample and no transaction replayed: unknown', 50, null, 3_000, null],
    ['no replay position (not streaming, or hidden): unknown', null, 10, 3_000, null],
    ['clock skew giving a negative age counts as 0', 250, -30, 3_000, 0],
  ];
  for (const [name, replayed, replayAgeMs, nowMs, want] of cases) {
    const replayLsn = replayed === null ? null : BigInt(replayed);
    assert.equal(replicaLagMs({ replayLsn, replayAgeMs, samples, nowMs }), want, name);
  }
});

test('parseLsn reads both halves of a pg_lsn and orders positions as PostgreSQL does', () => {
  assert.equal(parseLsn('0/0'), 0n);
  assert.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xb374d848n);
  assert.ok(parseLsn('1/0') > parseLsn('0/FFFFFFFF'));
  assert.throws(() => parseLsn('16B374D848'), /not a pg_lsn/);
});

test('keptSamples drops samples older than the window but always keeps the newest, at most max', () => {
  const samples = [s(1, 0), s(2, 1_000), s(3, 5_000), s(4, 9_000)];
  assert.deepEqual(
    keptSamples(samples, 10_000, 6_000).map((x) => Number(x.lsn)),
    [3, 4],
  );
  assert.deepEqual(
    keptSamples(samples, 100_000, 6_000).map((x) => Number(x.lsn)),
    [4],
  );
  assert.deepEqual(
    keptSamples(samples, 10_000, 60_000, 2).map((x) => Number(x.lsn)),
    [3, 4],
  );
  assert.deepEqual(keptSamples([], 0, 1_000), []);
});
