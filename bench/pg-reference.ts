import pg from 'pg';

/** Clients of the commit reference (the PostgreSQL reference figures of docs/guides/benchmark.md use 8). */
const CLIENTS = 8;

/** One commit pattern: its name and one transaction of it on a client. */
interface Pattern {
  readonly name: string;
  readonly run: (c: pg.Client) => Promise<unknown>;
}

const PATTERNS: readonly Pattern[] = [
  { name: 'commits/s: 1-row insert', run: (c) => c.query(`INSERT INTO ref (v) VALUES ('x')`) },
  {
    name: 'commits/s: 1-row insert + pg_notify',
    run: (c) => c.query(`WITH i AS (INSERT INTO ref (v) VALUES ('x')) SELECT pg_notify('tidings_bench_ref', '')`),
  },
  {
    name: 'commits/s: BEGIN, 2 inserts, COMMIT',
    run: async (c) => {
      await c.query('BEGIN');
      await c.query(`INSERT INTO ref (v) VALUES ('x')`);
      await c.query(`INSERT INTO ref (v) VALUES ('y')`);
      await c.query('COMMIT');
    },
  },
];

/**
 * The database ceiling beside the claim figures (server only): transactions per second of small commits
 * from {@link CLIENTS} clients for `durationMs` each, plain, with a `pg_notify` in the transaction (a
 * notifying commit takes a cluster-wide lock, so such commits are serialized), and as a 4-round-trip
 * transaction. Runs in the given (bench) database, in a table of its own that it drops afterwards.
 * @returns commits per second per pattern
 */
export async function commitReference(url: string, durationMs: number): Promise<Record<string, number>> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  const clients: pg.Client[] = [];
  try {
    await setup.query('CREATE TABLE IF NOT EXISTS ref (id bigserial PRIMARY KEY, v text)');
    for (let i = 0; i < CLIENTS; i += 1) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      clients.push(c);
    }
    const out: Record<string, number> = {};
    for (const pattern of PATTERNS) {
      let n = 0;
      const end = Date.now() + durationMs;
      const t0 = performance.now();
      await Promise.all(
        clients.map(async (c) => {
          while (Date.now() < end) {
            await pattern.run(c);
            n += 1;
          }
        }),
      );
      out[pattern.name] = n / ((performance.now() - t0) / 1000);
    }
    return out;
  } finally {
    for (const c of clients) await c.end().catch(() => undefined);
    await setup.query('DROP TABLE IF EXISTS ref').catch(() => undefined);
    await setup.end();
  }
}
