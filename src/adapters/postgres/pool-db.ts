import pg from 'pg';
import type { Db, Prepared, Queryable } from './db-types.ts';

// A `pg.Pool` as a {@link Db}: connections checked out per statement or transaction, discarded only when they
// failed at the connection level; the close that waits for every connection; the unnamed statements of a
// transaction pooler. db.ts opens the pools (server or embedded) and wraps them here.

/** `text` as an unnamed statement: the text of a {@link Prepared}, without its name. */
function unnamed(text: string | Prepared): string {
  return typeof text === 'string' ? text : text.text;
}

/**
 * `db` for a transaction pooler: every statement, in a transaction or not, is sent without a name (the driver then
 * uses the unnamed statement, parsed and planned for that execution only), so no server session is asked for a
 * statement that another session prepared. The values stay parameters.
 */
export function unnamedStatements(db: Db): Db {
  const onClient = (q: Queryable): Queryable => ({ query: (text, params) => q.query(unnamed(text), params) });
  return {
    ...db,
    transactionPooled: true,
    query: (text, params) => db.query(unnamed(text), params),
    tx: (fn) => db.tx((q) => fn(onClient(q))),
  };
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
export function guardNewConnection(client: pg.PoolClient): void {
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
export function endedInFull(pool: pg.Pool): () => Promise<void> {
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

export function poolDb(
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
