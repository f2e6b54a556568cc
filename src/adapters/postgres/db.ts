import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { lockDataDir } from './data-dir-lock.ts';
import { openDurablePGlite } from './pglite-durable.ts';

/**
 * A statement prepared once per connection under `name`: later calls skip parsing and planning (PostgreSQL
 * may then use a generic plan, see "PREPARE" in its manual). Only for constant texts on hot paths: a
 * connection keeps every statement it prepared until it closes. Make one with {@link prepared}.
 */
export interface Prepared {
  readonly name: string;
  readonly text: string;
}

/** Declares a {@link Prepared} statement; `name` must be unique in the process. */
export function prepared(name: string, text: string): Prepared {
  return { name, text };
}

/** Something that runs one SQL statement: the pool, or the client of an open transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string | Prepared,
    params?: readonly unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/**
 * The database handle every PostgreSQL adapter uses. The same `pg` driver and the same SQL run on a
 * PostgreSQL server and on the embedded engine (docs/design.md#storage-and-the-embedded-engine,
 * docs/design.md#runtime).
 */
export interface Db extends Queryable {
  readonly engine: 'server' | 'embedded';
  /**
   * True when statements reach PostgreSQL through a transaction pooler ({@link PoolerMode} `transaction`): no
   * session state lasts beyond a transaction, so nothing that needs a session (a session advisory lock, LISTEN, a
   * prepared statement kept by name) may run on it. Absent = false.
   */
  readonly transactionPooled?: boolean;
  /** Runs `fn` in one transaction (READ COMMITTED); commits on return, rolls back on throw. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * A dedicated connection for LISTEN, or null on the embedded engine (single session: wake-ups are in-process) and
   * behind a transaction pooler without {@link OpenDbOptions.directUrl} (dispatchers then poll).
   */
  listenClient(): Promise<pg.Client | null>;
  close(): Promise<void>;
}

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
  if (options.databaseUrl !== undefined) {
    // query_timeout bounds every statement on the client side, so a connection that died without a word
    // (a restarted or unreachable server) fails the call instead of hanging its caller forever.
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
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
    const listenUrl = options.directUrl ?? (transactionPooled ? undefined : options.databaseUrl);
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

/** `text` as an unnamed statement: the text of a {@link Prepared}, without its name. */
function unnamed(text: string | Prepared): string {
  return typeof text === 'string' ? text : text.text;
}

/**
 * `db` for a transaction pooler: every statement, in a transaction or not, is sent without a name (the driver then
 * uses the unnamed statement, parsed and planned for that execution only), so no server session is asked for a
 * statement that another session prepared. The values stay parameters.
 */
function unnamedStatements(db: Db): Db {
  const onClient = (q: Queryable): Queryable => ({ query: (text, params) => q.query(unnamed(text), params) });
  return {
    ...db,
    transactionPooled: true,
    query: (text, params) => db.query(unnamed(text), params),
    tx: (fn) => db.tx((q) => fn(onClient(q))),
  };
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

/**
 * SQLSTATEs after which a connection is not reused although the server answered: its prepared statements no
 * longer fit the schema (0A000 "cached plan must not change result type" after a column changed type;
 * 26000 a prepared statement the session lost). A new connection prepares them again.
 */
const STALE_STATEMENT_STATES = new Set(['0A000', '26000']);

/**
 * Whether a failed statement leaves its connection unfit for reuse: a connection-level failure or a stale prepared
 * statement.
 */
function spoilsConnection(error: unknown): boolean {
  return !(error instanceof pg.DatabaseError) || STALE_STATEMENT_STATES.has(error.code ?? '');
}

/**
 * Gives a new pool connection a lasting 'error' listener the moment it is made (pg-pool's 'connect' event),
 * before the pool hands it to its first caller. pg-pool listens only while a connection is idle, so without it
 * the server's FATAL (57P01 at a fast shutdown) is an 'error' event without a listener, which ends the
 * process, whenever it reaches a connection that is not idle: in the same read as the ReadyForQuery that
 * completes the connection (pg-pool takes its idle listener off and resolves the checkout within that read,
 * and {@link onConnection}'s own listener comes a microtask later), or after a failed connection was handed
 * back and is being ended. The connection is then not queryable: its next statement fails, and
 * {@link onConnection} discards it.
 */
function guardNewConnection(client: pg.PoolClient): void {
  client.on('error', () => undefined);
}

/**
 * Runs `fn` on a connection checked out of `pool`, then hands the connection back: discarded when it failed
 * at the connection level (an 'error' event, or `fn` calling `broken`), reused otherwise. Every connection
 * also carries the lasting listener of {@link guardNewConnection}.
 */
async function onConnection<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient, broken: (error: unknown) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let failure: Error | undefined;
  const broken = (error: unknown): void => {
    failure ??= error instanceof Error ? error : new Error(String(error));
  };
  client.on('error', broken);
  try {
    return await fn(client, broken);
  } finally {
    client.off('error', broken);
    client.release(failure);
  }
}

/** The longest a close waits for the pool's connections to close after asking them to. */
const POOL_END_WAIT_MS = 5_000;

/**
 * How to end `pool` in full: `pg.Pool`'s `end()` resolves once it has asked its connections to end, before their
 * sockets close, so a process that stopped could still hold connections for a moment (and one that the server ended
 * then, a dropped database or a restart, would report an error after the stop). This resolves once every connection
 * of the pool has closed (each one's `remove`), at most {@link POOL_END_WAIT_MS} after the `end()`.
 */
function endedInFull(pool: pg.Pool): () => Promise<void> {
  const open = new Set<pg.PoolClient>();
  pool.on('connect', (client) => open.add(client));
  pool.on('remove', (client) => open.delete(client as pg.PoolClient));
  return async () => {
    await pool.end();
    if (open.size === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, POOL_END_WAIT_MS);
      timer.unref();
      pool.on('remove', () => {
        if (open.size > 0) return;
        clearTimeout(timer);
        resolve();
      });
    });
  };
}

function poolDb(
  engine: Db['engine'],
  pool: pg.Pool,
  listenClient: () => Promise<pg.Client | null>,
  close: () => Promise<void>,
): Db {
  return {
    engine,
    // Unlike `pool.query`, which closes the connection after any error, a statement the server refused (a
    // `DatabaseError`: constraint, bad input…) hands the healthy connection back; only a connection-level
    // failure (socket error, client-side timeout) or a stale prepared statement discards it. On the embedded
    // engine a discarded connection also broke the next statement (its one-connection socket server was still
    // closing the old one).
    query: (text, params) =>
      onConnection(pool, async (client, broken) => {
        try {
          return await client.query(text, params as unknown[]);
        } catch (error) {
          if (spoilsConnection(error)) broken(error);
          throw error;
        }
      }) as never,
    tx: (fn) =>
      onConnection(pool, async (client, broken) => {
        try {
          await client.query('BEGIN');
          const result = await fn(client);
          await client.query('COMMIT');
          return result;
        } catch (error) {
          // A connection that cannot even roll back (the server went away) is destroyed, never pooled again.
          await client.query('ROLLBACK').catch(broken);
          if (spoilsConnection(error) && error instanceof pg.DatabaseError) broken(error);
          throw error;
        }
      }),
    listenClient,
    close,
  };
}
