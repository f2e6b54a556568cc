import type { RetentionStore } from '../../../ports/retention-store.ts';
import { nowSql, on } from '../sql.ts';
import type { Db } from '../db.ts';

/*
 * RETENTION_CLASSES — the distinct retention classes of held payloads (coalesce(retention_hours, -1); -1 = the
 * deployment default), by a loose index scan of messages_payload_held: one index probe per class.
 */
const RETENTION_CLASSES = `
WITH RECURSIVE c AS (
  (SELECT coalesce(retention_hours, -1) AS h FROM messages WHERE payload_expunged_at IS NULL ORDER BY 1 LIMIT 1)
  UNION ALL
  SELECT (SELECT coalesce(m.retention_hours, -1) FROM messages m
          WHERE m.payload_expunged_at IS NULL AND coalesce(m.retention_hours, -1) > c.h ORDER BY 1 LIMIT 1)
  FROM c WHERE c.h IS NOT NULL
)
SELECT h FROM c WHERE h IS NOT NULL`;

/*
 * EXPIRE_PAYLOADS — one batch of one retention class, in one statement. Reads up to $5 held payloads of the
 * class created at least its retention ago (index messages_payload_held, after the cursor $3/$4), then
 * share-locks their deliveries with SKIP LOCKED (never waiting for a dispatcher; a delivery it could not lock
 * makes its message ineligible this time, and a replay that comes later finds the payload expunged), and
 * expunges the payloads of messages with no pending or leased delivery whose last final transition —
 * including that of deliveries already pruned (pruned_settled_at) — is at least the retention ago. The
 * stored response bodies of their attempts go too. $1 class (-1 = default), $2 retention hours, $3 cursor
 * created_at in Unix microseconds, $4 cursor id, $5 limit, $6 now. Returns the rows read, expunged, and the new cursor
 * (its created_at in Unix microseconds as text: a JS Date keeps milliseconds, and a cursor cut to them would read the
 * rows of its millisecond again, for ever when a batch of them share one instant).
 */
const EXPIRE_PAYLOADS = `
WITH candidates AS (
  SELECT m.id, m.created_at FROM messages m
  WHERE coalesce(m.retention_hours, -1) = $1 AND m.payload_expunged_at IS NULL
    AND m.created_at <= ${nowSql(6)} - $2 * interval '1 hour'
    AND (m.created_at, m.id) > ('epoch'::timestamptz + $3::bigint * interval '1 microsecond', $4::text)
  ORDER BY coalesce(m.retention_hours, -1), m.created_at, m.id
  LIMIT $5
), locked AS (
  SELECT d.message_id, d.state, d.updated_at FROM deliveries d
  WHERE d.message_id IN (SELECT id FROM candidates)
  FOR SHARE OF d SKIP LOCKED
), seen AS (
  SELECT message_id, count(*) AS n, bool_or(state IN ('pending', 'leased')) AS live, max(updated_at) AS last FROM locked
    GROUP BY 1
), total AS (
  SELECT d.message_id, count(*) AS n FROM deliveries d WHERE d.message_id IN (SELECT id FROM candidates) GROUP BY 1
), eligible AS (
  SELECT c.id FROM candidates c JOIN messages m ON m.id = c.id
  LEFT JOIN seen s ON s.message_id = c.id LEFT JOIN total t ON t.message_id = c.id
  WHERE coalesce(s.n, 0) = coalesce(t.n, 0) AND NOT coalesce(s.live, false)
    AND greatest(m.created_at, m.pruned_settled_at, s.last) <= ${nowSql(6)} - $2 * interval '1 hour'
), expunged AS (
  UPDATE messages m SET payload = NULL, payload_key_id = NULL, payload_expunged_at = ${nowSql(6)}
  FROM eligible e WHERE m.id = e.id AND m.payload_expunged_at IS NULL
  RETURNING m.id
), bodies AS (
  UPDATE attempts a SET response_body = NULL FROM expunged e WHERE a.message_id = e.id AND a.response_body IS NOT NULL
)
SELECT (SELECT count(*)::int FROM candidates) AS read, (SELECT count(*)::int FROM expunged) AS expunged,
       (extract(epoch FROM last.created_at) * 1000000)::bigint::text AS cursor_us, last.id AS cursor_id
FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT created_at, id FROM candidates ORDER BY created_at DESC, id DESC
  LIMIT 1) last ON true`;

/*
 * PRUNE_SUCCEEDED — deletes up to $2 deliveries that succeeded at least $1 ms ago (index
 * deliveries_succeeded, oldest first; rows locked by anyone are skipped), with their attempts and timeline
 * rows in the default and legacy partitions (the statement trigger of migration 1764000009500, as changed by
 * 1764000015000; rows in dated partitions go when retention drops the partition), and keeps on each message the latest
 * instant one of them succeeded, so that payload retention still counts from it. $3 now. Returns the count.
 */
const PRUNE_SUCCEEDED = `
WITH picked AS (
  SELECT id FROM deliveries
  WHERE state = 'succeeded' AND updated_at <= ${nowSql(3)} - $1 * interval '1 millisecond'
  ORDER BY updated_at, id LIMIT $2
  FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM deliveries d USING picked p WHERE d.id = p.id AND d.state = 'succeeded'
  RETURNING d.message_id, d.updated_at
), marked AS (
  UPDATE messages m SET pruned_settled_at = greatest(m.pruned_settled_at, g.last)
  FROM (SELECT message_id, max(updated_at) AS last FROM gone GROUP BY 1) g WHERE m.id = g.message_id
)
SELECT count(*)::int AS n FROM gone`;

/*
 * ERASE_BATCH — one batch of an erasure task: reads up to $3 messages of application $1 after cursor $2 up
 * to the newest message when the task began ($4), in id order (index messages_app_created), and expunges
 * the held payloads — and attempt response bodies — of those with tag $5 (if given) and an event id
 * starting with $6 (if given). $7 now. Returns the rows read, the payloads expunged and the last id read.
 * Runs in the task runner's transaction, which holds the erasure's task row.
 */
const ERASE_BATCH = `
WITH scanned AS (
  SELECT id, tags, event_id, payload_expunged_at FROM messages
  WHERE app_id = $1 AND id > $2 AND id <= $4
  ORDER BY id LIMIT $3
), hits AS (
  SELECT id FROM scanned
  WHERE payload_expunged_at IS NULL
    AND ($5::text IS NULL OR $5 = ANY (tags))
    AND ($6::text IS NULL OR starts_with(event_id, $6))
), expunged AS (
  UPDATE messages m SET payload = NULL, payload_key_id = NULL, payload_expunged_at = ${nowSql(7)}
  FROM hits h WHERE m.id = h.id RETURNING m.id
), bodies AS (
  UPDATE attempts a SET response_body = NULL FROM expunged e WHERE a.message_id = e.id AND a.response_body IS NOT NULL
)
SELECT (SELECT count(*)::int FROM scanned) AS read, (SELECT count(*)::int FROM expunged) AS expunged,
  (SELECT max(id) FROM scanned) AS last_id`;

/** The PostgreSQL {@link RetentionStore}. */
export function createPgRetentionStore(db: Db): RetentionStore {
  return {
    async payloadRetentionClasses() {
      const rows = (await db.query<{ h: number }>(RETENTION_CLASSES)).rows;
      return rows.map((r) => (r.h === -1 ? null : r.h));
    },

    async expirePayloads(input) {
      const hours = input.retentionHours ?? input.defaultHours;
      const row = (
        await db.query<{ read: number; expunged: number; cursor_us: string | null; cursor_id: string | null }>(
          EXPIRE_PAYLOADS,
          [
            input.retentionHours ?? -1,
            hours,
            input.cursor?.createdAtUs ?? '0',
            input.cursor?.id ?? '',
            input.batch,
            input.now,
          ],
        )
      ).rows[0]!;
      return {
        read: row.read,
        expunged: row.expunged,
        cursor:
          row.cursor_us === null || row.cursor_id === null
            ? input.cursor
            : { createdAtUs: row.cursor_us, id: row.cursor_id },
      };
    },

    async pruneSucceeded(input) {
      // The pruned deliveries' rows in dated history partitions go with their partition (migration 1764000015000).
      return db.tx(async (q) => {
        await q.query(`SELECT set_config('tidings.history_by_partition', 'on', true)`);
        return (await q.query<{ n: number }>(PRUNE_SUCCEEDED, [input.ageMs, input.batch, input.now])).rows[0]!.n;
      });
    },

    async newestMessageId(tx, appId) {
      return (
        await on(db, tx).query<{ id: string | null }>('SELECT max(id) AS id FROM messages WHERE app_id = $1', [appId])
      ).rows[0]!.id;
    },

    async eraseBatch(tx, input) {
      const row = (
        await on(db, tx).query<{ read: number; expunged: number; last_id: string | null }>(ERASE_BATCH, [
          input.appId,
          input.afterId,
          input.batch,
          input.untilId,
          input.filter.tag,
          input.filter.eventIdPrefix,
          input.now,
        ])
      ).rows[0]!;
      return { read: row.read, expunged: row.expunged, lastId: row.last_id };
    },
  };
}
