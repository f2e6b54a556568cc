import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { plaintextCipher } from '../src/adapters/crypto/key-ring.ts';
import type { Db, Queryable } from '../src/adapters/postgres/db.ts';
import * as deliverySql from '../src/adapters/postgres/delivery/delivery-sql.ts';
import { createPgDeliveryStore } from '../src/adapters/postgres/delivery/delivery-store.ts';
import { n0, effectiveConfig, type BenchContext } from './context.ts';
import { commitReference } from './pg-reference.ts';
import { startChild } from './procs.ts';
import { quantile, round } from './stats.ts';
import { databaseUrl, dropDatabase, recreateDatabase } from './tidings.ts';

const CLI = fileURLToPath(new URL('../src/main/cli.ts', import.meta.url));

/** Names of the statements of delivery-sql.ts, by their text. */
const STATEMENT_NAMES = new Map<string, string>(
  Object.entries(deliverySql).flatMap(([k, v]) => (typeof v === 'object' && 'text' in v ? [[v.text, k] as const] : [])),
);
const statementName = (text: string): string =>
  STATEMENT_NAMES.get(text) ?? text.replace(/\s+/g, ' ').trim().slice(0, 40);

/** Endpoints the backlog is spread over (deliveries = messages × endpoints). */
const ENDPOINTS = 100;
/** Leased deliveries with a live lease next to the backlog (work in flight, as in production). */
const LEASED = 256;

/*
 * MINIMAL_CLAIM — the reference: the smallest SKIP LOCKED claim of the same rows (no endpoint filter, no
 * reclaim branch, no timeline row, no payload). $1 limit.
 */
const MINIMAL_CLAIM = `
UPDATE deliveries SET state = 'leased', dispatcher_id = 'ref', lease_expires_at = clock_timestamp() + interval '60 s',
  fencing_token = fencing_token + 1
WHERE id IN (SELECT id FROM deliveries WHERE state = 'pending' AND next_attempt_at <= clock_timestamp()
  ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING id`;

/** Fills the bench database with `rows` due deliveries (pending, due in the past) plus {@link LEASED} live leases. */
export async function fill(client: pg.Client, rows: number): Promise<void> {
  const messages = Math.max(1, Math.ceil(rows / ENDPOINTS));
  await client.query('TRUNCATE deliveries, messages, endpoints, applications, delivery_events, attempts CASCADE');
  await client.query(`INSERT INTO applications (id, uid, name) VALUES ('app_bench', 'bench', 'bench')`);
  await client.query(
    `
    INSERT INTO endpoints (id, app_id, url, secret, secret_key_id)
    SELECT 'ep_' || e, 'app_bench', 'http://127.0.0.1:9/ep' || e, convert_to($2, 'UTF8'), 'plain'
      FROM generate_series(0, $1 - 1) e`,
    [ENDPOINTS, `whsec_${randomBytes(32).toString('base64')}`],
  );
  await client.query(
    `
    INSERT INTO messages (id, app_id, event_type, payload, payload_key_id)
    SELECT 'msg_' || lpad(m::text, 8, '0'), 'app_bench', 'bench.event',
      convert_to('{"type":"bench","seq":' || m || '}', 'UTF8'), 'plain'
    FROM generate_series(0, $1 - 1) m`,
    [messages],
  );
  // Due times increase with (message, endpoint), one millisecond apart, all in the past.
  await client.query(
    `
    INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at)
    SELECT 'app_bench', 'msg_' || lpad(m::text, 8, '0'), 'ep_' || e, 'pending',
           now() - interval '1 day' + ((m * $2 + e) * interval '1 millisecond')
    FROM generate_series(0, $1 - 1) m, generate_series(0, $2 - 1) e
    WHERE m * $2 + e < $3`,
    [messages, ENDPOINTS, rows],
  );
  await client.query(
    `
    INSERT INTO messages (id, app_id, event_type, payload, payload_key_id)
    SELECT 'msg_leased_' || i, 'app_bench', 'bench.event', convert_to('{}', 'UTF8'), 'plain'
      FROM generate_series(1, $1) i`,
    [LEASED],
  );
  await client.query(
    `
    INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, dispatcher_id, lease_expires_at,
      fencing_token)
    SELECT 'app_bench', 'msg_leased_' || i, 'ep_' || (i % $2), 'leased', now(), 'other', now() + interval '1 hour', 1
    FROM generate_series(1, $1) i`,
    [LEASED, ENDPOINTS],
  );
  await client.query('VACUUM ANALYZE deliveries');
  await client.query('VACUUM ANALYZE messages');
  await client.query('VACUUM ANALYZE endpoints');
}

/** One statement the store ran, with its parameters and client-side time. */
interface Captured {
  readonly name: string;
  readonly text: string;
  readonly params: readonly unknown[];
  readonly ms: number;
  readonly rows: number;
}

/**
 * A {@link Db} over one client that records every statement the store runs. `tx` runs its work without
 * BEGIN/COMMIT: the caller holds a transaction open around the whole claim and rolls it back.
 */
function capturingDb(client: pg.Client, captured: Captured[]): Db {
  const query: Queryable['query'] = async (text, params) => {
    const t0 = performance.now();
    const result = await client.query(text, params as unknown[]);
    const sql = typeof text === 'string' ? text : text.text;
    captured.push({
      name: statementName(sql),
      text: sql,
      params: params ?? [],
      ms: performance.now() - t0,
      rows: result.rowCount ?? 0,
    });
    return result as never;
  };
  return {
    engine: 'server',
    query,
    tx: (fn) => fn({ query }),
    listenClient: async () => null,
    close: async () => undefined,
  } as Db;
}

/** One timed store `claim` call: total time, claimed rows, and each statement it ran. */
interface ClaimSample {
  readonly totalMs: number;
  readonly claimed: number;
  readonly statements: readonly Captured[];
}

/**
 * Runs the store's own `claim` (createPgDeliveryStore, as the dispatcher calls it) `repeats` times, each in
 * a transaction that is rolled back so the backlog stays as it is. Whatever statements and parameters the
 * store uses are captured, so the measurement follows the engine as it changes. The time leaves out the
 * COMMIT (and its WAL flush) of the real call.
 */
async function timeClaims(
  client: pg.Client,
  input: { dispatcherId: string; limit: number; leaseMs: number; maxReclaims: number },
  repeats: number,
): Promise<ClaimSample[]> {
  const out: ClaimSample[] = [];
  for (let i = 0; i < repeats; i += 1) {
    const captured: Captured[] = [];
    const store = createPgDeliveryStore(capturingDb(client, captured), plaintextCipher());
    await client.query('BEGIN');
    try {
      const t0 = performance.now();
      const result = await store.claim({ ...input, now: null });
      out.push({ totalMs: performance.now() - t0, claimed: result.deliveries.length, statements: captured });
    } finally {
      await client.query('ROLLBACK');
    }
  }
  return out;
}

/** Times `text` `repeats` times, each in its own transaction that is rolled back. */
async function timeStatement(
  client: pg.Client,
  text: string,
  params: readonly unknown[],
  repeats: number,
): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < repeats; i += 1) {
    await client.query('BEGIN');
    const t0 = performance.now();
    await client.query(text, params as unknown[]);
    ms.push(performance.now() - t0);
    await client.query('ROLLBACK');
  }
  return ms;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of every statement of one claim, in order, in one rolled-back transaction (so
 * a statement that depends on an earlier one, like CLAIM on GATE's locks, sees the same state).
 */
async function explainClaim(client: pg.Client, statements: readonly Captured[]): Promise<Record<string, string>> {
  const plans: Record<string, string> = {};
  await client.query('BEGIN');
  try {
    for (const st of statements) {
      const r = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS) ${st.text}`,
        st.params as unknown[],
      );
      plans[st.name] = r.rows.map((row) => row['QUERY PLAN']).join('\n');
    }
  } finally {
    await client.query('ROLLBACK');
  }
  return plans;
}

/** Median of each statement's time across samples, by statement name (in the order the store runs them). */
function perStatement(samples: readonly ClaimSample[]): Record<string, number> {
  const times = new Map<string, number[]>();
  for (const s of samples) for (const st of s.statements) times.set(st.name, [...(times.get(st.name) ?? []), st.ms]);
  return Object.fromEntries([...times].map(([name, ms]) => [name, round(quantile(ms, 0.5), 3)]));
}

/**
 * claim-backlog: claim cost against the size of the backlog (server only): the bench database is filled by SQL
 * (generate_series) with each backlog size in turn; the store's `claim` (every statement it runs, CLAIM
 * of delivery-sql.ts among them) and a minimal SKIP LOCKED claim are timed in rolled-back transactions,
 * and EXPLAIN (ANALYZE, BUFFERS) of each statement is kept. Then the database ceiling: small commits per
 * second from 8 clients, plain and with pg_notify (pg-reference.ts).
 */
export async function scenarioClaimBacklog(ctx: BenchContext): Promise<void> {
  if (!ctx.options.engines.includes('server')) return;
  const { sizes, runs } = ctx.options;
  const config = effectiveConfig(ctx, {});
  const name = `${ctx.base.dbName}_claim`;
  const url = databaseUrl(ctx.base.serverUrl, name);
  await recreateDatabase(ctx.base.serverUrl, name);
  const migrateLog = join(ctx.base.logDir, 'g-migrate.log');
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
  const input = {
    dispatcherId: 'bench-worker',
    limit: config.claimBatch,
    leaseMs: config.leaseMs,
    maxReclaims: config.maxReclaims,
  };
  try {
    for (const rows of sizes.backlogRows) {
      const t0 = performance.now();
      await fill(client, rows);
      const fillS = (performance.now() - t0) / 1000;
      const tableBytes = Number(
        (await client.query<{ b: string }>(`SELECT pg_total_relation_size('deliveries') AS b`)).rows[0]?.b ?? 0,
      );
      const warm = await timeClaims(client, input, 3);
      const plans = await explainClaim(client, warm[0]?.statements ?? []);
      await client.query('BEGIN');
      plans.MINIMAL_CLAIM = (
        await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${MINIMAL_CLAIM}`, [config.claimBatch])
      ).rows
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      await client.query('ROLLBACK');
      const label = `@${n0(rows)}`;
      for (let run = 1; run <= runs; run += 1) {
        const samples = await timeClaims(client, input, sizes.claimRepeats);
        const minimal = await timeStatement(client, MINIMAL_CLAIM, [config.claimBatch], sizes.claimRepeats);
        const totalP50 = quantile(
          samples.map((x) => x.totalMs),
          0.5,
        );
        const statements = perStatement(samples);
        const claimed = samples[0]?.claimed ?? 0;
        ctx.book.add(
          {
            scenario: 'claim-backlog',
            engine: 'raw',
            name: `minimal SKIP LOCKED claim ${label}`,
            unit: 'ms',
            better: 'lower',
          },
          quantile(minimal, 0.5),
        );
        ctx.book.add(
          {
            scenario: 'claim-backlog',
            engine: 'server',
            name: `store claim ${label}`,
            unit: 'ms',
            better: 'lower',
            ceiling: `minimal SKIP LOCKED claim ${label}`,
          },
          totalP50,
        );
        for (const [st, ms] of Object.entries(statements))
          ctx.book.add(
            { scenario: 'claim-backlog', engine: 'server', name: `  ${st} ${label}`, unit: 'ms', better: 'lower' },
            ms,
          );
        ctx.book.add(
          {
            scenario: 'claim-backlog',
            engine: 'server',
            name: `claimed rows/s ${label}`,
            unit: '/s',
            better: 'higher',
          },
          claimed / (totalP50 / 1000),
        );
        ctx.details.push({
          scenario: 'claim-backlog',
          run,
          backlogRows: rows,
          leasedRows: LEASED,
          endpoints: ENDPOINTS,
          claimBatch: config.claimBatch,
          rowsClaimed: claimed,
          fillS: round(fillS, 1),
          deliveriesTableBytes: tableBytes,
          claimMs: samples.map((x) => round(x.totalMs, 3)),
          statementP50Ms: statements,
          statementsPerClaim: samples[0]?.statements.map((x) => x.name) ?? [],
          minimalClaimMs: minimal.map((v) => round(v, 3)),
          ...(run === 1 ? { explain: plans } : {}),
        });
        ctx.log(
          `  claim-backlog run ${run} backlog ${n0(rows)}: store claim p50 ${round(totalP50, 3)} ms ` +
            `for ${claimed} rows (${Object.entries(statements)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}), minimal claim p50 ${round(quantile(minimal, 0.5), 3)} ms; fill ${round(fillS, 1)} s`,
        );
      }
    }
    for (let run = 1; run <= runs; run += 1) {
      const commits = await commitReference(url, ctx.options.quick ? 1_000 : 3_000);
      for (const [figure, perS] of Object.entries(commits))
        ctx.book.add({ scenario: 'claim-backlog', engine: 'raw', name: figure, unit: '/s', better: 'higher' }, perS);
      ctx.details.push({ scenario: 'claim-backlog', run, commitReference: commits, clients: 8 });
      ctx.log(
        `  claim-backlog run ${run} commit reference (8 clients): ${Object.entries(commits)
          .map(([k, v]) => `${k.replace('commits/s: ', '')} ${n0(v)}/s`)
          .join(', ')}`,
      );
    }
    const small = sizes.backlogRows[0];
    const large = sizes.backlogRows[sizes.backlogRows.length - 1];
    if (small !== undefined && large !== undefined && small !== large) {
      for (let run = 1; run <= runs; run += 1) {
        const at = (rows: number) =>
          ctx.details.find((x) => x.scenario === 'claim-backlog' && x.backlogRows === rows && x.run === run);
        const [s, l] = [at(small), at(large)];
        if (s === undefined || l === undefined) continue;
        ctx.book.add(
          {
            scenario: 'claim-backlog',
            engine: 'server',
            name: `store claim ${n0(large)} ÷ ${n0(small)}`,
            unit: '×',
            better: 'lower',
            target: '≤ 1.5',
          },
          quantile(l.claimMs as number[], 0.5) / quantile(s.claimMs as number[], 0.5),
        );
      }
    }
  } finally {
    await client.end();
    await dropDatabase(ctx.base.serverUrl, name);
  }
}
