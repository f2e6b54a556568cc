import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** Something that runs one SQL statement: the pool, or the client of an open transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: readonly unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * The database handle every PostgreSQL adapter uses. The same `pg` driver and the same SQL run on a
 * PostgreSQL server and on the embedded engine (DESIGN §8, §11).
 */
export interface Db extends Queryable {
  readonly engine: 'server' | 'embedded';
  /** Runs `fn` in one transaction (READ COMMITTED); commits on return, rolls back on throw. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** A dedicated connection for LISTEN, or null on the embedded engine (single session: wake-ups are in-process). */
  listenClient(): Promise<pg.Client | null>;
  close(): Promise<void>;
}

// int8 (bigint) stays a string so ids and fencing tokens never lose precision.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

/** Options of {@link openDb}. */
export interface OpenDbOptions {
  /** PostgreSQL server URL; undefined = embedded engine in `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** Folder of the embedded database (created if missing). */
  readonly dataDir: string;
  /** Pool size for a server; the embedded engine always uses one connection. */
  readonly poolSize: number;
  /** Called with connection-level errors of idle clients (logged, never thrown). */
  readonly onError?: (error: Error) => void;
}

/**
 * Opens the database: a `pg.Pool` on a server, or PGlite persisted in `dataDir` and served on a unix
 * socket inside it to a one-connection `pg.Pool` (the embedded engine is a single session).
 */
export async function openDb(options: OpenDbOptions): Promise<Db> {
  if (options.databaseUrl !== undefined) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize, connectionTimeoutMillis: 5_000 });
    pool.on('error', (error) => options.onError?.(error));
    return poolDb('server', pool, async () => {
      const client = new pg.Client({ connectionString: options.databaseUrl, connectionTimeoutMillis: 5_000 });
      await client.connect();
      return client;
    }, async () => pool.end());
  }
  const dir = resolve(options.dataDir);
  await mkdir(dir, { recursive: true });
  const lite = await PGlite.create(join(dir, 'pgdata'));
  const socketDir = await socketFolder(dir);
  const server = new PGLiteSocketServer({ db: lite, path: join(socketDir, '.s.PGSQL.5432'), maxConnections: 1 });
  await server.start();
  const pool = new pg.Pool({ host: socketDir, port: 5432, user: 'postgres', database: 'postgres', max: 1 });
  pool.on('error', (error) => options.onError?.(error));
  return poolDb('embedded', pool, async () => null, async () => {
    await pool.end();
    await server.stop();
    await lite.close();
  });
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

function poolDb(engine: Db['engine'], pool: pg.Pool, listenClient: () => Promise<pg.Client | null>, close: () => Promise<void>): Db {
  return {
    engine,
    query: (text, params) => pool.query(text, params as unknown[]),
    async tx(fn) {
      const client = await pool.connect();
      // A checked-out client has no error listener of the pool's: a connection ended by the server between
      // two statements (e.g. 57P01 at a fast shutdown) would otherwise be an unhandled 'error' event that
      // kills the process. Keep the error; the next statement fails, and the client is discarded.
      let broken: Error | undefined;
      const onError = (error: Error): void => {
        broken = error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    listenClient,
    close,
  };
}
