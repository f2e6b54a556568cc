import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import * as deliverySql from '../src/adapters/postgres/delivery-sql.ts';
import { n0, effectiveConfig, type BenchContext } from './context.ts';
import { startChild } from './procs.ts';
import { quantile, round } from './stats.ts';
import { databaseUrl, dropDatabase, recreateDatabase } from './tidings.ts';

const CLI = fileURLToPath(new URL('../src/main/cli.ts', import.meta.url));

/*
 * The two statements of one store `claim` call: CLAIM, and the housekeeping statement that runs before it
 * (SWEEP; DEAD_LETTER_LOST in earlier versions). Both take ($1 max reclaims, $2 now, $3 batch limit).
 */
const SQL = deliverySql as Record<string, unknown>;
const CLAIM = String(SQL.CLAIM);
const HOUSEKEEPING_NAME = ['SWEEP', 'DEAD_LETTER_LOST'].find((name) => typeof SQL[name] === 'string') ?? null;
const HOUSEKEEPING = HOUSEKEEPING_NAME === null ? null : String(SQL[HOUSEKEEPING_NAME]);

/** Endpoints the backlog is spread over (deliveries = messages × endpoints). */
const ENDPOINTS = 100;
/** Leased deliveries with a live lease next to the backlog (work in flight, as in production). */
const LEASED = 256;

/*
 * MINIMAL_CLAIM — the reference: the smallest SKIP LOCKED claim of the same rows (no endpoint filter, no
 * reclaim branch, no timeline row, no payload). $1 limit.
 */
const MINIMAL_CLAIM = `
UPDATE deliveries SET state = 'leased', lease_owner = 'ref', lease_expires_at = clock_timestamp() + interval '60 s', fencing_token = fencing_token + 1
WHERE id IN (SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= clock_timestamp() ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING id`;

/** Fills the bench database with `rows` due deliveries (pending, due in the past) plus {@link LEASED} live leases. */
async function fill(client: pg.Client, rows: number): Promise<void> {
  const messages = Math.max(1, Math.ceil(rows / ENDPOINTS));
  await client.query('TRUNCATE deliveries, messages, endpoints, applications, delivery_events, attempts CASCADE');
  await client.query(`INSERT INTO applications (id, uid, name) VALUES ('app_bench', 'bench', 'bench')`);
  await client.query(`
    INSERT INTO endpoints (id, app_id, url, secret, secret_key_id)
    SELECT 'ep_' || e, 'app_bench', 'http://127.0.0.1:9/ep' || e, '\\x00'::bytea, 'plain' FROM generate_series(0, $1 - 1) e`, [ENDPOINTS]);
  await client.query(`
    INSERT INTO messages (id, app_id, event_type, payload, payload_key_id)
    SELECT 'msg_' || lpad(m::text, 8, '0'), 'app_bench', 'bench.event', convert_to('{"type":"bench","seq":' || m || '}', 'UTF8'), 'plain'
    FROM generate_series(0, $1 - 1) m`, [messages]);
  // Due times increase with (message, endpoint), one millisecond apart, all in the past.
  await client.query(`
    INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at)
    SELECT 'app_bench', 'msg_' || lpad(m::text, 8, '0'), 'ep_' || e, 'pending',
           now() - interval '1 day' + ((m * $2 + e) * interval '1 millisecond')
    FROM generate_series(0, $1 - 1) m, generate_series(0, $2 - 1) e
    WHERE m * $2 + e < $3`, [messages, ENDPOINTS, rows]);
  await client.query(`
    INSERT INTO messages (id, app_id, event_type, payload, payload_key_id)
    SELECT 'msg_leased_' || i, 'app_bench', 'bench.event', convert_to('{}', 'UTF8'), 'plain' FROM generate_series(1, $1) i`, [LEASED]);
  await client.query(`
    INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, lease_owner, lease_expires_at, fencing_token)
    SELECT 'app_bench', 'msg_leased_' || i, 'ep_' || (i % $2), 'leased', now(), 'other', now() + interval '1 hour', 1
    FROM generate_series(1, $1) i`, [LEASED, ENDPOINTS]);
  await client.query('VACUUM ANALYZE deliveries');
  await client.query('VACUUM ANALYZE messages');
  await client.query('VACUUM ANALYZE endpoints');
}

/** Times `text` `repeats` times, each in its own transaction that is rolled back (the backlog stays as it is). */
async function timeStatement(client: pg.Client, text: string, params: readonly unknown[], repeats: number): Promise<{ ms: number[]; rows: number }> {
  const ms: number[] = [];
  let rows = 0;
  for (let i = 0; i < repeats; i += 1) {
    await client.query('BEGIN');
    const t0 = performance.now();
    const r = await client.query(text, params as unknown[]);
    ms.push(performance.now() - t0);
    rows = r.rowCount ?? 0;
    await client.query('ROLLBACK');
  }
  return { ms, rows };
}

async function explain(client: pg.Client, text: string, params: readonly unknown[]): Promise<string> {
  await client.query('BEGIN');
  try {
    const r = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params as unknown[]);
    return r.rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await client.query('ROLLBACK');
  }
}

/**
 * (g) Claim cost against the size of the backlog (server only): the bench database is filled by SQL
 * (generate_series) with each backlog size in turn; CLAIM and the housekeeping statement that precedes it
 * in every store `claim` call (both imported from delivery-sql.ts), and a minimal SKIP LOCKED claim, are
 * timed, each in a rolled-back transaction, and their EXPLAIN (ANALYZE, BUFFERS) is kept.
 */
export async function scenarioG(ctx: BenchContext): Promise<void> {
  if (!ctx.options.engines.includes('server')) return;
  const { sizes, runs } = ctx.options;
  const config = effectiveConfig(ctx, {});
  const name = `${ctx.base.dbName}_claim`;
  const url = databaseUrl(ctx.base.serverUrl, name);
  await recreateDatabase(ctx.base.serverUrl, name);
  const migrateLog = join(ctx.base.logDir, 'g-migrate.log');
  const migrator = startChild({ name: 'migrate', args: [CLI, 'migrate'], env: { PATH: process.env.PATH, DATABASE_URL: url, TIDINGS_ENCRYPTION_KEYS: ctx.base.encryptionKeys }, logFile: migrateLog });
  const code = await migrator.exited;
  if (code !== 0) throw new Error(`migrate failed (${code}); see ${migrateLog}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const claimParams = ['bench-worker', config.claimBatch, config.leaseMs, null, config.maxReclaims];
  const houseParams = [config.maxReclaims, null, 100];
  const hk = HOUSEKEEPING_NAME ?? 'housekeeping';
  try {
    for (const rows of sizes.backlogRows) {
      const t0 = performance.now();
      await fill(client, rows);
      const fillS = (performance.now() - t0) / 1000;
      const tableBytes = Number((await client.query<{ b: string }>(`SELECT pg_total_relation_size('deliveries') AS b`)).rows[0]?.b ?? 0);
      await timeStatement(client, CLAIM, claimParams, 3); // warm-up
      const plans = {
        CLAIM: await explain(client, CLAIM, claimParams),
        ...(HOUSEKEEPING === null ? {} : { [hk]: await explain(client, HOUSEKEEPING, houseParams) }),
        MINIMAL_CLAIM: await explain(client, MINIMAL_CLAIM, [config.claimBatch]),
      };
      const label = `@${n0(rows)}`;
      for (let run = 1; run <= runs; run += 1) {
        const claim = await timeStatement(client, CLAIM, claimParams, sizes.claimRepeats);
        const house = HOUSEKEEPING === null ? { ms: [0], rows: 0 } : await timeStatement(client, HOUSEKEEPING, houseParams, sizes.claimRepeats);
        const minimal = await timeStatement(client, MINIMAL_CLAIM, [config.claimBatch], sizes.claimRepeats);
        const claimP50 = quantile(claim.ms, 0.5);
        const houseP50 = quantile(house.ms, 0.5);
        ctx.book.add({ scenario: 'g', engine: 'raw', name: `minimal SKIP LOCKED claim ${label}`, unit: 'ms', better: 'lower' }, quantile(minimal.ms, 0.5));
        ctx.book.add({ scenario: 'g', engine: 'server', name: `CLAIM ${label}`, unit: 'ms', better: 'lower', ceiling: `minimal SKIP LOCKED claim ${label}` }, claimP50);
        if (HOUSEKEEPING !== null) ctx.book.add({ scenario: 'g', engine: 'server', name: `${hk} ${label}`, unit: 'ms', better: 'lower' }, houseP50);
        ctx.book.add({ scenario: 'g', engine: 'server', name: `claim rows/s ${label}`, unit: '/s', better: 'higher' }, claim.rows / ((claimP50 + houseP50) / 1000));
        ctx.details.push({
          scenario: 'g', run, backlogRows: rows, leasedRows: LEASED, endpoints: ENDPOINTS, claimBatch: config.claimBatch, rowsClaimed: claim.rows, fillS: round(fillS, 1), deliveriesTableBytes: tableBytes,
          claimMs: claim.ms.map((v) => round(v, 3)), housekeeping: HOUSEKEEPING_NAME, housekeepingMs: house.ms.map((v) => round(v, 3)), minimalClaimMs: minimal.ms.map((v) => round(v, 3)),
          ...(run === 1 ? { explain: plans } : {}),
        });
        ctx.log(`  g run ${run} backlog ${n0(rows)}: CLAIM p50 ${round(claimP50, 3)} ms (${claim.rows} rows), ${hk} p50 ${round(houseP50, 3)} ms, minimal claim p50 ${round(quantile(minimal.ms, 0.5), 3)} ms; fill ${round(fillS, 1)} s`);
      }
    }
    const small = sizes.backlogRows[0];
    const large = sizes.backlogRows[sizes.backlogRows.length - 1];
    if (small !== undefined && large !== undefined && small !== large) {
      for (let run = 1; run <= runs; run += 1) {
        const at = (rows: number) => ctx.details.find((x) => x.scenario === 'g' && x.backlogRows === rows && x.run === run);
        const [s, l] = [at(small), at(large)];
        if (s === undefined || l === undefined) continue;
        ctx.book.add({ scenario: 'g', engine: 'server', name: `CLAIM ${n0(large)} ÷ ${n0(small)}`, unit: '×', better: 'lower', target: '≤ 1.5' }, quantile(l.claimMs as number[], 0.5) / quantile(s.claimMs as number[], 0.5));
      }
    }
  } finally {
    await client.end();
    await dropDatabase(ctx.base.serverUrl, name);
  }
}
