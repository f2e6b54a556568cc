import type { Registry } from 'prom-client';
import { openDb, type Db, type OpenDbOptions } from '../adapters/postgres/db.ts';
import {
  migrate,
  MigrationNeedsSessionError,
  pendingMigrations,
  type MigrationRun,
} from '../adapters/postgres/migrator.ts';
import { PoolerMismatchError, sessionsMoveBetweenTransactions } from '../adapters/postgres/pooler-probe.ts';
import { createReadRouter, type ReadRouter } from '../adapters/postgres/read-routing.ts';
import type { Config } from '../config/config.ts';
import { registerReadReplicaMetrics } from '../observability/read-replica-metrics.ts';
import type { Logger } from '../ports/logger.ts';

/**
 * How a process reaches PostgreSQL behind a pooler and beside a read replica (docs/guides/poolers-and-replicas.md,
 * docs/adr/0022-poolers-and-read-replicas.md): the options of every pool, the start-up check of the pooler setting,
 * migrations on a session, and the reader of the heavy reads.
 */

/** The line logged when the replica's staleness bound passes TIDINGS_READ_MAX_LAG (once per change of state). */
const LAGGING_LINE = 'read replica lags past TIDINGS_READ_MAX_LAG: its reads go to the primary';

/** What every server pool of the process is opened with: TIDINGS_DATABASE_POOLER and TIDINGS_DIRECT_DATABASE_URL. */
export function poolerOptions(config: Config): Pick<OpenDbOptions, 'pooler' | 'directUrl'> {
  const direct = config.directDatabaseUrl;
  return { pooler: config.databasePooler, ...(direct === undefined ? {} : { directUrl: direct }) };
}

/**
 * Runs `work` of a one-off command (migrate, retention run, keys rotate) on a database opened with `poolSize`
 * connections and {@link poolerOptions}, and closes the database after it, whatever its end.
 */
export async function withCommandDb<T>(config: Config, poolSize: number, work: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize,
    ...poolerOptions(config),
  });
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

/**
 * Refuses a start whose URLs contradict TIDINGS_DATABASE_POOLER: a DATABASE_URL whose statements move between
 * server sessions although the setting says none or session (LISTEN would hear nothing and the migration lock
 * would stay behind on a pooled session), or a TIDINGS_DIRECT_DATABASE_URL that does the same. Behind a
 * transaction pooler without a direct URL, says once that dispatchers poll.
 * @throws PoolerMismatchError (`database_pooler_mismatch`); the driver's error when a URL cannot be reached
 */
export async function checkPooler(config: Config, logger: Logger): Promise<void> {
  if (config.databaseUrl === undefined) return;
  if (config.databasePooler !== 'transaction' && (await sessionsMoveBetweenTransactions(config.databaseUrl))) {
    throw new PoolerMismatchError(
      "DATABASE_URL runs one connection's statements on different server sessions, as a " +
        `transaction pooler does, but TIDINGS_DATABASE_POOLER=${config.databasePooler}: set ` +
        'TIDINGS_DATABASE_POOLER=transaction, and TIDINGS_DIRECT_DATABASE_URL to a direct or session-pooled URL for ' +
        'LISTEN and migrations (docs/guides/poolers-and-replicas.md)',
    );
  }
  if (config.directDatabaseUrl !== undefined && (await sessionsMoveBetweenTransactions(config.directDatabaseUrl))) {
    throw new PoolerMismatchError(
      "TIDINGS_DIRECT_DATABASE_URL runs one connection's statements on different server " +
        'sessions, as a transaction pooler does: it must reach PostgreSQL directly or through a session pooler ' +
        '(docs/guides/poolers-and-replicas.md)',
    );
  }
  if (config.databasePooler === 'transaction' && config.directDatabaseUrl === undefined) {
    logger.warn(
      { pollIntervalMs: config.pollIntervalMs },
      'TIDINGS_DATABASE_POOLER=transaction without TIDINGS_DIRECT_DATABASE_URL: no LISTEN, so dispatchers find work ' +
        'published by other processes at their next poll (TIDINGS_POLL_INTERVAL), and migrations are only checked',
    );
  }
}

/** Options of {@link migrateOnSession}. */
export interface MigrateOnSessionOptions {
  /**
   * Behind a transaction pooler without TIDINGS_DIRECT_DATABASE_URL: true checks that nothing is pending (a
   * process's start, whose migrations another step applied); false refuses (the migrate command).
   */
  readonly orCheck: boolean;
}

/**
 * Applies the migrations (src/adapters/postgres/migrator.ts) on a connection that keeps its session: `db` itself
 * unless it is transaction-pooled, else a one-connection pool on TIDINGS_DIRECT_DATABASE_URL, closed after.
 * @returns what was applied (nothing, when only checked)
 * @throws MigrationNeedsSessionError (`migration_needs_session`) behind a transaction pooler without a direct URL,
 *   naming what is pending: always when `orCheck` is false, else when something is pending
 */
export async function migrateOnSession(
  config: Config,
  db: Db,
  logger: Logger,
  options: MigrateOnSessionOptions,
): Promise<MigrationRun> {
  if (db.transactionPooled !== true) return migrate(db, logger);
  if (config.directDatabaseUrl !== undefined) {
    const direct = await openDb({ databaseUrl: config.directDatabaseUrl, dataDir: config.dataDir, poolSize: 1 });
    try {
      return await migrate(direct, logger);
    } finally {
      await direct.close();
    }
  }
  const pending = await pendingMigrations(db);
  if (!options.orCheck || pending.length > 0) throw new MigrationNeedsSessionError(pending);
  logger.info({ pending: 0 }, 'migrations: none pending (not applied here: transaction pooler without a direct URL)');
  return { baselined: false, migrations: [], routines: [] };
}

/**
 * Opens the reader of the heavy reads when TIDINGS_READ_DATABASE_URL is set: a pool on the replica (its statements
 * unnamed, so the URL may be a pooler of any mode), routed by {@link createReadRouter} with its metrics on
 * `registry` and one log line per change of the replica's state; the first lag check is made before it returns.
 * @returns the router (its `reader` is the query stores' handle; `stop` closes its pool), or null when unset
 */
export async function openReadRouting(
  config: Config,
  primary: Db,
  registry: Registry,
  logger: Logger,
): Promise<ReadRouter | null> {
  if (config.readDatabaseUrl === undefined) return null;
  const replica = await openDb({
    databaseUrl: config.readDatabaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    pooler: 'transaction',
    onError: (error) => logger.warn({ err: error }, 'idle read replica connection failed'),
  });
  const maxLagMs = config.readMaxLagMs;
  const router: ReadRouter = createReadRouter({
    primary,
    replica,
    maxLagMs,
    checkMs: config.readLagCheckMs,
    nowMs: () => performance.now(),
    // Reads start after this function returns, once `metrics` exists.
    onFallback: (reason) => metrics.fallback(reason),
    onChange: (state, reading, error) => {
      const lagMs = reading.lagMs === null ? null : Math.round(reading.lagMs);
      if (state === 'serving') logger.info({ lagMs }, 'read replica serves the heavy reads');
      else if (state === 'lagging') logger.warn({ lagMs, maxLagMs }, LAGGING_LINE);
      else {
        const why = state === 'unavailable' ? 'unreachable' : 'lag unknown';
        logger.warn({ err: error }, `read replica ${why}: its reads go to the primary`);
      }
    },
  });
  const metrics = registerReadReplicaMetrics(registry, { up: () => router.reading().up, lagNowMs: router.lagNowMs });
  await router.start();
  return router;
}
