import pg from 'pg';

// The handle every PostgreSQL adapter uses, and the statement it runs; opened by db.ts, which re-exports them.

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
   * True when statements reach PostgreSQL through a transaction pooler (`PoolerMode` `transaction` (db.ts)): no
   * session state lasts beyond a transaction, so nothing that needs a session (a session advisory lock, LISTEN, a
   * prepared statement kept by name) may run on it. Absent = false.
   */
  readonly transactionPooled?: boolean;
  /** Runs `fn` in one transaction (READ COMMITTED); commits on return, rolls back on throw. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * A dedicated connection for LISTEN, or null on the embedded engine (single session: wake-ups are in-process) and
   * behind a transaction pooler without `OpenDbOptions.directUrl` (db.ts) (dispatchers then poll).
   */
  listenClient(): Promise<pg.Client | null>;
  close(): Promise<void>;
}
