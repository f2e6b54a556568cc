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
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
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

/** Both engines, for suites that must pass on each (docs/design.md#storage-and-the-embedded-engine: the suites run on both). */
export const ENGINES = [
  { name: 'server', fresh: freshServerDatabase },
  { name: 'embedded', fresh: freshEmbeddedDatabase },
] as const;
