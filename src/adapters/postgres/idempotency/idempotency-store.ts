import { AppError } from '../../../domain/errors.ts';
import type {
  IdempotencyPruning,
  IdempotencyScope,
  IdempotencyStore,
  StoredAnswer,
} from '../../../ports/idempotency-store.ts';
import { prepared, type Db } from '../db.ts';
import { nowSql } from '../sql.ts';
import { sqlState, SqlState } from '../sqlstate.ts';
import { runTx } from '../tx.ts';

/*
 * CLAIM_KEY — takes the key for this transaction. A concurrent transaction holding the same key makes this
 * statement wait (unique index) until it commits or rolls back, bounded by the transaction's lock_timeout,
 * which the statement sets first ($6, e.g. '5000ms'; it stays for the rest of this short transaction).
 * $1 owner, $2 route, $3 key, $4 fingerprint, $5 ttl ms. Returns one row when the key is ours; none when it
 * already exists.
 */
const CLAIM_KEY = prepared(
  'tidings_claim_key',
  `
WITH wait AS (SELECT set_config('lock_timeout', $6, true) AS lock_timeout)
INSERT INTO idempotency_keys (owner, route, key, fingerprint, expires_at)
SELECT $1, $2, $3, $4, clock_timestamp() + $5 * interval '1 millisecond' FROM wait
ON CONFLICT (owner, route, key) DO NOTHING
RETURNING 1`,
);

const READ_KEY = prepared(
  'tidings_read_key',
  `
SELECT fingerprint, response_status, response_body, expires_at < clock_timestamp() AS expired
FROM idempotency_keys WHERE owner = $1 AND route = $2 AND key = $3`,
);

const STORE_ANSWER = prepared(
  'tidings_store_answer',
  `UPDATE idempotency_keys SET response_status = $4, response_body = $5 WHERE owner = $1 AND route = $2 AND key = $3`,
);
const DROP_EXPIRED =
  'DELETE FROM idempotency_keys WHERE owner = $1 AND route = $2 AND key = $3 AND expires_at < clock_timestamp()';

/**
 * Reads of an existing key before giving up as `idempotency_key_in_flight` (an expired key re-claimed by a racing
 * request takes two).
 */
const KEY_READ_ROUNDS = 3;

/**
 * The PostgreSQL {@link IdempotencyStore} (docs/design.md#publishing): insert-first with ON CONFLICT, so twenty racing
 * duplicates make one row and one piece of work; the answer commits with the work.
 */
export function createPgIdempotencyStore(db: Db): IdempotencyStore {
  return {
    async run(scope: IdempotencyScope, work) {
      const keyParams = [scope.owner, scope.route, scope.key];
      return runTx(db, async (tx, client) => {
        const claimParams = [
          ...keyParams,
          scope.fingerprint,
          scope.ttlMs,
          `${Math.max(1, Math.round(scope.waitMs))}ms`,
        ];
        let claimed: boolean;
        try {
          claimed = (await client.query(CLAIM_KEY, claimParams)).rowCount === 1;
          // The key exists. Read it: an answer is replayed; an expired key is dropped and claimed again — and
          // when a concurrent request re-claimed it first (the claim waited for it to commit), its answer is
          // read on the next round instead of calling it in flight.
          for (let round = 0; !claimed && round < KEY_READ_ROUNDS; round++) {
            const existing = await client.query<{
              fingerprint: string;
              response_status: number | null;
              response_body: unknown;
              expired: boolean;
            }>(READ_KEY, keyParams);
            const row = existing.rows[0];
            if (row === undefined || row.expired) {
              if (row !== undefined) await client.query(DROP_EXPIRED, keyParams);
              claimed = (await client.query(CLAIM_KEY, claimParams)).rowCount === 1;
              continue;
            }
            if (row.fingerprint !== scope.fingerprint) {
              throw new AppError('idempotency_key_mismatch', [
                {
                  loc: ['header', 'idempotency-key'],
                  msg: 'This Idempotency-Key was already used with a different request',
                  type: 'value_error.idempotency_key_mismatch',
                },
              ]);
            }
            if (row.response_status === null)
              throw new AppError('idempotency_key_in_flight', 'A request with this Idempotency-Key is still in flight');
            return { status: row.response_status, body: row.response_body, replayed: true };
          }
        } catch (error) {
          if (sqlState(error) === SqlState.lockNotAvailable) {
            const waited = `TIDINGS_IDEMPOTENCY_WAIT, ${Math.round(scope.waitMs)} ms`;
            throw new AppError(
              'idempotency_key_in_flight',
              `A request with this Idempotency-Key is still in flight after the wait (${waited}); retry shortly`,
              { cause: error, headers: { 'retry-after': '1' } },
            );
          }
          throw error;
        }
        if (!claimed)
          throw new AppError(
            'idempotency_key_in_flight',
            'A request with this Idempotency-Key is still in flight; retry shortly',
            { headers: { 'retry-after': '1' } },
          );
        const answer: StoredAnswer = await work(tx);
        await client.query(STORE_ANSWER, [...keyParams, answer.status, JSON.stringify(answer.body)]);
        return { ...answer, replayed: false };
      });
    },
  };
}

/* PRUNE_IDEMPOTENCY — deletes up to $1 expired idempotency keys (index idempotency_keys_expiry). $2 now. */
const PRUNE_IDEMPOTENCY = `
WITH picked AS (
  SELECT owner, route, key FROM idempotency_keys WHERE expires_at < ${nowSql(2)}
  ORDER BY expires_at LIMIT $1
  FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM idempotency_keys k USING picked p WHERE k.owner = p.owner AND k.route = p.route AND k.key = p.key
    RETURNING 1
)
SELECT count(*)::int AS n FROM gone`;

/** The PostgreSQL {@link IdempotencyPruning}: batches of {@link PRUNE_IDEMPOTENCY}, each its own statement. */
export function createPgIdempotencyPruning(db: Db): IdempotencyPruning {
  return {
    async pruneExpired(input) {
      return (await db.query<{ n: number }>(PRUNE_IDEMPOTENCY, [input.batch, input.now])).rows[0]!.n;
    },
  };
}
