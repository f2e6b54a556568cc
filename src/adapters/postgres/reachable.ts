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
