/**
 * `node bench/sql-cost.ts [--messages N] [--rounds R] [--batch B] [--keyed] [--analyze-backlog] [--database-url URL]`:
 * PostgreSQL CPU per message of the three hot-path steps — publish (the grouped publish statement), claim and record (a
 * success) — run through the real stores on a fresh database `tidings_bench_sqlcost`, one step at a time, so that each
 * step's cost is the CPU its backends used (/proc/<pid>/stat, utime + stime) over the messages it handled.
 * The server is the only other process at work while a step runs, so the figures hardly depend on the
 * machine's load, unlike the end-to-end scenarios; compare forms of a statement with it
 * (docs/adr/0016-hot-path-cost.md). A warm-up round fills the tables and ANALYZE runs after it, as
 * autovacuum would on a database in service. Prints µs of backend CPU and WAL bytes per message for each
 * step, the median of the rounds. Two runs with different `--batch` sizes split a step's cost into its part per
 * statement and its part per message. `--keyed` publishes every message with an Idempotency-Key (the grouped
 * keyed publish: key claims, publish and stored answers in one statement per group). `--analyze-backlog` runs
 * ANALYZE after each round's publish, before its claims: the planner then plans the claims with statistics
 * that saw the whole round due on one endpoint, as autoanalyze does while a backlog builds up after an
 * outage (docs/adr/0016-hot-path-cost.md, decision 14).
 */
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { keyRingCipher } from '../src/adapters/crypto/key-ring.ts';
import { openDb, type Db } from '../src/adapters/postgres/db.ts';
import { migrate } from '../src/adapters/postgres/migrator.ts';
import { createPgDeliveryStore } from '../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../src/adapters/postgres/message/message-store.ts';
import { runAutocommit } from '../src/adapters/postgres/tx.ts';
import { encodeSecret } from '../src/domain/signing.ts';
import type { AttemptRecord, ClaimedDelivery } from '../src/ports/delivery-store.ts';
import { procUsage } from './procs.ts';
import { databaseUrl, dropDatabase, recreateDatabase } from './tidings.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string' },
    rounds: { type: 'string' },
    batch: { type: 'string' },
    keyed: { type: 'boolean' },
    'analyze-backlog': { type: 'boolean' },
    'database-url': { type: 'string' },
  },
});
const KEYED = values.keyed === true;
const MESSAGES = Math.max(100, Number(values.messages ?? 2_000));
const ROUNDS = Math.max(1, Number(values.rounds ?? 5));
const SERVER =
  values['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DB_NAME = 'tidings_bench_sqlcost';
/**
 * Publish calls in flight (grouped into shared statements as in the API) and the claim/record batch size (default 50).
 */
const IN_FLIGHT = Math.max(1, Number(values.batch ?? 50));
const PAYLOAD = Buffer.from(JSON.stringify({ type: 'bench', data: 'x'.repeat(1000) }).slice(0, 1024));

const quiet = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => quiet,
};

/** CPU ms used so far by every backend connected to the bench database (the caller's own included). */
async function backendCpuMs(db: Db): Promise<number> {
  const pids = (
    await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')
  ).rows.map((r) => r.pid);
  return pids.reduce((total, pid) => total + (procUsage(pid)?.cpuS ?? 0) * 1000, 0);
}

const walBytes = async (db: Db): Promise<bigint> =>
  BigInt((await db.query<{ lsn: string }>("SELECT (pg_current_wal_insert_lsn() - '0/0')::text AS lsn")).rows[0]!.lsn);

await recreateDatabase(SERVER, DB_NAME);
const db = await openDb({ databaseUrl: databaseUrl(SERVER, DB_NAME), dataDir: '', poolSize: 4 });
try {
  await migrate(db, quiet);
  const key = randomBytes(32);
  const cipher = keyRingCipher([{ id: 'k1', key }]);
  const messages = createPgMessageStore(db, cipher, () => undefined, { groupKeyed: true });
  const deliveries = createPgDeliveryStore(db, cipher);
  await db.query(`INSERT INTO applications (id, name) VALUES ('app_sqlcost', 'sql cost')`);
  const sealed = cipher.encrypt(Buffer.from(encodeSecret(randomBytes(24)), 'utf8'), 'ep_sqlcost');
  await db.query(
    `INSERT INTO endpoints (id, app_id, url, secret, secret_key_id) VALUES ('ep_sqlcost', 'app_sqlcost', ` +
      `'http://127.0.0.1:9/', $1, $2)`,
    [sealed.data, sealed.keyId],
  );

  let seq = 0;
  const publish = async (n: number): Promise<void> => {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < n) {
        next += 1;
        seq += 1;
        const id = `msg_sqlcost${String(seq).padStart(16, '0')}`;
        const message = {
          id,
          appId: 'app_sqlcost',
          eventId: null,
          eventType: 'bench.event',
          channels: null,
          tags: null,
          payload: PAYLOAD,
          retentionHours: null,
        };
        if (KEYED) {
          const scope = {
            owner: 'admin',
            route: 'POST /api/v1/app/:appId/msg',
            key: `key_${id}`,
            fingerprint: `fp_${id}`,
            ttlMs: 86_400_000,
            waitMs: 5_000,
          };
          const stored = await messages.insertKeyed(scope, message, null, {
            status: 202,
            body: { id: message.id, eventType: message.eventType, timestamp: null },
          });
          if (stored === null) throw new Error(`the grouped keyed publish refused ${id}`);
        } else {
          await runAutocommit(db, (tx) => messages.insert(tx, message, null));
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  };
  const claimAll = async (): Promise<ClaimedDelivery[]> => {
    const all: ClaimedDelivery[] = [];
    for (;;) {
      const { deliveries: batch } = await deliveries.claim({
        dispatcherId: 'sqlcost',
        limit: IN_FLIGHT,
        leaseMs: 60_000,
        maxReclaims: 5,
        now: null,
        sweep: false,
      });
      if (batch.length === 0) return all;
      all.push(...batch);
    }
  };
  const recordAll = async (claimed: readonly ClaimedDelivery[]): Promise<void> => {
    for (let i = 0; i < claimed.length; i += IN_FLIGHT) {
      const records: AttemptRecord[] = claimed.slice(i, i + IN_FLIGHT).map((d) => ({
        deliveryId: d.deliveryId,
        fencingToken: d.fencingToken,
        dispatcherId: d.dispatcherId,
        endpointId: d.endpointId,
        attemptId: `atmpt_${d.deliveryId}_${d.fencingToken}`,
        attemptNumber: d.attemptNumber,
        trigger: 'scheduled',
        url: d.url,
        succeeded: true,
        statusCode: 200,
        responseBody: '',
        location: null,
        errorKind: null,
        errorDetail: null,
        durationMs: 1,
        next: { next: 'succeeded' },
        throttleEndpointMs: null,
        disableEndpointReason: null,
      }));
      await deliveries.recordAttempts(records, null);
    }
  };
  const step = async (work: () => Promise<void>): Promise<{ cpuUs: number; walB: number }> => {
    const cpu0 = await backendCpuMs(db);
    const wal0 = await walBytes(db);
    await work();
    const wal1 = await walBytes(db);
    const cpu1 = await backendCpuMs(db);
    return { cpuUs: ((cpu1 - cpu0) * 1000) / MESSAGES, walB: Number(wal1 - wal0) / MESSAGES };
  };

  const rounds: Record<'publish' | 'claim' | 'record', { cpuUs: number; walB: number }[]> = {
    publish: [],
    claim: [],
    record: [],
  };
  for (let r = 0; r <= ROUNDS; r += 1) {
    let claimed: ClaimedDelivery[] = [];
    const p = await step(() => publish(MESSAGES));
    if (values['analyze-backlog'] === true) await db.query('ANALYZE deliveries');
    const c = await step(async () => {
      claimed = await claimAll();
    });
    if (claimed.length !== MESSAGES) throw new Error(`claimed ${claimed.length} of ${MESSAGES}`);
    const w = await step(() => recordAll(claimed));
    if (r === 0) {
      await db.query('ANALYZE');
      continue;
    }
    rounds.publish.push(p);
    rounds.claim.push(c);
    rounds.record.push(w);
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `PostgreSQL backend CPU and WAL per message, ${MESSAGES} messages of ${PAYLOAD.length} B per ` +
      'round' +
      (KEYED ? ', each with an Idempotency-Key' : '') +
      (values['analyze-backlog'] === true ? ', analysed with the round due' : '') +
      ', ' +
      `batches of ${IN_FLIGHT}, median of ${ROUNDS} rounds`,
  );
  let cpu = 0;
  let wal = 0;
  for (const [name, xs] of Object.entries(rounds)) {
    const c = median(xs.map((x) => x.cpuUs));
    const w = median(xs.map((x) => x.walB));
    cpu += c;
    wal += w;
    console.log(
      `  ${name.padEnd(8)} ${c.toFixed(1).padStart(7)} µs   ${w.toFixed(0).padStart(6)} B WAL   (rounds: ` +
        `${xs.map((x) => x.cpuUs.toFixed(0)).join(' ')} µs)`,
    );
  }
  console.log(`  ${'total'.padEnd(8)} ${cpu.toFixed(1).padStart(7)} µs   ${wal.toFixed(0).padStart(6)} B WAL`);
} finally {
  await db.close();
  await dropDatabase(SERVER, DB_NAME);
}
