import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDb } from '../src/adapters/postgres/db.ts';
import { createPgBacklogReader, createPgStatsStore } from '../src/adapters/postgres/delivery/stats-store.ts';
import { effectiveConfig } from './context.ts';
import { fill as fillBacklog } from './scenario-claim.ts';
import { STATS_WINDOWS } from '../src/app/stats.ts';
import { n0, type BenchContext } from './context.ts';
import { startChild } from './procs.ts';
import { quantile, round } from './stats.ts';
import { databaseUrl, dropDatabase, recreateDatabase } from './tidings.ts';

const CLI = fileURLToPath(new URL('../src/main/cli.ts', import.meta.url));

/** Applications and endpoints (10 per application) the timeline is spread over. */
const APPS = 10;
const ENDPOINTS = 100;
/** Timeline rows per delivery: published, claimed, attempt recorded. */
const ROWS_PER_DELIVERY = 3;

/**
 * Fills the bench database with `rows` timeline rows, all inside the last hour: deliveries published,
 * claimed after a wait of 0–2 s, and recorded (9 in 10 succeeded, the rest a retry) after 5–500 ms. The
 * stamp trigger is disabled while filling and its columns are written directly, as it would have.
 */
export async function fillTimeline(client: pg.Client, rows: number): Promise<void> {
  const deliveries = Math.ceil(rows / ROWS_PER_DELIVERY);
  await client.query('TRUNCATE deliveries, messages, endpoints, applications, delivery_events, attempts CASCADE');
  await client.query(`INSERT INTO applications (id, name) SELECT 'app_' || a, 'bench' FROM generate_series(0, $1 - 1) a`, [APPS]);
  await client.query(`INSERT INTO endpoints (id, app_id, url, secret, secret_key_id) SELECT 'ep_' || e, 'app_' || (e % $2), 'http://127.0.0.1:9/', '\\x00', 'plain' FROM generate_series(0, $1 - 1) e`, [ENDPOINTS, APPS]);
  await client.query(`INSERT INTO messages (id, app_id, event_type) SELECT 'msg_' || m, 'app_' || (m % $2), 'bench' FROM generate_series(0, $1 - 1) m`, [deliveries, APPS]);
  await client.query(`
    INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at)
    SELECT 'app_' || (m % $2), 'msg_' || m, 'ep_' || ((m % $2) + $2 * ((m / $2) % ($3 / $2))), 'succeeded',
           now() - interval '55 minutes' + m * (interval '50 minutes' / $1), now() - interval '55 minutes' + m * (interval '50 minutes' / $1)
    FROM generate_series(0, $1 - 1) m`, [deliveries, APPS, ENDPOINTS]);
  await client.query('ALTER TABLE delivery_events DISABLE TRIGGER delivery_events_stamp');
  try {
    await client.query(`
      INSERT INTO delivery_events (delivery_id, state, reason, worker_id, latency_ms, at, app_id, endpoint_id, wait_ms, since_publish_ms)
      SELECT d.id, s.state, s.reason, s.worker, s.latency, d.created_at + s.offset_ms * interval '1 millisecond', d.app_id, d.endpoint_id, s.wait, s.offset_ms
      FROM (SELECT d.*, (hashtext(d.message_id) & 2047) AS w, (hashtext(d.endpoint_id || d.message_id) & 511) AS l FROM deliveries d) d
      CROSS JOIN LATERAL (VALUES
        ('pending', 'published', NULL::text, NULL::int, NULL::bigint, 0::bigint),
        ('leased', 'claimed', 'W', NULL, d.w::bigint, d.w::bigint),
        (CASE WHEN d.l % 10 = 0 THEN 'pending' ELSE 'succeeded' END, CASE WHEN d.l % 10 = 0 THEN 'retry_scheduled' END, 'W', 5 + d.l, NULL, (d.w + 5 + d.l)::bigint)
      ) AS s(state, reason, worker, latency, wait, offset_ms)
      ORDER BY 6`);
  } finally {
    await client.query('ALTER TABLE delivery_events ENABLE TRIGGER delivery_events_stamp');
  }
  await client.query('VACUUM ANALYZE delivery_events');
  await client.query('VACUUM ANALYZE deliveries');
}

/**
 * (h) Statistics reads against the size of the timeline (server only): the store's time-in-state read of
 * the last hour (installation, one application, one endpoint) and the overview, timed `claimRepeats`
 * times each with `timelineRows` timeline rows in the window. Target: time-in-state under 200 ms at
 * 1,000,000 rows (ADR 0013). Then the backlog gauges' query against the backlog sizes of (g) (target:
 * the same cost at 1,000 and 1,000,000 waiting deliveries).
 */
export async function scenarioH(ctx: BenchContext): Promise<void> {
  if (!ctx.options.engines.includes('server')) return;
  const name = `${ctx.base.dbName}_stats`;
  const url = databaseUrl(ctx.base.serverUrl, name);
  await recreateDatabase(ctx.base.serverUrl, name);
  const migrateLog = join(ctx.base.logDir, 'h-migrate.log');
  const migrator = startChild({ name: 'migrate', args: [CLI, 'migrate'], env: { PATH: process.env.PATH, DATABASE_URL: url, TIDINGS_ENCRYPTION_KEYS: ctx.base.encryptionKeys }, logFile: migrateLog });
  const code = await migrator.exited;
  if (code !== 0) throw new Error(`migrate failed (${code}); see ${migrateLog}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const db = await openDb({ databaseUrl: url, dataDir: '', poolSize: 2 });
  const stats = createPgStatsStore(db);
  const { windowMs, bucketMs } = STATS_WINDOWS['1h'];
  try {
    for (const rows of ctx.options.sizes.timelineRows) {
      const t0 = performance.now();
      await fillTimeline(client, rows);
      const fillS = (performance.now() - t0) / 1000;
      const label = `@${n0(rows)} rows`;
      const reads = {
        'time-in-state 1h, installation': (until: Date) => stats.timeInState({ appId: null, endpointId: null }, new Date(until.getTime() - windowMs), until, bucketMs),
        'time-in-state 1h, one application': (until: Date) => stats.timeInState({ appId: 'app_1', endpointId: null }, new Date(until.getTime() - windowMs), until, bucketMs),
        'time-in-state 1h, one endpoint': (until: Date) => stats.timeInState({ appId: 'app_1', endpointId: 'ep_1' }, new Date(until.getTime() - windowMs), until, bucketMs),
        'overview, installation': () => stats.overview({ appId: null, endpointId: null }, null, 20),
      };
      for (let run = 1; run <= ctx.options.runs; run += 1) {
        const figures: Record<string, number[]> = {};
        for (const [figure, read] of Object.entries(reads)) {
          await read(new Date()); // warm: plans and pages
          const ms: number[] = [];
          for (let i = 0; i < ctx.options.sizes.claimRepeats; i += 1) {
            const s = performance.now();
            await read(new Date());
            ms.push(performance.now() - s);
          }
          figures[figure] = ms.map((v) => round(v, 2));
          ctx.book.add({ scenario: 'h', engine: 'server', name: `${figure} ${label}`, unit: 'ms', better: 'lower', ...(figure.startsWith('time-in-state') ? { target: '< 200' } : {}) }, quantile(ms, 0.5));
        }
        ctx.details.push({ scenario: 'h', run, timelineRows: rows, fillS: round(fillS, 1), readMs: figures });
        ctx.log(`  h run ${run} ${label}: ${Object.entries(figures).map(([k, v]) => `${k} p50 ${round(quantile(v, 0.5), 1)} ms`).join(', ')}; fill ${round(fillS, 1)} s`);
      }
    }
    // The backlog gauges' one query against the number of waiting deliveries (target: flat).
    const readBacklog = createPgBacklogReader(db);
    const cap = effectiveConfig(ctx, {}).metricsBacklogCap;
    const p50: number[] = [];
    for (const rows of ctx.options.sizes.backlogRows) {
      await fillBacklog(client, rows);
      await readBacklog(cap);
      for (let run = 1; run <= ctx.options.runs; run += 1) {
        const ms: number[] = [];
        for (let i = 0; i < ctx.options.sizes.claimRepeats; i += 1) {
          const s = performance.now();
          await readBacklog(cap);
          ms.push(performance.now() - s);
        }
        ctx.book.add({ scenario: 'h', engine: 'server', name: `backlog gauge query @${n0(rows)} waiting`, unit: 'ms', better: 'lower' }, quantile(ms, 0.5));
        ctx.details.push({ scenario: 'h', run, backlogRows: rows, backlogCap: cap, backlogQueryMs: ms.map((v) => round(v, 3)) });
        ctx.log(`  h run ${run} backlog ${n0(rows)}: gauge query p50 ${round(quantile(ms, 0.5), 2)} ms (cap ${n0(cap)})`);
        if (run === 1) p50.push(quantile(ms, 0.5));
      }
    }
    if (p50.length > 1) ctx.book.add({ scenario: 'h', engine: 'server', name: `backlog gauge query ${n0(ctx.options.sizes.backlogRows.at(-1)!)} ÷ ${n0(ctx.options.sizes.backlogRows[0]!)}`, unit: '×', better: 'lower', target: '≤ 1.5' }, p50.at(-1)! / p50[0]!);
  } finally {
    await db.close();
    await client.end();
    await dropDatabase(ctx.base.serverUrl, name);
  }
}
