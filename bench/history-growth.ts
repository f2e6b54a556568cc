/**
 * History growth (docs/adr/0030-history-partitions.md, docs/guides/capacity.md): the claim and the attempt lists
 * against the size of the history, and the 7-day time-in-state read at 1,000,000 timeline rows an hour. Server
 * engine only; not a timed test. For each history size, a fresh database is migrated, given 31 daily partitions
 * back from now (as Tidings makes them) and filled with settled deliveries spread over the last 30 days, each with
 * one attempt and three timeline rows (history rows = attempts + timeline rows), plus the same backlog of due
 * deliveries; then the store's own claim (8 at a time, each in a rolled-back transaction so the backlog stays) and
 * the store's attempt lists (by endpoint and by message, 50 a page) are timed.
 *
 *   ./node_modules/.bin/node bench/history-growth.ts [--sizes 10000,10000000] [--claims 300] [--lists 300]
 *     [--stats-rows 1000000] [--server postgresql://postgres@127.0.0.1:5432/postgres]
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { plaintextCipher } from '../src/adapters/crypto/key-ring.ts';
import { openDb, type Db, type Queryable } from '../src/adapters/postgres/db.ts';
import { createPgDeliveryStore } from '../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgHistoryPartitions } from '../src/adapters/postgres/delivery/history-partitions.ts';
import { createPgStatsRollup } from '../src/adapters/postgres/delivery/stats-rollup.ts';
import { createPgStatsStore } from '../src/adapters/postgres/delivery/stats-store.ts';
import { createPgMessageQueryStore } from '../src/adapters/postgres/message/message-query-store.ts';
import { migrate } from '../src/adapters/postgres/migrator.ts';
import { STATS_WINDOWS, windowStart } from '../src/app/stats.ts';
import { silentLogger } from '../test/support/logger.ts';
import { fillTimeline } from './scenario-stats.ts';
import { quantile, round } from './stats.ts';
import { databaseUrl, dropDatabase, recreateDatabase } from './tidings.ts';

const DAY = 86_400_000;
const APPS = 10;
const ENDPOINTS = 100;
/** Days the history is spread over (the default TIDINGS_RETENTION_SUCCEEDED_AGE). */
const HISTORY_DAYS = 30;
/** Deliveries the claim takes at a time (TIDINGS_CLAIM_BATCH's order of magnitude). */
const CLAIM_LIMIT = 8;
/** History rows per settled delivery: one attempt, three timeline rows (published, claimed, succeeded). */
const ROWS_PER_DELIVERY = 4;
const DB_NAME = 'tidings_bench_history';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,10000000' },
    claims: { type: 'string', default: '300' },
    lists: { type: 'string', default: '300' },
    'stats-rows': { type: 'string', default: '1000000' },
    server: { type: 'string', default: 'postgresql://postgres@127.0.0.1:5432/postgres' },
  },
});
const sizes = values.sizes
  .split(',')
  .filter((s) => s !== '')
  .map(Number);
const claims = Number(values.claims);
const lists = Number(values.lists);
const statsRows = Number(values['stats-rows']);
const url = databaseUrl(values.server, DB_NAME);

const log = (line: string): void => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
const pct = (ms: readonly number[]) => ({
  p50: round(quantile(ms, 0.5), 3),
  p99: round(quantile(ms, 0.99), 3),
});

/** A fresh migrated database with daily partitions for the last HISTORY_DAYS + 1 days and 3 ahead. */
async function freshDatabase(): Promise<{ db: Db; client: pg.Client }> {
  await recreateDatabase(values.server, DB_NAME);
  const db = await openDb({ databaseUrl: url, dataDir: '', poolSize: 2 });
  await migrate(db, silentLogger);
  const partitions = createPgHistoryPartitions(db);
  const now = Date.now();
  for (let k = HISTORY_DAYS + 1; k >= 0; k--)
    await partitions.ensure({ nowMs: now - k * DAY, widthMs: DAY, ahead: k === 0 ? 3 : 0, lockTimeoutMs: 10_000 });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return { db, client };
}

/** `rows` history rows of settled deliveries over the last HISTORY_DAYS days, and `due` due deliveries. */
async function fill(client: pg.Client, rows: number, due: number): Promise<void> {
  const d = Math.ceil(rows / ROWS_PER_DELIVERY);
  await client.query(
    `INSERT INTO applications (id, name) SELECT 'app_' || a, 'bench' FROM generate_series(0, $1 - 1) a`,
    [APPS],
  );
  await client.query(
    `INSERT INTO endpoints (id, app_id, url, secret, secret_key_id)
     SELECT 'ep_' || e, 'app_' || (e % $2), 'http://127.0.0.1:9/' || e,
       convert_to('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'UTF8'), 'plain'
     FROM generate_series(0, $1 - 1) e`,
    [ENDPOINTS, APPS],
  );
  // Settled history, oldest first, in chunks of 500,000 deliveries (each chunk one statement per table).
  const chunk = 500_000;
  for (let from = 0; from < d; from += chunk) {
    const to = Math.min(d, from + chunk);
    const at = `now() - interval '${HISTORY_DAYS} days' + (m::float8 / ${d}) * interval '${HISTORY_DAYS} days'`;
    await client.query(
      `INSERT INTO messages (id, app_id, event_type, payload, payload_key_id, created_at)
       SELECT 'msg_' || lpad(m::text, 9, '0'), 'app_' || (m % ${APPS}), 'bench.event',
         convert_to('{"n":' || m || '}', 'UTF8'), 'plain', ${at}
       FROM generate_series($1::bigint, $2::bigint - 1) m`,
      [from, to],
    );
    await client.query(
      `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, attempt_count, created_at,
                               updated_at, last_status_code, last_attempt_at)
       SELECT 'app_' || (m % ${APPS}), 'msg_' || lpad(m::text, 9, '0'), 'ep_' || (m % ${ENDPOINTS}),
              'succeeded', ${at}, 1, ${at}, ${at} + interval '100 ms', 200, ${at} + interval '100 ms'
       FROM generate_series($1::bigint, $2::bigint - 1) m`,
      [from, to],
    );
  }
  await client.query(
    `INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger, succeeded,
                           response_status_code, url, duration_ms, dispatcher_id, fencing_token, created_at)
     SELECT 'atmpt_' || lpad(d.id::text, 12, '0'), d.id, d.app_id, d.message_id, d.endpoint_id, 1, 'scheduled',
            true, 200, 'http://127.0.0.1:9/', 20, 'W', 1, d.updated_at
     FROM deliveries d ORDER BY d.id`,
  );
  await client.query('ALTER TABLE delivery_events DISABLE TRIGGER delivery_events_stamp');
  try {
    await client.query(
      `INSERT INTO delivery_events (delivery_id, state, reason, dispatcher_id, fencing_token, status_code,
                                    latency_ms, at, app_id, endpoint_id, wait_ms, since_publish_ms)
       SELECT d.id, s.state, s.reason, s.w, s.tok, s.code, s.lat, d.created_at + s.off * interval '1 ms', d.app_id,
              d.endpoint_id, s.wait, s.off
       FROM deliveries d CROSS JOIN LATERAL (VALUES
         ('pending', 'published', NULL::text, NULL::bigint, NULL::int, NULL::int, NULL::bigint, 0),
         ('leased', 'claimed', 'W', 1, NULL, NULL, 5, 5),
         ('succeeded', NULL, 'W', 1, 200, 20, NULL, 100)) AS s(state, reason, w, tok, code, lat, wait, off)
       ORDER BY d.id, s.off`,
    );
  } finally {
    await client.query('ALTER TABLE delivery_events ENABLE TRIGGER delivery_events_stamp');
  }
  // The backlog the claim takes from: `due` deliveries due a minute ago, spread over the endpoints.
  await client.query(
    `INSERT INTO messages (id, app_id, event_type, payload, payload_key_id)
     SELECT 'due_' || m, 'app_' || (m % ${APPS}), 'bench.event', convert_to('{}', 'UTF8'), 'plain'
       FROM generate_series(0, $1 - 1) m`,
    [due],
  );
  await client.query(
    `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at)
     SELECT 'app_' || (m % ${APPS}), 'due_' || m, 'ep_' || (m % ${ENDPOINTS}), 'pending',
       now() - interval '1 minute' + m * interval '1 ms'
     FROM generate_series(0, $1 - 1) m`,
    [due],
  );
  for (const t of ['messages', 'deliveries', 'attempts', 'delivery_events', 'endpoints'])
    await client.query(`VACUUM ANALYZE ${t}`);
}

/** A Db over one client whose `tx` runs inside the caller's transaction (so a claim can be rolled back). */
function oneClient(client: pg.Client): Db {
  const query: Queryable['query'] = (text, params) =>
    client.query(typeof text === 'string' ? text : text.text, params as unknown[]) as never;
  return {
    engine: 'server',
    query,
    tx: (fn) => fn({ query }),
    listenClient: async () => null,
    close: async () => undefined,
  } as Db;
}

async function measureHistory(rows: number): Promise<Record<string, unknown>> {
  const { db, client } = await freshDatabase();
  try {
    const t0 = performance.now();
    await fill(client, rows, claims * CLAIM_LIMIT);
    const fillS = (performance.now() - t0) / 1000;
    const size = (
      await client.query<{
        attempts: number;
        timeline: number;
        deliveries: number;
        bytes: string;
        tables: Record<string, string>;
      }>(
        `SELECT (SELECT count(*) FROM attempts)::int AS attempts,
          (SELECT count(*) FROM delivery_events)::int AS timeline,
                (SELECT count(*) FROM deliveries)::int AS deliveries,
                pg_size_pretty(pg_database_size(current_database())) AS bytes,
                (SELECT json_object_agg(t, pg_size_pretty(s)) FROM (
                   SELECT t, sum(pg_total_relation_size(c.oid)) AS s
                   FROM unnest(ARRAY['messages', 'deliveries', 'attempts', 'delivery_events']) t
                   JOIN pg_class c
                     ON c.relname = t OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = t::regclass)
                   GROUP BY t) x) AS tables`,
      )
    ).rows[0]!;
    log(`history ${rows}: filled in ${round(fillS, 1)} s: ${JSON.stringify(size)}`);

    const store = createPgDeliveryStore(oneClient(client), plaintextCipher());
    const claimMs: number[] = [];
    for (let i = 0; i < claims + 20; i++) {
      await client.query('BEGIN');
      try {
        const s = performance.now();
        const got = await store.claim({
          dispatcherId: 'bench',
          limit: CLAIM_LIMIT,
          leaseMs: 30_000,
          maxReclaims: 5,
          now: null,
        });
        if (i >= 20) claimMs.push(performance.now() - s);
        if (got.deliveries.length !== CLAIM_LIMIT) throw new Error(`claimed ${got.deliveries.length}`);
      } finally {
        await client.query('ROLLBACK');
      }
    }

    const query = createPgMessageQueryStore(db, plaintextCipher());
    const base = {
      limit: 50,
      iterator: null,
      order: 'descending' as const,
      withContent: false,
      status: null,
      statusCodeClass: null,
      eventTypes: null,
      channel: null,
      tag: null,
      before: null,
      after: null,
    };
    const byEndpoint: number[] = [];
    const byMessage: number[] = [];
    const d = Math.ceil(rows / ROWS_PER_DELIVERY);
    for (let i = 0; i < lists + 20; i++) {
      const e = i % ENDPOINTS;
      let s = performance.now();
      await query.listAttempts(`app_${e % APPS}`, { ...base, messageId: null, endpointId: `ep_${e}` });
      if (i >= 20) byEndpoint.push(performance.now() - s);
      const m = Math.floor(Math.random() * d);
      s = performance.now();
      const page = await query.listAttempts(`app_${m % APPS}`, {
        ...base,
        messageId: `msg_${String(m).padStart(9, '0')}`,
        endpointId: null,
      });
      if (i >= 20) byMessage.push(performance.now() - s);
      if (page.data.length !== 1) throw new Error(`message ${m}: ${page.data.length} attempts`);
    }
    const out = {
      historyRows: rows,
      fillS: round(fillS, 1),
      ...size,
      claimMs: pct(claimMs),
      attemptListByEndpointMs: pct(byEndpoint),
      attemptListByMessageMs: pct(byMessage),
    };
    log(JSON.stringify(out));
    return out;
  } finally {
    await client.end();
    await db.close();
  }
}

/** The 7-day time-in-state read at `rows` timeline rows over the last hour, its leading edge read raw or aligned. */
async function measureStats(rows: number): Promise<Record<string, unknown>> {
  const { db, client } = await freshDatabase();
  try {
    const ref = new Date();
    let t0 = performance.now();
    await fillTimeline(client, rows, 3_600_000, ref);
    const fillS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const rollup = createPgStatsRollup(db);
    const maxId = Number(
      (await client.query<{ n: string }>('SELECT coalesce(max(id), 0) AS n FROM delivery_events')).rows[0]!.n,
    );
    const tail = Math.round((rows * 2_000) / 3_600_000);
    for (;;) {
      const step = await rollup.step(ref, 20_000);
      if (step.rolledIds === 0 || step.rolledId >= maxId - tail) break;
    }
    const rollupS = (performance.now() - t0) / 1000;
    log(`stats ${rows} rows over 1 h: fill ${round(fillS, 1)} s, roll-up ${round(rollupS, 1)} s`);
    const stats = createPgStatsStore(db);
    const { windowMs, bucketMs } = STATS_WINDOWS['7d'];
    const level = 900_000;
    // The worst instant for the raw leading edge: since lies 1 ms after a 15-minute boundary inside the filled hour.
    const since = Math.ceil((ref.getTime() - 3_600_000) / level) * level + 1;
    const until = since + windowMs;
    const aligned = windowStart(until, windowMs, bucketMs);
    const out: Record<string, unknown> = { timelineRows: rows, fillS: round(fillS, 1), rollupS: round(rollupS, 1) };
    for (const [name, from] of [
      ['raw leading edge (since = until - 7 d)', since],
      ['aligned to the 15-minute roll-up (the API)', aligned],
    ] as const) {
      for (const [scope, s] of [
        ['installation', { appId: null, endpointId: null }],
        ['one application', { appId: 'app_1', endpointId: null }],
      ] as const) {
        await stats.timeInState(s, new Date(from), new Date(until), bucketMs);
        const ms: number[] = [];
        for (let i = 0; i < 10; i++) {
          const t = performance.now();
          await stats.timeInState(s, new Date(from), new Date(until), bucketMs);
          ms.push(performance.now() - t);
        }
        out[`7d ${name}, ${scope}`] = pct(ms);
      }
    }
    log(JSON.stringify(out));
    return out;
  } finally {
    await client.end();
    await db.close();
  }
}

const results: Record<string, unknown>[] = [];
try {
  for (const rows of sizes) results.push(await measureHistory(rows));
  if (results.length >= 2) {
    const ratio = (k: string, q: 'p50' | 'p99') =>
      round(
        (results[results.length - 1]![k] as Record<string, number>)[q]! /
          (results[0]![k] as Record<string, number>)[q]!,
        2,
      );
    log(
      `ratios largest/smallest: claim p50 ${ratio('claimMs', 'p50')}, p99 ${ratio('claimMs', 'p99')}; attempt list ` +
        `by endpoint p99 ${ratio('attemptListByEndpointMs', 'p99')}, ` +
        `by message p99 ${ratio('attemptListByMessageMs', 'p99')}`,
    );
  }
  if (statsRows > 0) results.push(await measureStats(statsRows));
  const load = (await import('node:os')).loadavg();
  log(`load average ${load.map((l) => round(l, 1)).join(' ')}`);
} finally {
  await dropDatabase(values.server, DB_NAME);
}
