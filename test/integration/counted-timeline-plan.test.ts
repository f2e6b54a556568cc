/**
 * The statistics after the timeline's three covering indexes came to hold only the rows the statistics count
 * (migration 1764000009800, docs/adr/0016-hot-path-cost.md, decision 18): the figures of a window still come
 * out as the definitions give them over every row of the timeline, uncounted rows (a delivery's first row,
 * replays, pauses) beside them, and the reads of one application or endpoint go through its index and touch
 * no other tenant's rows. The table holds a large application's timeline (20,000 deliveries, three rows
 * each) beside a small one whose rows are of every kind; nothing is rolled up, so the window is read raw.
 * PostgreSQL server: plans are read with EXPLAIN (ANALYZE) of the very statements the store sends.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPgStatsStore } from '../../src/adapters/postgres/delivery/stats-store.ts';
import { createPgEndpointHealthStore } from '../../src/adapters/postgres/endpoint/endpoint-health-store.ts';
import type { StatsScope, TimeInState } from '../../src/ports/stats-store.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertTwoTenants } from '../support/fixtures.ts';
import { assertNoScan, explainingDb } from '../support/plans.ts';

/** One timeline row of the small application's fixture. */
interface Row {
  readonly state: string;
  readonly reason: string;
  readonly latency: number | null;
  readonly wait: number | null;
}

/** Deliveries of the small application: each goes to its first endpoint, every third one also to its second. */
const SMALL = 30;
const NOW = Date.now();

/** The timeline of the small application's delivery `g` (1-based): every kind of row, counted or not. */
function timeline(g: number): Row[] {
  const rows: Row[] = [
    { state: 'pending', reason: g % 6 === 0 ? 'scheduled' : 'published', latency: null, wait: null },
  ];
  rows.push({ state: 'leased', reason: 'claimed', latency: null, wait: g });
  if (g % 5 === 0) rows.push({ state: 'leased', reason: 'reclaimed', latency: null, wait: g % 10 === 0 ? null : 0 });
  if (g % 3 === 0) {
    rows.push({ state: 'pending', reason: 'retry_scheduled', latency: 40, wait: null });
    rows.push({ state: 'pending', reason: 'endpoint_paused', latency: null, wait: null });
    rows.push({ state: 'leased', reason: 'claimed', latency: null, wait: 5 });
  }
  // A dead letter by the sweep (lease lost too often) has no attempt of its own: no latency.
  if (g % 14 === 0) rows.push({ state: 'dead', reason: 'lease_lost_repeatedly', latency: null, wait: null });
  else if (g % 7 === 0) rows.push({ state: 'dead', reason: 'retries_exhausted', latency: 20, wait: null });
  else rows.push({ state: 'succeeded', reason: 'delivered', latency: 10, wait: null });
  if (g % 4 === 0) rows.push({ state: 'pending', reason: 'replay_requested', latency: null, wait: null });
  return rows;
}

/** The figures the statistics define (docs/adr/0013-observability.md), counted over every row given. */
function expected(rows: readonly Row[]): Pick<
  TimeInState,
  'attempts' | 'succeeded' | 'retriesScheduled' | 'deadLetterInflow' | 'reclaims'
> & {
  waits: number;
  latencies: number;
  delivered: number;
} {
  const withLatency = rows.filter((r) => r.latency !== null);
  return {
    attempts: withLatency.length,
    succeeded: withLatency.filter((r) => r.state === 'succeeded').length,
    retriesScheduled: withLatency.filter((r) => r.reason === 'retry_scheduled').length,
    deadLetterInflow: rows.filter((r) => r.state === 'dead').length,
    reclaims: rows.filter((r) => r.state === 'leased' && r.reason === 'reclaimed').length,
    waits: rows.filter((r) => r.wait !== null).length,
    latencies: withLatency.length,
    delivered: withLatency.filter((r) => r.state === 'succeeded').length,
  };
}

let t: TestDatabase;
let small: string;
let first: string;
let second: string;
const firstRows: Row[] = [];
const secondRows: Row[] = [];

before(async () => {
  t = await freshServerDatabase();
  // The timeline is partitioned (migration 1764000015000): storage settings belong to its partitions.
  await t.db.query('ALTER TABLE delivery_events_default SET (autovacuum_enabled = false)');
  const cipher = testCipher();
  const tenants = await insertTwoTenants(t.db, cipher);
  const { big, bigEndpoints } = tenants;
  ({ small, first, second } = tenants);
  const at = (offsetMs: number): Date => new Date(NOW - 50 * 60_000 + offsetMs);
  // The large application: published, claimed and succeeded, as on an installation in service.
  await t.db.query(
    `INSERT INTO delivery_events (delivery_id, state, reason, at, app_id, endpoint_id, since_publish_ms, wait_ms,
      latency_ms)
     SELECT g, s.state, s.reason, $1::timestamptz + (g * 100 + s.k) * interval '1 ms', $2, ($3::text[])[g % 200 + 1],
       s.k,
            CASE WHEN s.state = 'leased' THEN 1 END, CASE WHEN s.state = 'succeeded' THEN 5 END
     FROM generate_series(1, 20000) g,
          (VALUES (0, 'pending', 'published'), (1, 'leased', 'claimed'), (2, 'succeeded', 'delivered')) AS s(k, state,
            reason)`,
    [at(0), big, bigEndpoints],
  );
  const values: unknown[][] = [];
  for (let g = 1; g <= SMALL; g += 1) {
    for (const [endpoint, list] of g % 3 === 0
      ? ([
          [first, firstRows],
          [second, secondRows],
        ] as const)
      : ([[first, firstRows]] as const)) {
      timeline(g).forEach((r, i) => {
        list.push(r);
        values.push([100_000 + g, r.state, r.reason, at(g * 60_000 + i), small, endpoint, i, r.wait, r.latency]);
      });
    }
  }
  for (const v of values) {
    await t.db.query(
      `INSERT INTO delivery_events (delivery_id, state, reason, at, app_id, endpoint_id, since_publish_ms, wait_ms,
        latency_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      v,
    );
  }
  await t.db.query('ANALYZE');
});
after(async () => {
  await t.drop();
});

const window = (scope: StatsScope, db = t.db): Promise<TimeInState> =>
  createPgStatsStore(db).timeInState(scope, new Date(NOW - 3_600_000), new Date(NOW + 60_000), 60_000);

/** Fails unless the figures are the ones the definitions give over `rows`. */
function assertFigures(f: TimeInState, rows: readonly Row[], what: string): void {
  const e = expected(rows);
  assert.deepEqual(
    {
      attempts: f.attempts,
      succeeded: f.succeeded,
      retriesScheduled: f.retriesScheduled,
      deadLetterInflow: f.deadLetterInflow,
      reclaims: f.reclaims,
      waits: f.queueWaitMs.count,
      latencies: f.attemptLatencyMs.count,
      delivered: f.timeToDeliveredMs.count,
    },
    e,
    what,
  );
}

test(
  'the figures of an application, an endpoint and the ' + 'installation count every row the definitions name',
  async () => {
    assertFigures(await window({ appId: small, endpointId: first }), firstRows, 'first endpoint');
    assertFigures(await window({ appId: small, endpointId: second }), secondRows, 'second endpoint');
    assertFigures(await window({ appId: small, endpointId: null }), [...firstRows, ...secondRows], 'small application');
    const all = await window({ appId: null, endpointId: null });
    assert.equal(
      all.attempts,
      expected([...firstRows, ...secondRows]).attempts + 20_000,
      "installation: the large application's attempts too",
    );
    assert.equal(all.queueWaitMs.count, expected([...firstRows, ...secondRows]).waits + 20_000);
  },
);

test(
  "an application's and an endpoint's figures read the timeline " + 'through their index, their own rows only',
  async () => {
    // Each raw read of a scope returns at most its counted rows: outcomes, claims and dead letters.
    const bound = [...firstRows, ...secondRows].filter(
      (r) => r.latency !== null || r.wait !== null || r.state === 'leased' || r.state === 'dead',
    ).length;
    for (const scope of [
      { appId: small, endpointId: null },
      { appId: small, endpointId: first },
    ]) {
      const { db, reads, touched } = explainingDb(t.db, 'delivery_events');
      await window(scope, db);
      const what = scope.endpointId === null ? "the application's figures" : "the endpoint's figures";
      assertNoScan(reads, what);
      // The tail of the window (the rows not rolled up, here all of them) through the scope's index; the edges,
      // a few seconds wide, may be read by time.
      assert.ok(
        reads
          .flat()
          .some((r) =>
            r.includes(scope.endpointId === null ? 'delivery_events_app_at' : 'delivery_events_endpoint_at'),
          ),
        `${what} read their scope's index: ${reads.flat().join(', ')}`,
      );
      assert.ok(touched.length > 0);
      for (const n of touched)
        assert.ok(n <= bound, `${what} touch only the small application's counted rows: ${n} rows, ${bound} counted`);
    }
  },
);

test("an endpoint's health reads the timeline by index", async () => {
  const { db, reads } = explainingDb(t.db, 'delivery_events');
  const health = await createPgEndpointHealthStore(db, () => undefined).health(first, null);
  assert.ok(health !== null);
  assertNoScan(reads, 'endpoint health');
});
