import pg from 'pg';

/* BACKEND_PID — the server session that runs this statement. No parameters; one row. */
const BACKEND_PID = 'SELECT pg_backend_pid() AS pid';

/**
 * Longest wait for one statement of the probe, ms: a session pooler with fewer free sessions than its clients makes
 * it wait.
 */
const PROBE_STATEMENT_MS = 5_000;

/**
 * Whether `url` hands a client's statements to different server sessions between transactions, as a transaction
 * pooler does (PgBouncer `pool_mode = transaction`, RDS Proxy once a connection is not pinned, Supavisor's and
 * Neon's transaction ports). Three connections of our own: A asks for its session and stays idle; then B and C each
 * open a transaction and ask for theirs; then A asks again. On a direct connection or a session pooler A keeps one
 * session for as long as it is connected: nobody else gets it, and A's answer stays the same. A transaction pooler
 * gave A's session back after its statement, and PgBouncer lends the session it got back last first (once it has
 * been reset, when it resets after every transaction), so B or C gets it; a pooler that lends sessions in another
 * order shows it when A's second statement runs elsewhere. Any of these signs is proof; seeing none is not, so this
 * finds a misconfiguration, it does not certify a URL. A statement that waits longer than {@link PROBE_STATEMENT_MS}
 * (a pooler short of sessions) ends the probe with no finding.
 * @throws the driver's error when `url` cannot be reached
 */
export async function sessionsMoveBetweenTransactions(url: string): Promise<boolean> {
  const options = { connectionString: url, connectionTimeoutMillis: 5_000, query_timeout: PROBE_STATEMENT_MS };
  const clients = [0, 1, 2].map(() => new pg.Client(options));
  const [a, b, c] = clients as [pg.Client, pg.Client, pg.Client];
  const pid = async (client: pg.Client): Promise<number> =>
    (await client.query<{ pid: number }>(BACKEND_PID)).rows[0]?.pid ?? -1;
  for (const client of clients) client.on('error', () => undefined);
  try {
    for (const client of clients) await client.connect();
    const first = await pid(a);
    for (const other of [b, c]) {
      await other.query('BEGIN');
      if ((await pid(other)) === first) return true;
    }
    return (await pid(a)) !== first;
  } catch (error) {
    if (error instanceof Error && /timeout/i.test(error.message)) return false;
    throw error;
  } finally {
    for (const client of clients) await client.end().catch(() => undefined);
  }
}

/**
 * Thrown at start-up when a URL's pooling contradicts TIDINGS_DATABASE_POOLER
 * (docs/guides/poolers-and-replicas.md).
 */
export class PoolerMismatchError extends Error {
  readonly code = 'database_pooler_mismatch';
}
