import { AppError } from '../../domain/errors.ts';
import type { Cipher } from '../../ports/cipher.ts';
import type { MessageRecord, MessageStore, NewMessage } from '../../ports/message-store.ts';
import { prepared } from './db.ts';
import { constraintOf, sqlState, SqlState } from './sqlstate.ts';
import { onCommit, txClient } from './tx.ts';

/** Channel of the NOTIFY that wakes idle dispatchers after a commit that made work due (DESIGN §5). */
export const WAKE_CHANNEL = 'tidings_due';

/*
 * PUBLISH — stores one message and its fan-out in one statement (one round trip): the message row, one
 * delivery per subscribed endpoint of its application and the first timeline row of each. No NOTIFY inside:
 * a notifying commit takes a cluster-wide lock that serializes every such commit (halving the publish rate
 * measured by `npm run bench`); the caller's `wake` sends one coalesced NOTIFY after commit instead. Subscribed: not deleted; no event-type filter or
 * the type is in it; no channels or at least one shared channel. Disabled endpoints get `skipped`
 * deliveries (kept for replay-missing); paused ones get pending deliveries due at 'infinity' until resumed.
 * $1 id, $2 app id, $3 event id, $4 event type, $5 channels, $6 tags, $7 payload (ciphertext),
 * $8 payload key id, $9 retention hours, $10 now (NULL = database clock).
 * Returns created_at, the number of deliveries and how many are due now.
 */
const PUBLISH = prepared('tidings_publish', `
WITH t AS (
  SELECT coalesce($10::timestamptz, clock_timestamp()) AS now
), msg AS (
  INSERT INTO messages (id, app_id, event_id, event_type, channels, tags, payload, payload_key_id, retention_hours, created_at)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, t.now FROM t
  RETURNING id, app_id, event_type, channels, created_at
), made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, updated_at)
  SELECT msg.app_id, msg.id, e.id,
         CASE WHEN e.status = 'disabled' THEN 'skipped' ELSE 'pending' END,
         CASE WHEN e.status = 'paused' THEN 'infinity'::timestamptz ELSE t.now END,
         t.now, t.now
  FROM msg CROSS JOIN t JOIN endpoints e ON e.app_id = msg.app_id
  WHERE e.deleted_at IS NULL
    AND (e.filter_types IS NULL OR cardinality(e.filter_types) = 0 OR msg.event_type = ANY (e.filter_types))
    AND (e.channels IS NULL OR cardinality(e.channels) = 0 OR e.channels && coalesce(msg.channels, '{}'))
  RETURNING id, state, next_attempt_at
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, reason, at)
  SELECT id, state, CASE WHEN state = 'skipped' THEN 'endpoint_disabled' ELSE 'published' END, t.now FROM made CROSS JOIN t
), counts AS (
  SELECT count(*)::int AS total, count(*) FILTER (WHERE state = 'pending' AND next_attempt_at <> 'infinity')::int AS due FROM made
)
SELECT msg.created_at, counts.total, counts.due FROM msg CROSS JOIN counts`);

/**
 * The PostgreSQL {@link MessageStore}. Payloads are encrypted with `cipher` (context = message id).
 * `wake` is called after a commit that made due deliveries: it wakes in-process dispatchers and, on a server,
 * sends the NOTIFY on {@link WAKE_CHANNEL} that wakes the others.
 */
export function createPgMessageStore(cipher: Cipher, wake: () => void): MessageStore {
  return {
    async insert(tx, message: NewMessage, now) {
      const client = txClient(tx);
      const sealed = cipher.encrypt(message.payload, message.id);
      let row: { created_at: Date; total: number; due: number };
      try {
        const res = await client.query<{ created_at: Date; total: number; due: number }>(PUBLISH, [
          message.id, message.appId, message.eventId, message.eventType, message.channels, message.tags,
          sealed.data, sealed.keyId, message.retentionHours, now,
        ]);
        row = res.rows[0]!;
      } catch (error) {
        if (sqlState(error) === SqlState.uniqueViolation && constraintOf(error) === 'messages_app_event_id') {
          throw new AppError('conflict', `A message with eventId "${message.eventId}" already exists`, { cause: error });
        }
        throw error;
      }
      const createdAt = row.created_at;
      const total = row.total;
      if (row.due > 0) onCommit(tx, wake);
      const record: MessageRecord = {
        id: message.id, appId: message.appId, eventId: message.eventId, eventType: message.eventType,
        channels: message.channels, tags: message.tags, payload: message.payload, createdAt,
      };
      return { message: record, deliveries: total };
    },
  };
}
