import type { Queryable } from './db.ts';

/* PING — the cheapest statement a session answers: no parameters, one row. For readiness probes. */
const PING = 'SELECT 1';

/**
 * Resolves when the database answers a statement on `db` (a connection of its pool, or the embedded session).
 * @throws the driver's error when it does not (unreachable, refused, timed out)
 */
export async function databaseAnswers(db: Queryable): Promise<void> {
  await db.query(PING);
}

/*
 * DATABASE_FACTS — the server's version (text and number) and its clock, read in one round trip. No
 * parameters, one row. For `tidings doctor` (version check and clock skew against the host).
 */
const DATABASE_FACTS = `SELECT current_setting('server_version') AS version,
  current_setting('server_version_num')::int AS version_num, clock_timestamp() AS now`;

/** The database's version and clock as {@link databaseFacts} reads them. */
export interface DatabaseFacts {
  /** `server_version`, e.g. `15.8 (Debian 15.8-0+deb12u1)`. */
  readonly version: string;
  /** `server_version_num`, e.g. 150008. */
  readonly versionNum: number;
  /** The database's `clock_timestamp()` when it answered. */
  readonly now: Date;
}

/**
 * Reads the server's version and clock.
 * @throws the driver's error when the database does not answer
 */
export async function databaseFacts(db: Queryable): Promise<DatabaseFacts> {
  const row = (await db.query<{ version: string; version_num: number; now: Date }>(DATABASE_FACTS)).rows[0];
  if (row === undefined) throw new Error('the database answered no row');
  return { version: row.version, versionNum: row.version_num, now: new Date(row.now) };
}
