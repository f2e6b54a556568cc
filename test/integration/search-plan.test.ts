/**
 * The cost of a search of the delivery log is bounded by TIDINGS_SEARCH_SCAN_ROWS whatever its filters
 * (src/adapters/postgres/delivery/search-sql.ts; docs/reference/api.md, "Search"): each scan reads its index in
 * order, and a filter that matches nothing makes it read no further than the budget. Two applications share the
 * window (another application's rows must cost the searched one nothing); every scan runs with filters that match
 * nothing, under EXPLAIN ANALYZE of the very statements the store sends. PostgreSQL server (plans).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPgSearchStore } from '../../src/adapters/postgres/delivery/search-store.ts';
import { newId } from '../../src/domain/ids.ts';
import { idRange } from '../../src/domain/search-window.ts';
import type { DeliveryFilters, ScanBounds } from '../../src/ports/search-store.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertTwoTenants } from '../support/fixtures.ts';
import { assertNoScan, explainingDb } from '../support/plans.ts';
import { mulberry32 } from '../support/random.ts';

/** Messages of each application in the window; each goes to two endpoints, the searched one's with an attempt. */
const MESSAGES = 3_000;
const SCAN_ROWS = 200;
const T0 = Date.UTC(2026, 5, 1);

let t: TestDatabase;
let small: string;
let first: string;
const window = { after: new Date(T0 - 1), before: new Date(T0 + MESSAGES * 1000) };
const none: DeliveryFilters = {
  eventTypes: ['matches.nothing'],
  channel: null,
  tag: null,
  states: null,
  statusCodeClass: null,
  statusCode: null,
};

/** `MESSAGES` messages of `appId` a second apart, each delivered to `endpoints`, with an attempt to the first. */
async function fill(appId: string, endpoints: readonly string[], random: () => number): Promise<void> {
  const ids = Array.from({ length: MESSAGES }, (_, i) => newId('msg', T0 + i * 1000, random));
  const insert = `INSERT INTO messages (id, app_id, event_type)
                  SELECT id, $2, 'order.created' FROM unnest($1::text[]) id`;
  await t.db.query(insert, [ids, appId]);
  for (const ep of endpoints) {
    await t.db.query(
      `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at)
       SELECT $2, id, $3, 'succeeded', now() FROM unnest($1::text[]) id`,
      [ids, appId, ep],
    );
  }
  const attempts = ids.map((_, i) => newId('atmpt', T0 + i * 1000 + 500, random));
  await t.db.query(
    `INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger, succeeded,
                           response_status_code, url, duration_ms, dispatcher_id, fencing_token)
     SELECT a.id, d.id, $3, d.message_id, d.endpoint_id, 1, 'scheduled', true, 200, 'http://127.0.0.1:9/', 5, 'plan', 1
     FROM unnest($1::text[], $2::text[]) AS a(id, message_id)
     JOIN deliveries d ON d.message_id = a.message_id AND d.endpoint_id = $4`,
    [attempts, ids, appId, endpoints[0]],
  );
}

before(async () => {
  t = await freshServerDatabase();
  const tenants = await insertTwoTenants(t.db, testCipher());
  ({ small, first } = tenants);
  const random = mulberry32(5);
  await fill(small, [tenants.first, tenants.second], () => random());
  await fill(tenants.big, tenants.bigEndpoints.slice(0, 2), () => random());
  for (const [state, reason] of [
    ['pending', 'published'],
    ['succeeded', null],
  ] as const) {
    const insert = `INSERT INTO delivery_events (delivery_id, state, reason, at)
                    SELECT id, $1, $2, now() FROM deliveries`;
    await t.db.query(insert, [state, reason]);
  }
  await t.db.query('ANALYZE');
});
after(async () => t?.drop());

const bounds = (prefix: 'msg' | 'atmpt'): ScanBounds => ({
  range: idRange(prefix, window),
  order: 'descending',
  after: null,
  scanRows: SCAN_ROWS,
  take: 51,
});

type Store = ReturnType<typeof createPgSearchStore>;

/** Runs `scan` on a store whose statements on `table` are explained; the reads and the most rows one read touched. */
async function explained(table: string, also: readonly string[], scan: (store: Store) => Promise<unknown>) {
  const e = explainingDb(t.db, table, also);
  await scan(createPgSearchStore(e.db));
  return { reads: e.reads.flat(), touched: Math.max(...e.touched) };
}

/** Fails unless some read of the plans used each of `indexes`. */
const usesIndexes = (reads: readonly string[], indexes: readonly string[]): void => {
  for (const index of indexes)
    assert.ok(
      reads.some((r) => r.includes(index)),
      `${index}: ${reads.join(', ')}`,
    );
};

test('a message search reads messages_app_created in order, at most the scan budget, whatever its filter', async () => {
  const { reads, touched } = await explained('messages', [], (s) => s.scanMessages(small, bounds('msg'), none));
  assertNoScan([reads], 'scanMessages');
  usesIndexes(reads, ['messages_app_created']);
  assert.ok(touched <= SCAN_ROWS, `${touched} message rows touched for a budget of ${SCAN_ROWS} (${MESSAGES} in all)`);
});

test('a delivery search of one endpoint reads its two partial indexes, at most the budget', async () => {
  const filters = { ...none, eventTypes: null, states: ['canceled' as const] };
  const scan = (s: Store) => s.scanDeliveries(small, first, bounds('msg'), filters);
  const { reads, touched } = await explained('deliveries', ['messages'], scan);
  assertNoScan([reads], 'scanDeliveries (endpoint)');
  usesIndexes(reads, ['deliveries_endpoint_message', 'deliveries_endpoint_leased', 'messages_pkey']);
  assert.ok(touched <= SCAN_ROWS, `${touched} delivery rows touched for a budget of ${SCAN_ROWS}`);
});

test("a delivery search of every endpoint reads the messages in order and each one's deliveries by key", async () => {
  const scan = (s: Store) => s.scanDeliveries(small, null, bounds('msg'), none);
  const { reads, touched } = await explained('messages', ['deliveries'], scan);
  assertNoScan([reads], 'scanDeliveries (application)');
  usesIndexes(reads, ['messages_app_created', 'deliveries_message_id_endpoint_id_key']);
  assert.ok(touched <= SCAN_ROWS, `${touched} message rows touched for a budget of ${SCAN_ROWS}`);
});

test('an attempt search reads attempts_endpoint, at most the budget', async () => {
  const filters = { ...none, succeeded: false, statusCodeClass: null, statusCode: null };
  const scan = (s: Store) => s.scanAttempts(small, first, bounds('atmpt'), filters);
  const { reads, touched } = await explained('attempts', ['messages'], scan);
  assertNoScan([reads], 'scanAttempts');
  usesIndexes(reads, ['attempts_endpoint', 'messages_pkey']);
  assert.ok(touched <= SCAN_ROWS, `${touched} attempt rows touched for a budget of ${SCAN_ROWS}`);
});

test('the details of a page read each delivery, its endpoint and its latest timeline row by key', async () => {
  const page = 'SELECT id FROM deliveries WHERE endpoint_id = $1 ORDER BY id LIMIT 50';
  const { rows } = await t.db.query<{ id: string }>(page, [first]);
  const ids = rows.map((r) => r.id);
  const describe = (s: Store) => s.describeDeliveries(small, ids, null);
  const { reads } = await explained('deliveries', ['delivery_events', 'endpoints'], describe);
  assertNoScan([reads], 'describeDeliveries');
  usesIndexes(reads, ['deliveries_pkey', 'endpoints_pkey', 'delivery_events_delivery']);
});
