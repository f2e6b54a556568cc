import type { Cipher } from '../../../ports/cipher.ts';
import type { MessageContentStore } from '../../../ports/message-content-store.ts';
import { nowSql } from '../sql.ts';
import type { Db } from '../db.ts';
import { onCommit, txClient } from '../tx.ts';

/*
 * EXPUNGE_CONTENT — $1 app id, $2 message id, $3 now. Drops the payload bytes; the first expunge time is
 * kept. Returns one row when the message exists.
 */
const EXPUNGE_CONTENT = `
UPDATE messages SET payload = NULL, payload_key_id = NULL,
  payload_expunged_at = coalesce(payload_expunged_at, ${nowSql(3)})
WHERE app_id = $1 AND id = $2
RETURNING id`;

/*
 * INSERT_EXAMPLE — one message and its single delivery to one endpoint, with the delivery's first timeline
 * row. $1 id, $2 app id, $3 event type, $4 payload (ciphertext), $5 payload key id, $6 endpoint id, $7 now.
 * A paused endpoint's delivery waits at 'infinity' like any other (docs/design.md#delivery-lifecycle). Returns
 * created_at and whether the delivery is due.
 */
const INSERT_EXAMPLE = `
WITH msg AS (
  INSERT INTO messages (id, app_id, event_type, payload, payload_key_id, created_at)
  VALUES ($1, $2, $3, $4, $5, ${nowSql(7)})
  RETURNING id, created_at
), made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, updated_at, retry_policy)
  SELECT $2, msg.id, e.id, 'pending',
         CASE WHEN e.status = 'paused' THEN 'infinity'::timestamptz ELSE ${nowSql(7)} END, ${nowSql(7)}, ${nowSql(7)},
         -- The retry policy of its creation, as a published message's (migration 1764000012000).
         tidings_retry_policy(e.retry_policy, (SELECT t.retry_policy FROM event_types t WHERE t.name = $3))
  FROM msg, endpoints e WHERE e.id = $6 AND e.app_id = $2
  RETURNING id, next_attempt_at
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, reason, at) SELECT id, 'pending', 'example_sent', ${nowSql(7)}
    FROM made
)
SELECT msg.created_at, (SELECT count(*)::int FROM made WHERE next_attempt_at <> 'infinity'::timestamptz) AS due
  FROM msg`;

/**
 * The PostgreSQL {@link MessageContentStore}. Payloads are encrypted with `cipher` (context = message id).
 * `wake` wakes in-process dispatchers after a commit that made a due delivery; NOTIFY on the server.
 */
export function createPgMessageContentStore(db: Db, cipher: Cipher, wake: () => void): MessageContentStore {
  return {
    async expungeContent(tx, appId, messageId, now) {
      const res = await txClient(tx).query(EXPUNGE_CONTENT, [appId, messageId, now]);
      return (res.rowCount ?? 0) > 0;
    },

    async insertExample(tx, message, endpointId, now) {
      const client = txClient(tx);
      const sealed = cipher.encrypt(message.payload, message.id);
      const res = await client.query<{ created_at: Date; due: number }>(INSERT_EXAMPLE, [
        message.id,
        message.appId,
        message.eventType,
        sealed.data,
        sealed.keyId,
        endpointId,
        now,
      ]);
      const row = res.rows[0]!;
      if (row.due > 0) onCommit(tx, wake);
      return {
        id: message.id,
        appId: message.appId,
        eventId: null,
        eventType: message.eventType,
        channels: null,
        tags: null,
        payload: message.payload,
        contentType: null,
        deliverAt: null,
        createdAt: row.created_at,
      };
    },
  };
}
