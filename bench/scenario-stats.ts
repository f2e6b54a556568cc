import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDb } from '../src/adapters/postgres/db.ts';
import { createPgBacklogReader, createPgStatsStore } from '../src/adapters/postgres/delivery/stats-store.ts';
import { createPgStatsRollup } from '../src/adapters/postgres/delivery/stats-rollup.ts';
import { effectiveConfig } from './context.ts';
import { fill as fillBacklog } from './scenario-claim.ts';
import { STATS_WINDOWS } from '../src/app/stats.ts';
import { rollupLevelFor } from '../src/ports/stats-store.ts';
import { n0, type BenchContext } from './context.ts';
import { startChild } from './procs.ts';
import { quantile, round } from './stats.ts';
import { databaseUrl, dropDatabase, recreateDatabase } from './tidings.ts';

const CLI = fileURLToPath(new URL('../src/main/cli.ts', import.meta.url));

/** Applications and endpoints (10 per application) the timeline is spread over. */
const APPS = 10;
const ENDPOINTS = 100;
/** Timed reads per figure (each exact read of the whole installation took seconds before the rollups). */
const STATS_REPEATS = 10;
/** Timeline rows per delivery: published, claimed, attempt recorded. */
const ROWS_PER_DELIVERY = 3;

/**
 * Fills the bench database with `rows` timeline rows, all inside the `windowMs` before `ref`: deliveries published
 * evenly from then until 5 s before `ref`, claimed after a wait of 0–2 s, and recorded (9 in 10
 * succeeded, the rest a retry) after 5–500 ms. The stamp trigger is disabled while filling and its columns
 * are written directly, as it would have. The rollups are emptied (the roll-up starts from id 0).
 */
export async function fillTimeline(
  client: pg.Client,
  rows: number,
  windowMs = 3_600_000,
  ref: Date = new Date(),
): Promise<void> {
  const deliveries = Math.ceil(rows / ROWS_PER_DELIVERY);
  await client.query(
    'TRUNCATE deliveries, messages, endpoints, applications, delivery_events, attempts RESTART IDENTITY CASCADE',
  );
  if (
    (await client.query<{ t: string | null }>(`SELECT to_regclass('stats_rollups')::text AS t`)).rows[0]!.t !== null
  ) {
    await client.query('TRUNCATE stats_rollups');
    await client.query('UPDATE stats_rollup_state SET rolled_id = 0, pending_id = NULL, pending_writers = NULL');
  }
  await client.query(
    `INSERT INTO applications (id, name) SELECT 'app_' || a, 'bench' FROM generate_series(0, $1 - 1) a`,
    [APPS],
  );
  await client.query(
    `INSERT INTO endpoints (id, app_id, url, secret, secret_key_id) SELECT 'ep_' || e, 'app_' || (e % $2), ` +
      `'http://127.0.0.1:9/', '\\x00', 'plain' FROM generate_series(0, $1 - 1) e`,
    [ENDPOINTS, APPS],
  );
  await client.query(
    `INSERT INTO messages (id, app_id, event_type) SELECT 'msg_' || m, 'app_' || (m % $2), 'bench' FROM ` +
      'generate_series(0, $1 - 1) m',
    [deliveries, APPS],
  );
  await client.query(
    `
    INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at)
    SELECT 'app_' || (m % $2), 'msg_' || m, 'ep_' || ((m % $2) + $2 * ((m / $2) % ($3 / $2))), 'succeeded',
           $5::timestamptz - $4::float8 * interval '1 millisecond' + (m + 1) *
             (($4::float8 - 5000) * interval '1 millisecond' / $1),
           $5::timestamptz - $4::float8 * interval '1 millisecond' + (m + 1) *
             (($4::float8 - 5000) * interval '1 millisecond' / $1)
    FROM generate_series(0, $1 - 1) m`,
    [deliveries, APPS, ENDPOINTS, windowMs, ref],
  );
  await client.query('ALTER TABLE delivery_events DISABLE TRIGGER delivery_events_stamp');
  try {
    await client.query(`
      INSERT INTO delivery_events (delivery_id, state, reason, dispatcher_id, latency_ms, at, app_id, endpoint_id,
        wait_ms, since_publish_ms)
      SELECT d.id, s.state, s.reason, s.worker, s.latency, d.created_at + s.offset_ms * interval '1 millisecond',
        d.app_id, d.endpoint_id, s.wait, s.offset_ms
      FROM (SELECT d.*, (hashtext(d.message_id) & 2047) AS w, (hashtext(d.endpoint_id || d.message_id) & 511) AS l
        FROM deliveries d) d
      CROSS JOIN LATERAL (VALUES
        ('pending', 'published', NULL::text, NULL::int, NULL::bigint, 0::bigint),
        ('leased', 'claimed', 'W', NULL, d.w::bigint, d.w::bigint),
        (CASE WHEN d.l % 10 = 0 THEN 'pending' ELSE 'succeeded' END, CASE WHEN d.l % 10 = 0 THEN 'retry_scheduled' END,
          'W', 5 + d.l, NULL, (d.w + 5 + d.l)::bigint)
      ) AS s(state, reason, worker, latency, wait, offset_ms)
      ORDER BY 6`);
  } finally {
    await client.query('ALTER TABLE delivery_events ENABLE TRIGGER delivery_events_stamp');
  }
  await client.query('VACUUM ANALYZE delivery_events');
  await client.query('VACUUM ANALYZE deliveries');
}

/** Folds the timeline into the rollups up to `tailIds` below the newest id; returns the seconds it took. */
async function rollUpTo(
  db: Awaited<ReturnType<typeof openDb>>,
  client: pg.Client,
  tailIds: number,
  batch: number,
  now: Date,
): Promise<number> {
  const maxId = Number(
    (await client.query<{ n: string }>('SELECT coalesce(max(id), 0)::bigint AS n FROM delivery_events')).rows[0]!.n,
  );
  const target = Math.max(0, maxId - tailIds);
  const rollup = createPgStatsRollup(db);
  const t0 = performance.now();
  let rolled = 0;
  while (rolled < target) {
    const step = await rollup.step(now, Math.min(batch, target - rolled));
    if (step.rolledIds === 0) break;
    rolled = step.rolledId;
  }
  return (performance.now() - t0) / 1000;
}

/** The body level of a 7-day read, ms (15 min): its partial first bucket is read from raw timeline rows. */
const SEVEN_DAY_BODY_MS = rollupLevelFor(STATS_WINDOWS['7d'].windowMs, STATS_WINDOWS['7d'].bucketMs)!;
const LEADING_EDGE = `(${SEVEN_DAY_BODY_MS / 60_000} min of rows before its first whole bucket)`;

/** One timed time-in-state read: (since, until], series buckets of `bucketMs`. */
interface ReadWindow {
  readonly since: Date;
  readonly until: Date;
  readonly bucketMs: number;
}

/**
 * A 7-day read whose leading edge holds the most raw rows it can: `since` 1 ms after a body bucket's start
 * inside the filled span (`ref` − `spanMs`, `ref`), so (since, f1) is one whole body bucket of rows; it ends
 * 7 days later (after `ref`: the rollups it covers there are empty). null when the span is shorter than two
 * body buckets. Such a window is what a 7-day read of an installation with steady traffic meets at its start.
 */
function leadingEdgeWindow(ref: Date, spanMs: number): ReadWindow | null {
  if (spanMs < 2 * SEVEN_DAY_BODY_MS) return null;
  const since = Math.ceil((ref.getTime() - spanMs) / SEVEN_DAY_BODY_MS) * SEVEN_DAY_BODY_MS + 1;
  return {
    since: new Date(since),
    until: new Date(since + STATS_WINDOWS['7d'].windowMs),
    bucketMs: STATS_WINDOWS['7d'].bucketMs,
  };
}

/**
 * stats-reads: statistics reads against the size of the timeline (server only): the timeline is filled with
 * `timelineRows` rows over each of `timelineSpansMs` (the last hour, the last 5 minutes) and rolled up but for the tail
 * a roll-up every second leaves; then for each window (5 min, 1 h, 24 h, 7 d, and over the hour a 7-day window whose
 * partial first bucket is read raw: {@link leadingEdgeWindow}) the store's time-in-state read (installation, one
 * application, one endpoint) and, for 1 h, the overview are timed (at most STATS_REPEATS times each). Target:
 * time-in-state under 200 ms at 1,000,000 rows (docs/adr/0015-time-in-state-rollups.md). Then the backlog gauges' query
 * against the backlog sizes of claim-backlog (target: the same cost at 1,000 and 1,000,000 waiting deliveries).
 */
export async function scenarioStatsReads(ctx: BenchContext): Promise<void> {
  if (!ctx.options.engines.includes('server')) return;
  const name = `${ctx.base.dbName}_stats`;
  const url = databaseUrl(ctx.base.serverUrl, name);
  await recreateDatabase(ctx.base.serverUrl, name);
  const migrateLog = join(ctx.base.logDir, 'h-migrate.log');
  const migrator = startChild({
    name: 'migrate',
    args: [CLI, 'migrate'],
    env: { PATH: process.env.PATH, DATABASE_URL: url, TIDINGS_ENCRYPTION_KEYS: ctx.base.encryptionKeys },
    logFile: migrateLog,
  });
  const code = await migrator.exited;
  if (code !== 0) throw new Error(`migrate failed (${code}); see ${migrateLog}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const db = await openDb({ databaseUrl: url, dataDir: '', poolSize: 2 });
  const stats = createPgStatsStore(db);
  const batch = effectiveConfig(ctx, {}).statsRollupBatch;
  try {
    for (const [rows, spanMs] of ctx.options.sizes.timelineRows.flatMap((r) =>
      ctx.options.sizes.timelineSpansMs.map((s) => [r, s] as const),
    )) {
      // A timeline of `rows` rows over the span before `ref`, which every read takes as "now" (the fill takes
      // minutes). Over 1 h: 1 h, 24 h and 7 d hold all of them, 5 min a twelfth; over 5 min every window does.
      const ref = new Date();
      const t0 = performance.now();
      await fillTimeline(client, rows, spanMs, ref);
      const fillS = (performance.now() - t0) / 1000;
      // The tail a roll-up every second leaves: about two seconds of rows stay above the watermark.
      const tailIds = Math.max(1_000, Math.round((rows * 2_000) / spanMs));
      const rollupS = await rollUpTo(db, client, tailIds, batch, ref);
      ctx.log(
        `  stats-reads ${n0(rows)} rows over ${spanMs / 60_000} min: fill ${round(fillS, 1)} s, roll-up ` +
          `${round(rollupS, 1)} s (tail ${n0(tailIds)} ids)`,
      );
      ctx.details.push({
        scenario: 'stats-reads',
        timelineRows: rows,
        spanMs,
        fillS: round(fillS, 1),
        rollupS: round(rollupS, 1),
        tailIds,
      });
      const label =
        `@${n0(rows)} rows over ` + `${spanMs >= 3_600_000 ? `${spanMs / 3_600_000} h` : `${spanMs / 60_000} min`}`;
      const windows: [string, ReadWindow][] = Object.entries(STATS_WINDOWS).map(([window, { windowMs, bucketMs }]) => [
        window,
        { since: new Date(ref.getTime() - windowMs), until: ref, bucketMs },
      ]);
      // A window whose partial first bucket of the body level is full of rows (the worst leading edge, read raw).
      const leading = leadingEdgeWindow(ref, spanMs);
      if (leading !== null) windows.push([`7d ${LEADING_EDGE}`, leading]);
      for (const [window, { since, until, bucketMs }] of windows) {
        const read = (scope: { appId: string | null; endpointId: string | null }) => () =>
          stats.timeInState(scope, since, until, bucketMs);
        const reads = {
          [`time-in-state ${window}, installation`]: read({ appId: null, endpointId: null }),
          [`time-in-state ${window}, one application`]: read({ appId: 'app_1', endpointId: null }),
          [`time-in-state ${window}, one endpoint`]: read({ appId: 'app_1', endpointId: 'ep_1' }),
          ...(window === '1h'
            ? { 'overview, installation': () => stats.overview({ appId: null, endpointId: null }, ref, 20) }
            : {}),
        };
        for (let run = 1; run <= ctx.options.runs; run += 1) {
          const figures: Record<string, number[]> = {};
          for (const [figure, readOnce] of Object.entries(reads)) {
            await readOnce(); // warm: plans and pages
            const ms: number[] = [];
            for (let i = 0; i < Math.min(ctx.options.sizes.claimRepeats, STATS_REPEATS); i += 1) {
              const s = performance.now();
              await readOnce();
              ms.push(performance.now() - s);
            }
            figures[figure] = ms.map((v) => round(v, 2));
            ctx.book.add(
              {
                scenario: 'stats-reads',
                engine: 'server',
                name: `${figure} ${label}`,
                unit: 'ms',
                better: 'lower',
                ...(figure.startsWith('time-in-state') ? { target: '< 200' } : {}),
              },
              quantile(ms, 0.5),
            );
          }
          ctx.details.push({ scenario: 'stats-reads', run, window, timelineRows: rows, spanMs, readMs: figures });
          ctx.log(
            `  stats-reads run ${run} ${window} ${label}: ${Object.entries(figures)
              .map(([k, v]) => `${k} p50 ${round(quantile(v, 0.5), 1)} ms`)
              .join(', ')}`,
          );
        }
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
        ctx.book.add(
          {
            scenario: 'stats-reads',
            engine: 'server',
            name: `backlog gauge query @${n0(rows)} waiting`,
            unit: 'ms',
            better: 'lower',
          },
          quantile(ms, 0.5),
        );
        ctx.details.push({
          scenario: 'stats-reads',
          run,
          backlogRows: rows,
          backlogCap: cap,
          backlogQueryMs: ms.map((v) => round(v, 3)),
        });
        ctx.log(
          `  stats-reads run ${run} backlog ${n0(rows)}: gauge query p50 ${round(quantile(ms, 0.5), 2)} ms ` +
            `(cap ${n0(cap)})`,
        );
        if (run === 1) p50.push(quantile(ms, 0.5));
      }
    }
    if (p50.length > 1)
      ctx.book.add(
        {
          scenario: 'stats-reads',
          engine: 'server',
          name:
            `backlog gauge query ${n0(ctx.options.sizes.backlogRows.at(-1)!)} ÷ ` +
            `${n0(ctx.options.sizes.backlogRows[0]!)}`,
          unit: '×',
          better: 'lower',
          target: '≤ 1.5',
        },
        p50.at(-1)! / p50[0]!,
      );
  } finally {
    await db.close();
    await client.end();
    await dropDatabase(ctx.base.serverUrl, name);
  }
}
