import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { lockDataDir } from './data-dir-lock.ts';
import { openDurablePGlite } from './pglite-durable.ts';
import type { Db, Queryable } from './db-types.ts';
import { endedInFull, guardNewConnection, poolDb, unnamedStatements } from './pool-db.ts';

export { prepared, type Db, type Prepared, type Queryable } from './db-types.ts';

// int8 (bigint) stays a string so ids and fencing tokens never lose precision.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

/**
 * What stands between Tidings and PostgreSQL (TIDINGS_DATABASE_POOLER, docs/guides/poolers-and-replicas.md):
 * `none` (a direct connection) and `session` (a pooler that gives each client one server session for as long as
 * it stays connected) change nothing; `transaction` (a server session only for the length of a transaction) runs
 * every statement unnamed (no server-side prepared statement outlives it), sends no session `SET`, and takes the
 * sessions it needs (LISTEN, the migration lock) on the direct URL.
 */
export type PoolerMode = 'none' | 'session' | 'transaction';

/** Options of {@link openDb}. */
export interface OpenDbOptions {
  /** PostgreSQL server URL; undefined = embedded engine in `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** What stands between this pool and PostgreSQL; default `none`. Server only. */
  readonly pooler?: PoolerMode;
  /**
   * A URL that reaches PostgreSQL with a session of its own (directly or through a session pooler), for LISTEN.
   * Default: `databaseUrl`, unless {@link pooler} is `transaction` (then no LISTEN: dispatchers poll).
   */
  readonly directUrl?: string;
  /** Folder of the embedded database (created if missing). */
  readonly dataDir: string;
  /** Pool size for a server; the embedded engine always uses one connection. */
  readonly poolSize: number;
  /**
   * Embedded engine: how often to retry a data folder held by another process before giving up (default 2, 6 s apart).
   */
  readonly lockRetries?: number;
  /** Called with connection-level errors of idle clients (logged, never thrown). */
  readonly onError?: (error: Error) => void;
  /** Called when a new connection of the pool has been made (the database answers: ends a logged outage). */
  readonly onConnect?: () => void;
  /**
   * Server only: every connection of the pool plans its prepared statements once, with a generic plan
   * (`plan_cache_mode = force_generic_plan`, PostgreSQL manual "PREPARE"), instead of planning each
   * execution again for its parameter values. For the pools of {@link SmallStatements}: the hot statements
   * (grouped publish, record) when they carry few rows (docs/adr/0016-hot-path-cost.md, decision 24).
   * Default false. Ignored by the embedded engine, whose one session also runs every other statement (its
   * small statements use {@link withGenericPlans}). Ignored behind a transaction pooler, where a session setting
   * would land on whichever server session ran it, and an unnamed statement is planned at each execution anyway.
   */
  readonly genericPlans?: boolean;
}

/**
 * Most rows (messages of a publish group, outcomes of a record batch) of a hot statement that runs on a
 * {@link SmallStatements} pool. Measured (docs/adr/0016-hot-path-cost.md, decision 24): up to 4 rows
 * PostgreSQL plans each execution again with its values, which costs more than the statement's own work;
 * from about 8 rows on it keeps a generic plan by itself.
 */
export const SMALL_STATEMENT_ROWS = 4;

/**
 * Where a hot statement for few rows runs: `db`, a pool opened with {@link OpenDbOptions.genericPlans}, for
 * statements of at most `maxRows` rows; larger ones run on the store's own pool, planned as PostgreSQL chooses.
 */
export interface SmallStatements {
  readonly db: Db;
  readonly maxRows: number;
}

/** The pool a hot statement of `rows` rows runs on: `small.db` up to `small.maxRows` rows, else `db`. */
export function dbForRows(db: Db, small: SmallStatements | undefined, rows: number): Db {
  return small !== undefined && rows <= small.maxRows ? small.db : db;
}

/**
 * Plans made once for any parameter values: the setting of {@link OpenDbOptions.genericPlans} and
 * {@link withGenericPlans}.
 */
const GENERIC_PLANS = 'plan_cache_mode = force_generic_plan';

/**
 * The setting a {@link OpenDbOptions.genericPlans} pool sends on each new connection, before any other
 * statement of that connection.
 */
const GENERIC_PLANS_SQL = `SET ${GENERIC_PLANS}`;

/**
 * `db` with every statement and transaction run under generic plans (`SET LOCAL plan_cache_mode =
 * force_generic_plan` in a transaction of its own), other statements of the same session keeping PostgreSQL's
 * own choice: the {@link SmallStatements} of the embedded engine, whose one session runs every statement
 * (docs/adr/0016-hot-path-cost.md, decision 24). A statement sent through `query` runs in a transaction of its
 * own (BEGIN, the setting, the statement, COMMIT) instead of autocommit: the same effects, three more round
 * trips inside the process.
 * @throws whatever the statement or transaction throws; a failed one is rolled back as by `db.tx`
 */
export function withGenericPlans(db: Db): Db {
  const generic = async (q: Queryable): Promise<void> => {
    await q.query(`SET LOCAL ${GENERIC_PLANS}`);
  };
  return {
    ...db,
    query: (text, params) =>
      db.tx(async (q) => {
        await generic(q);
        return q.query(text, params);
      }) as never,
    tx: (fn) =>
      db.tx(async (q) => {
        await generic(q);
        return fn(q);
      }),
  };
}

/**
 * Opens the database: a `pg.Pool` on a server, or PGlite persisted in `dataDir` and served on a unix
 * socket inside it to a one-connection `pg.Pool` (the embedded engine is a single session). The embedded
 * engine flushes each commit to the disk before it answers ({@link openDurablePGlite}).
 */
export async function openDb(options: OpenDbOptions): Promise<Db> {
  return options.databaseUrl !== undefined ? openServerDb(options.databaseUrl, options) : openEmbeddedDb(options);
}

/** A `pg.Pool` on the PostgreSQL server at `databaseUrl` (behind a transaction pooler: unnamed statements). */
function openServerDb(databaseUrl: string, options: OpenDbOptions): Db {
  // query_timeout bounds every statement on the client side, so a connection that died without a word
  // (a restarted or unreachable server) fails the call instead of hanging its caller forever.
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize,
    connectionTimeoutMillis: 5_000,
    query_timeout: QUERY_TIMEOUT_MS,
  });
  pool.on('error', (error) => options.onError?.(error));
  pool.on('connect', guardNewConnection);
  if (options.onConnect !== undefined) pool.on('connect', options.onConnect);
  const ended = endedInFull(pool);
  const transactionPooled = options.pooler === 'transaction';
  if (options.genericPlans === true && !transactionPooled) {
    // Queued before any statement of the checkout that opened the connection. Should it fail, the
    // connection plans as PostgreSQL chooses (slower, never wrong) and the failure is reported.
    pool.on('connect', (client) => {
      client
        .query(GENERIC_PLANS_SQL)
        .catch((error: unknown) =>
          options.onError?.(
            new Error(`${GENERIC_PLANS_SQL} failed: this connection plans as PostgreSQL chooses`, { cause: error }),
          ),
        );
    });
  }
  const listenUrl = options.directUrl ?? (transactionPooled ? undefined : databaseUrl);
  const db = poolDb(
    'server',
    pool,
    async () => {
      if (listenUrl === undefined) return null;
      const client = new pg.Client({ connectionString: listenUrl, connectionTimeoutMillis: 5_000 });
      await client.connect();
      return client;
    },
    ended,
  );
  return transactionPooled ? unnamedStatements(db) : db;
}

/**
 * PGlite persisted in `options.dataDir`, its folder locked against a second process, served on a unix socket inside
 * it to a one-connection `pg.Pool`.
 */
async function openEmbeddedDb(options: OpenDbOptions): Promise<Db> {
  const dir = resolve(options.dataDir);
  await mkdir(dir, { recursive: true });
  // The embedded engine is one process: a second one opening the same files would corrupt them. The lock
  // is refused while its holder lives, and taken over once it is stale (the holder crashed).
  // A holder that died (SIGKILL) is detected by its pid at once and taken over (data-dir-lock.ts).
  let unlock: () => Promise<void>;
  try {
    unlock = await lockDataDir(dir, {
      retries: options.lockRetries ?? 2,
      // A long stall of this process (a slow first start) must not crash it: say so, keep running.
      onCompromised: (error) => options.onError?.(error),
    });
  } catch (error) {
    throw new DataDirInUseError(
      `the data folder ${dir} is in use by another Tidings process (the embedded engine is single-process; ` +
        'stop it, or use DATABASE_URL for several processes)',
      { cause: error },
    );
  }
  let lite: PGlite | undefined;
  let server: PGLiteSocketServer | undefined;
  try {
    lite = await openDurablePGlite(join(dir, 'pgdata'));
    const socketDir = await socketFolder(dir);
    const socketPath = join(socketDir, '.s.PGSQL.5432');
    await rm(socketPath, { force: true }); // left by a crashed holder of the lock we now hold
    server = new PGLiteSocketServer({ db: lite, path: socketPath, maxConnections: 1 });
    await server.start();
    const pool = new pg.Pool({ host: socketDir, port: 5432, user: 'postgres', database: 'postgres', max: 1 });
    pool.on('error', (error) => options.onError?.(error));
    pool.on('connect', guardNewConnection);
    // Every socket connection reaches the same PGlite session, which keeps the statements an earlier
    // connection prepared: a new connection (after a lost one) would fail "prepared statement … already
    // exists" on each of them. Queued before any other statement of the connection.
    pool.on('connect', (client) => {
      client
        .query('DEALLOCATE ALL')
        .catch((error: unknown) => options.onError?.(error instanceof Error ? error : new Error(String(error))));
    });
    const [liteDb, socketServer] = [lite, server];
    return poolDb(
      'embedded',
      pool,
      async () => null,
      async () => {
        await pool.end();
        await socketServer.stop();
        await liteDb.close();
        await unlock();
      },
    );
  } catch (error) {
    await server?.stop().catch(() => undefined);
    await lite?.close().catch(() => undefined);
    await unlock().catch(() => undefined);
    throw error;
  }
}

/** Client-side bound of one statement on a server, in ms (migrations included). */
export const QUERY_TIMEOUT_MS = 30_000;

/** Thrown when another live process holds the embedded data folder. */
export class DataDirInUseError extends Error {
  readonly code = 'data_dir_in_use';
}

/** A short socket folder: unix socket paths are limited to ~107 bytes. */
async function socketFolder(dataDir: string): Promise<string> {
  const candidate = join(dataDir, 'sock');
  if (candidate.length + 14 < 100) {
    await mkdir(candidate, { recursive: true });
    return candidate;
  }
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  return mkdtemp(join(tmpdir(), 'tidings-'));
}
