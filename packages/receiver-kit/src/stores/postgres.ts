import { DEFAULT_TTL_MS, positiveMs, type ReceiptStore } from '../store.ts';

/** What the store needs of a `pg` client (a `pg.PoolClient` fits). */
export interface PgClient {
  query(text: string, values?: unknown[]): Promise<{ readonly rowCount: number | null; readonly rows: unknown[] }>;
  release(error?: Error | boolean): void;
}

/** What the store needs of a `pg` pool (a `pg.Pool` fits). */
export interface PgPool<C extends PgClient> {
  connect(): Promise<C>;
}

/** Default table of the receipts. */
export const DEFAULT_TABLE = 'tidings_receipts';

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions<C extends PgClient> {
  /** The pool the receipts and the handler's transaction use. */
  readonly pool: PgPool<C>;
  /** Table of the receipts, optionally schema-qualified (default `tidings_receipts`); see {@link receiptsTableSql}. */
  readonly table?: string;
  /** How long a handled id is remembered, ms (default 7 days); expired rows are claimable again and pruned. */
  readonly ttlMs?: number;
  /** `Retry-After` of a duplicate that arrives while the first is still being handled, seconds (default 5). */
  readonly inProgressRetryAfterSeconds?: number;
}

/** The PostgreSQL store, plus its upkeep. */
export interface PostgresStore<C extends PgClient> extends ReceiptStore<C> {
  /** Deletes up to `limit` expired receipts (default 1,000); returns how many. Run it now and then. */
  prune(limit?: number): Promise<number>;
}

/**
 * The receipts table and its index, as SQL (run it with your migrations, or call {@link createReceiptsTable}).
 * A row means: this `webhook_id` was handled, and the handler's transaction committed.
 * @throws Error when `table` is not a plain (optionally schema-qualified) identifier
 */
export function receiptsTableSql(table: string = DEFAULT_TABLE): string {
  const name = quoteTable(table);
  const index = `"${table.split('.').at(-1)}_expires_at_idx"`;
  return `CREATE TABLE IF NOT EXISTS ${name} (
  webhook_id text PRIMARY KEY,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${name} (expires_at);
`;
}

/** Creates the receipts table and its index when they are missing (idempotent). */
export async function createReceiptsTable(
  pool: { query(text: string): Promise<unknown> },
  table: string = DEFAULT_TABLE,
): Promise<void> {
  await pool.query(receiptsTableSql(table));
}

/**
 * A {@link ReceiptStore} on PostgreSQL where the claim and the handler's side effect commit in ONE transaction:
 * the handler gets the transaction's client, and what it writes through it commits together with the receipt
 * row, or neither does. That is what makes the handler run exactly once per `webhook-id`: a crash or an error
 * before the commit leaves no receipt (the retry runs it), and a lost answer after the commit leaves one (the
 * retry answers `duplicate`). Side effects outside this database (an e-mail, another API) are not covered:
 * they happen at least once.
 *
 * In the transaction: take a transaction-scoped advisory lock on the id without waiting (a second request for an
 * id being handled gets `in_progress` at once, holding no connection), then insert the receipt (an unexpired
 * receipt means `done`), run the handler, commit. Works behind a transaction-mode pooler (no session state).
 *
 * The handler's client is typed {@link PgClient}; name your client type to get all of it:
 * `postgresStore<pg.PoolClient>({ pool })` (TypeScript cannot infer it from `pg.Pool`'s overloaded `connect`).
 */
export function postgresStore<C extends PgClient>(options: PostgresStoreOptions<C>): PostgresStore<C> {
  const table = quoteTable(options.table ?? DEFAULT_TABLE);
  const lockNamespace = `${options.table ?? DEFAULT_TABLE}:`;
  const ttlMs = positiveMs('ttlMs', options.ttlMs ?? DEFAULT_TTL_MS);
  const retryAfterSeconds = options.inProgressRetryAfterSeconds ?? 5;
  // $1 = lock key text (table:webhook-id). One row: whether this transaction now holds the id's lock.
  const LOCK = 'SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked';
  // $1 = webhook-id, $2 = ttl in ms. Returns one row when claimed (new, or its old receipt had expired), none
  // when an unexpired receipt exists. Uses the primary key.
  const CLAIM = `INSERT INTO ${table} AS r (webhook_id, claimed_at, expires_at)
VALUES ($1, now(), now() + $2 * interval '1 millisecond')
ON CONFLICT (webhook_id) DO UPDATE SET claimed_at = excluded.claimed_at, expires_at = excluded.expires_at
  WHERE r.expires_at <= now()
RETURNING webhook_id`;
  // $1 = most rows. Deletes expired receipts, oldest first (index on expires_at).
  const PRUNE = `DELETE FROM ${table} WHERE webhook_id IN (
  SELECT webhook_id FROM ${table} WHERE expires_at <= now() ORDER BY expires_at LIMIT $1)`;
  return {
    async once(id, work) {
      const client = await options.pool.connect();
      let broken: Error | undefined;
      let open = false;
      try {
        await client.query('BEGIN');
        open = true;
        const { rows } = await client.query(LOCK, [lockNamespace + id]);
        if ((rows[0] as { locked?: boolean } | undefined)?.locked !== true) {
          await rollback(client);
          open = false;
          return { status: 'in_progress', retryAfterSeconds };
        }
        const claimed = await client.query(CLAIM, [id, ttlMs]);
        if (claimed.rowCount === 0) {
          await rollback(client);
          open = false;
          return { status: 'done' };
        }
        const value = await work(client);
        await client.query('COMMIT');
        open = false;
        return { status: 'ran', value };
      } catch (error) {
        if (open) {
          try {
            await rollback(client);
          } catch (rollbackError) {
            broken = rollbackError as Error;
          }
        }
        throw error;
      } finally {
        client.release(broken ?? false);
      }
    },
    async prune(limit = 1000) {
      const client = await options.pool.connect();
      try {
        return (await client.query(PRUNE, [limit])).rowCount ?? 0;
      } finally {
        client.release();
      }
    },
  };
}

async function rollback(client: PgClient): Promise<void> {
  await client.query('ROLLBACK');
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `name` or `schema.name` as quoted identifiers. @throws Error for anything else (never put into SQL). */
function quoteTable(table: string): string {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new Error(
      `table must be a name or schema.name of letters, digits and underscores, got ${JSON.stringify(table)}`,
    );
  }
  return parts.map((part) => `"${part}"`).join('.');
}
