/**
 * Kept history (docs/adr/0031-kept-history.md): what the history carried over into the default partitions costs.
 * Server engine only; not a timed test. A fresh database gets daily partitions, then `N` attempts and 3 × `N`
 * timeline rows of settled, not succeeded deliveries straight into the default partitions; it times the making of
 * one day's partitions before and after (each reads the default partition), shows the plans of the attempt lists
 * and of a timeline, and times the drop of aged partitions holding `N` attempts of deliveries that are gone.
 *
 *   TIDINGS_TEST_ADMIN_URL=postgresql://postgres@127.0.0.1:5432/test ./node_modules/.bin/node bench/kept-history.ts [N]
 */
import { createPgHistoryPartitions } from '../src/adapters/postgres/delivery/history-partitions.ts';
import { freshServerDatabase } from '../test/support/db.ts';

const DAY = 86_400_000;
const N = Number(process.argv[2] ?? 1_000_000);
const t = await freshServerDatabase();
const db = t.db;
const h = createPgHistoryPartitions(db);
let now = Date.UTC(2027, 0, 1) + 12 * 3_600_000;
const lockTimeoutMs = 1000;
const ms = async (f: () => Promise<unknown>) => {
  const s = performance.now();
  await f();
  return Math.round(performance.now() - s);
};
await h.ensure({ nowMs: now, widthMs: DAY, ahead: 3, lockTimeoutMs });
const makeOne = async () => {
  now += DAY;
  return ms(() => h.ensure({ nowMs: now, widthMs: DAY, ahead: 3, lockTimeoutMs }));
};
const empty = [await makeOne(), await makeOne(), await makeOne()];
const past = new Date(now - 90 * DAY).toISOString();
for (let k = 0; k < N; k += 100_000)
  await db.query(
    `INSERT INTO attempts_default (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger,
  succeeded, response_status_code, url, duration_ms, dispatcher_id, fencing_token, created_at)
  SELECT 'atmpt_' || g, g, 'app_' || (g % 100), 'msg_' || g, 'ep_' || (g % 1000), 1, 'scheduled', false, 500,
         'http://127.0.0.1:9/x', 12, 'D', g, $1::timestamptz + g * interval '1 ms'
  FROM generate_series($3::int, $2::int) g`,
    [past, Math.min(k + 100_000, N), k + 1],
  );
for (let k = 0; k < N * 3; k += 100_000)
  await db.query(
    `INSERT INTO delivery_events_default (id, delivery_id, state, at, app_id,
  endpoint_id, since_publish_ms, reason) OVERRIDING SYSTEM VALUE
  SELECT -g, g / 3, (ARRAY['pending','leased','dead'])[g % 3 + 1], $1::timestamptz + g * interval '1 ms',
         'app_' || (g % 100), 'ep_' || (g % 1000), 0, 'r'
  FROM generate_series($3::int, $2::int) g`,
    [past, Math.min(k + 100_000, N * 3), k + 1],
  );
await db.query('ANALYZE attempts; ANALYZE delivery_events');
const size = (
  await db.query<{ s: string }>(
    `SELECT pg_size_pretty(pg_total_relation_size('attempts_default')
                          + pg_total_relation_size('delivery_events_default')) s`,
  )
).rows[0]!.s;
const full = [await makeOne(), await makeOne(), await makeOne()];
const plan = async (sql: string, p: unknown[]) =>
  (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${sql}`, p)).rows
    .map((r) => r['QUERY PLAN'])
    .filter((l) => /_default|Execution/.test(l))
    .map((l) => l.trim())
    .join(' | ');
console.log(JSON.stringify({ N, defaultSize: size, ensureEmptyDefaultMs: empty, ensureFullDefaultMs: full }));
console.log(
  'list by message:',
  await plan(`SELECT id FROM attempts WHERE message_id = $1 ORDER BY id DESC LIMIT 50`, ['msg_77777']),
);
console.log(
  'list by endpoint:',
  await plan(`SELECT id FROM attempts WHERE endpoint_id = $1 ORDER BY id DESC LIMIT 50`, ['ep_7']),
);
console.log(
  'timeline:',
  await plan(`SELECT id FROM delivery_events WHERE delivery_id = $1 ORDER BY id LIMIT 50`, ['77777']),
);
// Carry-over cost: a dated partition of N attempts rows whose deliveries are gone (one probe each), dropped.
const oldest = now - 3 * DAY;
const inOld = new Date(oldest - 3 * DAY + 1000).toISOString();
for (let k = 0; k < N; k += 100_000)
  await db.query(
    `INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger,
  succeeded, url, duration_ms, dispatcher_id, fencing_token, created_at)
  SELECT 'old_' || g, g, 'a', 'm', 'e', 1, 'scheduled', true, 'u', 1, 'D', g, $1::timestamptz
  FROM generate_series($3::int, $2::int) g`,
    [inOld, Math.min(k + 100_000, N), k + 1],
  );
const drop = await ms(async () =>
  console.log(JSON.stringify(await h.dropAged({ nowMs: now, ageMs: DAY, lockTimeoutMs }))),
);
console.log(JSON.stringify({ dropAgedWithNOldRowsMs: drop }));
await t.drop();
