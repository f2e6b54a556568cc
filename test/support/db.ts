import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDb, type Db } from '../../src/adapters/postgres/db.ts';
import { migrate } from '../../src/adapters/postgres/migrator.ts';
import { silentLogger } from './logger.ts';

/** Admin connection to the PostgreSQL server used to create one database per test file. */
export const SERVER_ADMIN_URL = process.env.TIDINGS_TEST_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/** A migrated database for one test file, and how to get rid of it. */
export interface TestDatabase {
  readonly engine: 'server' | 'embedded';
  readonly db: Db;
  /** DATABASE_URL for processes the test spawns (server only), else undefined. */
  readonly url: string | undefined;
  /** Data folder of the embedded engine, else undefined. */
  readonly dataDir: string | undefined;
  drop(): Promise<void>;
}

/** Options of the fresh databases. */
export interface FreshOptions {
  /** Whether to run the migrator on it (default true); false leaves it empty. */
  readonly migrate?: boolean;
}

/** Creates a fresh database on the PostgreSQL server (127.0.0.1:5432), migrated unless told otherwise. */
export async function freshServerDatabase(options: FreshOptions = {}): Promise<TestDatabase> {
  const name = `tidings_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: SERVER_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = SERVER_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  const db = await openDb({ databaseUrl: url, dataDir: '', poolSize: 10 });
  if (options.migrate !== false) await migrate(db, silentLogger);
  return {
    engine: 'server',
    db,
    url,
    dataDir: undefined,
    async drop() {
      await db.close();
      const a = new pg.Client({ connectionString: SERVER_ADMIN_URL });
      await a.connect();
      try {
        const lingering = await connectionsGone(a, name);
        // Dropped all the same, so that nothing is left behind; then the test fails, naming what it left open.
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        if (lingering.length > 0) throw new LingeringConnectionsError(name, lingering);
      } finally {
        await a.end();
      }
    },
  };
}

/** How long {@link TestDatabase.drop} waits for the connections of its database to close. */
const DROP_WAIT_MS = 5_000;

/** A connection to a test database that was still open when the test dropped it. */
interface Lingering {
  readonly pid: number;
  readonly application_name: string;
  readonly state: string | null;
  readonly query: string;
}

/** A test left connections to its database open: something it started was not stopped, or not in full. */
export class LingeringConnectionsError extends Error {
  constructor(database: string, lingering: readonly Lingering[]) {
    const list = lingering.map(
      (c) => `pid ${c.pid} "${c.application_name}" ${c.state ?? '?'}: ${c.query.slice(0, 80)}`,
    );
    super(`${lingering.length} connection(s) to ${database} still open at its drop: ${list.join('; ')}`);
  }
}

/**
 * Waits until no connection to `name` is left, at most {@link DROP_WAIT_MS}: a pool's `end()` resolves before its
 * connections have closed, and a connection the server ends then reports the error to its client (a test's pool
 * without an error listener crashes the file). Returns what is still open after the wait.
 */
async function connectionsGone(admin: pg.Client, name: string): Promise<Lingering[]> {
  const until = Date.now() + DROP_WAIT_MS;
  for (;;) {
    const { rows } = await admin.query<Lingering>(
      'SELECT pid, application_name, state, query FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    if (rows.length === 0 || Date.now() > until) return rows;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Creates a fresh embedded (PGlite) database in a temporary folder, migrated unless told otherwise. */
export async function freshEmbeddedDatabase(options: FreshOptions = {}): Promise<TestDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tidings-test-'));
  const db = await openDb({ databaseUrl: undefined, dataDir, poolSize: 1 });
  if (options.migrate !== false) await migrate(db, silentLogger);
  return {
    engine: 'embedded',
    db,
    url: undefined,
    dataDir,
    async drop() {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Both engines, for suites that must pass on each (docs/design.md#storage-and-the-embedded-engine: the suites run on
 * both).
 */
export const ENGINES = [
  { name: 'server', fresh: freshServerDatabase },
  { name: 'embedded', fresh: freshEmbeddedDatabase },
] as const;
