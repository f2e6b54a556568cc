import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keptSamples, parseLsn, replicaLagMs, type LsnSample } from './replica-lag.ts';

const s = (lsn: number, atMs: number): LsnSample => ({ lsn: BigInt(lsn), atMs });

test('replicaLagMs: the smaller of the two bounds, or null when neither applies', () => {
  const samples = [s(100, 1_000), s(200, 2_000), s(300, 3_000)];
  const cases: { name: string; replayLsn: number | null; replayAgeMs: number | null; nowMs: number; want: number | null }[] = [
    { name: 'replayed this check\'s position: as fresh as the primary when the check began', replayLsn: 300, replayAgeMs: 60_000, nowMs: 3_010, want: 10 },
    { name: 'ahead of this check\'s position (commits since)', replayLsn: 350, replayAgeMs: null, nowMs: 3_010, want: 10 },
    { name: 'idle primary: an old last commit, but the newest sample is replayed', replayLsn: 300, replayAgeMs: 600_000, nowMs: 3_005, want: 5 },
    { name: 'behind: the newest replayed sample bounds it', replayLsn: 250, replayAgeMs: 5_000, nowMs: 3_000, want: 1_000 },
    { name: 'behind: a recent last commit bounds it better', replayLsn: 250, replayAgeMs: 200, nowMs: 3_000, want: 200 },
    { name: 'behind every sample: the commit time alone', replayLsn: 50, replayAgeMs: 4_000, nowMs: 3_000, want: 4_000 },
    { name: 'behind every sample and no transaction replayed: unknown', replayLsn: 50, replayAgeMs: null, nowMs: 3_000, want: null },
    { name: 'no replay position (not streaming, or hidden): unknown', replayLsn: null, replayAgeMs: 10, nowMs: 3_000, want: null },
    { name: 'clock skew giving a negative age counts as 0', replayLsn: 250, replayAgeMs: -30, nowMs: 3_000, want: 0 },
  ];
  for (const c of cases) {
    const got = replicaLagMs({ replayLsn: c.replayLsn === null ? null : BigInt(c.replayLsn), replayAgeMs: c.replayAgeMs, samples, nowMs: c.nowMs });
    assert.equal(got, c.want, c.name);
  }
});

test('parseLsn reads both halves of a pg_lsn and orders positions as PostgreSQL does', () => {
  assert.equal(parseLsn('0/0'), 0n);
  assert.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xB374D848n);
  assert.ok(parseLsn('1/0') > parseLsn('0/FFFFFFFF'));
  assert.throws(() => parseLsn('16B374D848'), /not a pg_lsn/);
});

test('keptSamples drops samples older than the window but always keeps the newest, at most max', () => {
  const samples = [s(1, 0), s(2, 1_000), s(3, 5_000), s(4, 9_000)];
  assert.deepEqual(keptSamples(samples, 10_000, 6_000).map((x) => Number(x.lsn)), [3, 4]);
  assert.deepEqual(keptSamples(samples, 100_000, 6_000).map((x) => Number(x.lsn)), [4]);
  assert.deepEqual(keptSamples(samples, 10_000, 60_000, 2).map((x) => Number(x.lsn)), [3, 4]);
  assert.deepEqual(keptSamples([], 0, 1_000), []);
});
