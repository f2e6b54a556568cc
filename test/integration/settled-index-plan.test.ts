/**
 * The reads of an endpoint's or an application's deliveries after `deliveries_app_state` and
 * `deliveries_endpoint_message` became partial (migration 1764000009700, docs/adr/0016-hot-path-cost.md,
 * decision 17): each read still counts and lists every delivery it names, leased and pending ones included,
 * and none of them scans `deliveries`. The table holds a large application (20,000 deliveries over 200
 * endpoints) beside a small one whose deliveries are in every state; the small one is read. PostgreSQL
 * server: plans are read with EXPLAIN of the very statements and parameters the stores send, and, for the
 * statement trigger of an endpoint's deletion, with auto_explain.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPgDeliveryQueryStore } from '../../src/adapters/postgres/delivery/delivery-query-store.ts';
import { createPgReplayStore } from '../../src/adapters/postgres/delivery/replay-store.ts';
import { createPgStatsStore } from '../../src/adapters/postgres/delivery/stats-store.ts';
import { createPgEndpointHealthStore } from '../../src/adapters/postgres/endpoint/endpoint-health-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import type { DeliveryState } from '../../src/domain/delivery-state.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertEndpoint, insertTwoTenants } from '../support/fixtures.ts';
import { assertNoScan, deliveryReads, explainedPlans, explainingDb } from '../support/plans.ts';

const STATES: readonly DeliveryState[] = ['pending', 'leased', 'succeeded', 'dead', 'skipped', 'canceled'];
/** Messages of the small application; each goes to both of its endpoints, the first endpoint's in every state. */
const SMALL = 42;

let t: TestDatabase;
let small: string;
let first: string;
let second: string;
let deep: string;
let big: string;
const cipher = testCipher();

before(async () => {
  t = await freshServerDatabase();
  await t.db.query('ALTER TABLE deliveries SET (autovacuum_enabled = false)');
  const tenants = await insertTwoTenants(t.db, cipher, 5_000);
  const { bigEndpoints } = tenants;
  ({ big, small, first, second } = tenants);
  // Message ids sort in creation order, as the API's do. The large application's deliveries are mostly
  // succeeded, with some pending, leased and dead, as on an installation in service.
  await t.db.query(
    `INSERT INTO messages (id, app_id, event_type, payload, created_at)
     SELECT 'msg_big_' || lpad(g::text, 8, '0'), $1, 'user.created', '\\x7b7d'::bytea,
       now() - interval '1 hour' + g * interval '1 ms'
     FROM generate_series(1, 20000) g`,
    [big],
  );
  await t.db.query(
    `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, lease_expires_at, dispatcher_id)
     SELECT $1, 'msg_big_' || lpad(g::text, 8, '0'), ($2::text[])[g % 200 + 1], s.state, now(), CASE
       WHEN s.state = 'leased' THEN now() + interval '1 minute' END,
            CASE WHEN s.state = 'leased' THEN 'D' END
     FROM generate_series(1, 20000) g,
          LATERAL (SELECT CASE g % 100 WHEN 0 THEN 'pending' WHEN 1 THEN 'leased' WHEN 2 THEN 'dead'
            ELSE 'succeeded' END AS state) s`,
    [big, bigEndpoints],
  );
  await t.db.query(
    `INSERT INTO messages (id, app_id, event_type, payload, created_at)
     SELECT 'msg_small_' || lpad(g::text, 8, '0'), $1, 'user.created', '\\x7b7d'::bytea,
       now() - interval '1 minute' + g * interval '1 ms'
     FROM generate_series(1, ${SMALL}) g`,
    [small],
  );
  await t.db.query(
    `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, lease_expires_at, dispatcher_id,
      last_status_code)
     SELECT $1, 'msg_small_' || lpad(g::text, 8, '0'), ep.id, s.state, now(), CASE WHEN s.state = 'leased'
       THEN now() + interval '1 minute' END,
            CASE WHEN s.state = 'leased' THEN 'D' END, CASE WHEN s.state IN ('succeeded', 'dead') THEN 200 END
     FROM generate_series(1, ${SMALL}) g CROSS JOIN (VALUES ($2::text, 0), ($3::text, 1)) AS ep(id, k),
          LATERAL (SELECT CASE WHEN ep.k = 0 THEN ($4::text[])[g % 6 + 1] ELSE 'succeeded' END AS state) s`,
    [small, first, second, STATES],
  );
  // An endpoint of the large application with a long history: a delivery of every one of its messages.
  deep = (await insertEndpoint(t.db, cipher, { appId: big, url: 'http://127.0.0.1:9/deep' })).id;
  await t.db.query(
    `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, lease_expires_at, dispatcher_id)
     SELECT $1, 'msg_big_' || lpad(g::text, 8, '0'), $2, s.state, now(), CASE WHEN s.state = 'leased'
       THEN now() + interval '1 minute' END,
            CASE WHEN s.state = 'leased' THEN 'D' END
     FROM generate_series(1, 20000) g, LATERAL (SELECT CASE WHEN g % 1000 = 0 THEN 'leased'
       ELSE 'succeeded' END AS state) s`,
    [big, deep],
  );
  // Each delivery's claim on the timeline, the large application's just now (an endpoint's health counts the
  // claims of the last second).
  await t.db.query(
    `INSERT INTO delivery_events (delivery_id, state, reason, at, app_id, endpoint_id, since_publish_ms, wait_ms)
     SELECT d.id, 'leased', 'claimed', CASE WHEN d.app_id = $1 THEN now() ELSE now() - interval '1 minute' END,
       d.app_id, d.endpoint_id, 0, 0 FROM deliveries d`,
    [big],
  );
  await t.db.query('ANALYZE');
});
after(async () => {
  await t.drop();
});

/** The first endpoint's deliveries per state: each state on every sixth message. */
const expectedCounts = (): Record<DeliveryState, number> =>
  Object.fromEntries(
    STATES.map((s, i) => [s, Array.from({ length: SMALL }, (_, g) => (g + 1) % 6).filter((r) => r === i).length]),
  ) as Record<DeliveryState, number>;

/**
 * Fails when a read of `deliveries` by a read-only statement touched more rows than the small application has:
 * it read the large application's deliveries, as a read of all pending or leased ones through a state index would.
 */
function assertOwnRowsOnly(touched: number[], what: string): void {
  assert.ok(touched.length > 0, `${what}: a read-only statement read deliveries`);
  for (const n of touched)
    assert.ok(n <= 2 * SMALL, `each read of deliveries by ${what} touches only the small application's: ${n} rows`);
}

test("an endpoint's stats count every state, leased included, through indexes", async () => {
  const { db, reads, touched } = explainingDb(t.db, 'deliveries');
  const counts = await createPgDeliveryQueryStore(db, cipher).endpointStats(small, first, null, null);
  assert.deepEqual(counts, expectedCounts());
  const windowed = await createPgDeliveryQueryStore(db, cipher).endpointStats(
    small,
    first,
    new Date(Date.now() - 3_600_000),
    null,
  );
  assert.deepEqual(windowed, expectedCounts(), 'the same within a window that holds every message');
  assertNoScan(reads, 'endpoint stats');
  assertOwnRowsOnly(touched, 'endpoint stats');
});

test("an endpoint's messages list every delivery in message order, leased ones included, page by page", async () => {
  const { db, reads, touched } = explainingDb(t.db, 'deliveries');
  const store = createPgDeliveryQueryStore(db, cipher);
  const base = {
    withPayload: false,
    states: null,
    eventTypes: null,
    channel: null,
    tag: null,
    before: null,
    after: null,
  };
  for (const order of ['ascending', 'descending'] as const) {
    const seen: string[] = [];
    let iterator: string | null = null;
    for (let pages = 0; pages < 20; pages += 1) {
      const page = await store.listEndpointMessages(small, first, { ...base, limit: 5, iterator, order });
      seen.push(...page.data.map((r) => r.message.id));
      if (page.done) break;
      iterator = page.iterator;
    }
    const all = Array.from({ length: SMALL }, (_, g) => `msg_small_${String(g + 1).padStart(8, '0')}`);
    assert.deepEqual(seen, order === 'ascending' ? all : [...all].reverse(), `every message once, ${order}`);
  }
  const leased = await store.listEndpointMessages(small, first, {
    ...base,
    states: ['leased'],
    limit: 50,
    iterator: null,
    order: 'ascending',
  });
  assert.equal(leased.data.length, expectedCounts().leased, 'the leased ones by state');
  assert.ok(leased.data.every((r) => r.state === 'leased'));
  assertNoScan(reads, 'endpoint messages');
  assertOwnRowsOnly(touched, 'endpoint messages');
});

test('a page of a long endpoint history reads one page of each part, not the whole history', async () => {
  const { db, reads, touched } = explainingDb(t.db, 'deliveries');
  const store = createPgDeliveryQueryStore(db, cipher);
  const base = {
    withPayload: false,
    states: null,
    eventTypes: null,
    channel: null,
    tag: null,
    before: null,
    after: null,
    limit: 5,
  };
  const firstPage = await store.listEndpointMessages(big, deep, { ...base, iterator: null, order: 'descending' });
  assert.deepEqual(
    firstPage.data.map((r) => r.message.id),
    [20000, 19999, 19998, 19997, 19996].map((g) => `msg_big_${String(g).padStart(8, '0')}`),
  );
  assert.equal(firstPage.data[0]!.state, 'leased', 'the newest, leased, from the leased part');
  const next = await store.listEndpointMessages(big, deep, {
    ...base,
    iterator: firstPage.iterator,
    order: 'descending',
  });
  assert.deepEqual(
    next.data.map((r) => r.message.id),
    [19995, 19994, 19993, 19992, 19991].map((g) => `msg_big_${String(g).padStart(8, '0')}`),
  );
  // The leased ones alone: the part not leased is not read.
  const leased = await store.listEndpointMessages(big, deep, {
    ...base,
    states: ['leased'],
    iterator: null,
    order: 'descending',
  });
  assert.deepEqual(
    leased.data.map((r) => r.message.id),
    [20000, 19000, 18000, 17000, 16000].map((g) => `msg_big_${String(g).padStart(8, '0')}`),
  );
  assertNoScan(reads, 'a long endpoint history');
  // Each part reads at most a page and one row more by its index; the leased part holds 20 deliveries.
  for (const n of touched)
    assert.ok(n <= 20 + 6, `a page of 5 touches at most a page of each part: ${n} rows of 20,000`);
  // Its messages are read by key, one per delivery of the page, not walked from the start of their index.
  const { db: byMessages, touched: messagesTouched } = explainingDb(t.db, 'messages');
  await createPgDeliveryQueryStore(byMessages, cipher).listEndpointMessages(big, deep, {
    ...base,
    iterator: next.iterator,
    order: 'descending',
  });
  for (const n of messagesTouched)
    assert.ok(n <= 20 + 6, `a page of 5 reads at most a page of messages for each part: ${n} rows`);
});

test("an endpoint's health counts its deliveries by state through indexes", async () => {
  const { db, reads, touched } = explainingDb(t.db, 'deliveries', ['delivery_events']);
  const health = await createPgEndpointHealthStore(db, () => undefined).health(first, null);
  assert.ok(health !== null);
  assert.deepEqual(health.deliveries, expectedCounts());
  assertNoScan(reads, 'endpoint health');
  assertOwnRowsOnly(touched, 'endpoint health');
});

test("an application's overview counts its deliveries by state through indexes", async () => {
  const { db, reads, touched } = explainingDb(t.db, 'deliveries', ['endpoints']);
  const overview = await createPgStatsStore(db).overview({ appId: small, endpointId: null }, null, 10);
  const e = expectedCounts();
  assert.deepEqual(overview.deliveries, { ...e, succeeded: e.succeeded + SMALL });
  assert.equal(overview.backlog.leasedInFlight, e.leased);
  assert.equal(overview.backlog.dueNow, e.pending);
  assertNoScan(reads, 'application overview');
  assertOwnRowsOnly(touched, 'application overview');
});

test('dead letters and replays by state read settled deliveries through deliveries_app_state', async () => {
  const { db, reads } = explainingDb(t.db, 'deliveries');
  const dead = await createPgDeliveryQueryStore(db, cipher).listDeadLetters(small, {
    endpointId: null,
    eventTypes: null,
    before: null,
    after: null,
    limit: 50,
    iterator: null,
    order: 'ascending',
  });
  assert.equal(dead.data.length, expectedCounts().dead);
  const replays = createPgReplayStore(db, () => undefined);
  const base = {
    appId: small,
    since: new Date(0),
    until: null,
    after: null,
    limit: 100,
    intervalMs: 0,
    slots: {},
    reason: 'replay_requested',
    now: null,
    eventTypes: null,
    channel: null,
    tag: null,
    statusCodeClass: null,
  };
  await runTx(db, async (tx) => {
    const all = await replays.replayDeliveries(tx, {
      ...base,
      endpointId: null,
      states: ['succeeded', 'dead', 'skipped'],
    });
    const e = expectedCounts();
    assert.equal(
      all.scanned,
      e.succeeded + e.dead + e.skipped + SMALL,
      'every settled delivery of the application in those states',
    );
    const one = await replays.replayDeliveries(tx, {
      ...base,
      endpointId: second,
      states: ['pending', 'leased'] as never,
    });
    assert.equal(one.scanned, 0, 'a replay never selects pending or leased deliveries');
    throw new Error('roll back');
  }).catch((err: unknown) => {
    if (!(err instanceof Error) || err.message !== 'roll back') throw err;
  });
  assertNoScan(reads, 'dead letters and replays');
});

test(
  'dead letters of every application are read one application at a time through deliveries_app_state, never by a ' +
    'scan',
  async () => {
    const { db, reads, touched } = explainingDb(t.db, 'deliveries');
    const store = createPgDeliveryQueryStore(db, cipher);
    const query = {
      endpointId: null,
      eventTypes: null,
      before: null,
      after: null,
      limit: 50,
      iterator: null,
      order: 'descending' as const,
    };
    const dead = await store.listDeadLetters(null, query);
    const newest = await t.db.query<{ id: string; app_id: string }>(
      `SELECT d.id::text AS id, d.app_id FROM deliveries d WHERE d.state = 'dead' ORDER BY d.id DESC LIMIT 50`,
    );
    assert.deepEqual(
      dead.data.map((d) => [d.cursor, d.appId]),
      newest.rows.map((r) => [r.id, r.app_id]),
      'the newest dead letters of every application, newest first',
    );
    assert.ok(dead.data.some((d) => d.appId === small));
    assertNoScan(reads, 'dead letters of every application');
    assert.deepEqual(reads, [['Index Scan deliveries_app_state']]);
    const apps = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM applications')).rows[0]!.n;
    // A read of the whole table's newest rows (its primary key, backwards) touched 24,483 of them here.
    assert.ok(
      touched[0]! <= apps * (query.limit + 1),
      `at most limit + 1 rows of each application: ${touched[0]} touched`,
    );
  },
);

test('deleting an endpoint deletes its deliveries in every state, each part through an index', async () => {
  assert.ok(t.url !== undefined);
  const plans = await explainedPlans(
    t.url,
    `BEGIN; DELETE FROM endpoints WHERE id = '${first}'; ROLLBACK`,
    1,
    'DELETE FROM deliveries WHERE endpoint_id',
  );
  assert.equal(plans.length, 2, 'two statements: the leased deliveries and the others');
  for (const plan of plans)
    assert.ok(
      !deliveryReads(plan).some((x) => x.startsWith('Seq Scan')),
      `the deletion reads deliveries by index: ${deliveryReads(plan).join(', ')}`,
    );
  let left = -1;
  await t.db
    .tx(async (q) => {
      await q.query('DELETE FROM endpoints WHERE id = $1', [first]);
      left = (await q.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1', [first]))
        .rows[0]!.n;
      throw new Error('roll back');
    })
    .catch((err: unknown) => {
      if (!(err instanceof Error) || err.message !== 'roll back') throw err;
    });
  assert.equal(left, 0, 'none of its deliveries is left, leased ones included');
});
