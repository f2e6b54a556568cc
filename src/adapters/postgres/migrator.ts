import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PG_MIGRATE_LOCK_ID, runner } from 'node-pg-migrate';
import type pg from 'pg';
import type { Db, Queryable } from './db.ts';
import { adoptLegacyHistory, BASELINE_MIGRATION } from './migration-baseline.ts';
import { ROUTINES, type Routine } from './routines.ts';
import type { Logger } from '../../ports/logger.ts';

/**
 * The folder of the numbered SQL migrations: the baseline of 0.1.0, then migrations that are forward-only and
 * never edited (docs/adr/0019-migration-baseline.md).
 */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

/** What one {@link migrate} call applied. */
export interface MigrationRun {
  /**
   * Whether this call marked a database migrated by the history from before 0.1.0 as at the baseline
   * (src/adapters/postgres/migration-baseline.ts).
   */
  readonly baselined: boolean;
  /** Names of the migrations applied, in order. */
  readonly migrations: string[];
  /** Names of the routines (re)applied because their file's checksum changed, in order. */
  readonly routines: string[];
}

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** The routines to keep in step; default {@link ROUTINES}. */
  readonly routines?: readonly Routine[];
}

/**
 * Applies every pending migration with node-pg-migrate, then every routine whose file changed
 * (src/adapters/postgres/routines.ts), all under node-pg-migrate's advisory lock, so concurrent starts are
 * safe: the others wait for the one migrating (docs/adr/0001-runtime-and-embedded-engine.md). Same files on
 * a PostgreSQL server and on the embedded engine. Each routine runs in its own transaction with the upsert
 * of its checksum into `tidings_routines`, so a failed routine changes nothing and is retried next start.
 * First, under the same lock, a database migrated by the whole history from before 0.1.0 is marked as at the
 * baseline (docs/adr/0019-migration-baseline.md).
 * @returns whether the database was marked as at the baseline, and the migrations and routines applied
 * @throws LegacyHistoryIncompleteError (code `legacy_migrations_incomplete`), changing nothing, for a database
 *   part-way through that history; the database error of a failing migration or routine
 */
export async function migrate(db: Db, logger: Logger, options: MigrateOptions = {}): Promise<MigrationRun> {
  // The lock below is a session's: behind a transaction pooler it would stay on whichever server session took it.
  if (db.transactionPooled === true) throw new MigrationNeedsSessionError(await pendingMigrations(db, options));
  const routines = options.routines ?? ROUTINES;
  // One connection from the pool for the whole run: the advisory lock is per session.
  const run = await db.tx(async (client) => {
    await client.query('COMMIT'); // node-pg-migrate manages its own transactions on this session
    try {
      // The lock node-pg-migrate would take, taken here so that it also covers the routines. Processes that
      // start together wait for the one migrating.
      await client.query(`SELECT pg_advisory_lock(${PG_MIGRATE_LOCK_ID})`);
      try {
        const baselined = await adoptLegacyHistory(client);
        const result = await runner({
          dbClient: client as unknown as pg.ClientBase,
          dir: MIGRATIONS_DIR,
          direction: 'up',
          migrationsTable: 'pgmigrations',
          count: Number.POSITIVE_INFINITY,
          checkOrder: true,
          noLock: true,
          logger: {
            debug: () => undefined,
            info: (msg: string) => logger.debug({ msg }, 'migrate'),
            warn: (msg: string) => logger.warn({ msg }, 'migrate'),
            error: (msg: string) => logger.error({ msg }, 'migrate'),
          },
        });
        return { baselined, migrations: result.map((m) => m.name), routines: await applyRoutines(client, routines) };
      } finally {
        await client.query(`SELECT pg_advisory_unlock(${PG_MIGRATE_LOCK_ID})`);
      }
    } finally {
      await client.query('BEGIN'); // tx() ends with COMMIT
    }
  });
  if (run.baselined) {
    logger.info({ baseline: BASELINE_MIGRATION }, 'migration history from before 0.1.0 marked as at the baseline');
  }
  if (run.migrations.length > 0) logger.info({ migrations: run.migrations }, 'migrations applied');
  if (run.routines.length > 0) logger.info({ routines: run.routines }, 'routines applied');
  return run;
}

/**
 * Thrown by {@link migrate} on a database reached through a transaction pooler: the migration lock is a session's,
 * and no session lasts there beyond a transaction (docs/guides/poolers-and-replicas.md). `pending` names what a
 * migration on a direct connection would apply (empty: the database is up to date).
 */
export class MigrationNeedsSessionError extends Error {
  readonly code = 'migration_needs_session';
  readonly pending: readonly string[];
  constructor(pending: readonly string[]) {
    const listed = `${pending.slice(0, 3).join(', ')}${pending.length > 3 ? ', …' : ''}`;
    const what = pending.length === 0 ? 'nothing is pending' : `${pending.length} pending (${listed})`;
    super(
      `migrations need a database session of their own, which a transaction pooler does not keep (${what}): ` +
        'set TIDINGS_DIRECT_DATABASE_URL to a direct or session-pooled URL of the same database ' +
        '(docs/guides/poolers-and-replicas.md)',
    );
    this.pending = pending;
  }
}

/* PENDING_TABLES — whether the migrations' table and the routines' table exist yet. No parameters; one row. */
const PENDING_TABLES = `SELECT to_regclass('pgmigrations') IS NOT NULL AS migrations,
  to_regclass('tidings_routines') IS NOT NULL AS routines`;

/**
 * The migrations not yet applied and the routines whose file changed, in the order {@link migrate} would run them
 * (routines as `routine <name>`). Read-only, one statement at a time, without the lock: safe through any pooler.
 * A database whose history predates the baseline (docs/adr/0019-migration-baseline.md) counts as pending.
 */
export async function pendingMigrations(db: Queryable, options: MigrateOptions = {}): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR))
    .filter((f) => /\.(sql|js|ts)$/.test(f))
    .map((f) => f.replace(/\.[^.]+$/, ''))
    .sort();
  const tables = (await db.query<{ migrations: boolean; routines: boolean }>(PENDING_TABLES)).rows[0];
  const applied = new Set<string>();
  if (tables?.migrations === true) {
    for (const row of (await db.query<{ name: string }>('SELECT name FROM pgmigrations')).rows) applied.add(row.name);
  }
  const recorded = new Map<string, string>();
  if (tables?.routines === true) {
    const res = await db.query<{ name: string; checksum: string }>('SELECT name, checksum FROM tidings_routines');
    for (const row of res.rows) recorded.set(row.name, row.checksum);
  }
  const routines: string[] = [];
  for (const routine of options.routines ?? ROUTINES) {
    const checksum = createHash('sha256')
      .update(await readFile(routine.path, 'utf8'))
      .digest('hex');
    if (recorded.get(routine.name) !== checksum) routines.push(`routine ${routine.name}`);
  }
  return [...files.filter((name) => !applied.has(name)), ...routines];
}

/** Runs each routine whose file's SHA-256 differs from the recorded one; the caller holds the migration lock. */
async function applyRoutines(client: Queryable, routines: readonly Routine[]): Promise<string[]> {
  await client.query(`CREATE TABLE IF NOT EXISTS tidings_routines (
    name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
  const applied: string[] = [];
  for (const routine of routines) {
    const sql = await readFile(routine.path, 'utf8');
    const checksum = createHash('sha256').update(sql).digest('hex');
    const recorded = await client.query<{ checksum: string }>('SELECT checksum FROM tidings_routines WHERE name = $1', [
      routine.name,
    ]);
    if (recorded.rows[0]?.checksum === checksum) continue;
    await client.query('BEGIN');
    try {
      await client.query(sql);
      await client.query(
        `INSERT INTO tidings_routines (name, checksum) VALUES ($1, $2)
        ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = clock_timestamp()`,
        [routine.name, checksum],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw new Error(`routine ${routine.name} (${routine.path}) failed`, { cause: error });
    }
    applied.push(routine.name);
  }
  return applied;
}
