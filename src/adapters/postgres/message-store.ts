import { AppError } from '../../domain/errors.ts';
import type { Cipher } from '../../ports/cipher.ts';
import type { MessageRecord, MessageStore, NewMessage } from '../../ports/message-store.ts';
import type { Db } from './db.ts';
import { constraintOf, sqlState, SqlState } from './sqlstate.ts';
import { onCommit, txClient } from './tx.ts';

/** Channel of the NOTIFY that wakes idle dispatchers at commit (DESIGN §5). */
export const WAKE_CHANNEL = 'tidings_due';

/*
 * INSERT_MESSAGE — stores one message. $1 id, $2 app id, $3 event id, $4 event type, $5 channels,
 * $6 tags, $7 payload (ciphertext), $8 payload key id, $9 retention hours, $10 now (NULL = database clock).
 * Returns the row's created_at.
 */
const INSERT_MESSAGE = `
INSERT INTO messages (id, app_id, event_id, event_type, channels, tags, payload, payload_key_id, retention_hours, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, coalesce($10::timestamptz, clock_timestamp()))
RETURNING created_at`;

/*
 * FAN_OUT — one delivery per subscribed endpoint of the message's application, plus its first timeline
 * row, in one statement. Subscribed: not deleted; no event-type filter or the type is in it; no channels
 * or at least one shared channel. Disabled endpoints get `skipped` deliveries (kept for replay-missing);
 * paused ones get pending deliveries due at 'infinity' until resumed. $1 message id, $2 app id,
 * $3 event type, $4 message channels, $5 now. Returns the number of deliveries due now.
 */
const FAN_OUT = `
WITH made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, updated_at)
  SELECT $2, $1, e.id,
         CASE WHEN e.status = 'disabled' THEN 'skipped' ELSE 'pending' END,
         CASE WHEN e.status = 'paused' THEN 'infinity'::timestamptz ELSE coalesce($5::timestamptz, clock_timestamp()) END,
         coalesce($5::timestamptz, clock_timestamp()), coalesce($5::timestamptz, clock_timestamp())
  FROM endpoints e
  WHERE e.app_id = $2 AND e.deleted_at IS NULL
    AND (e.filter_types IS NULL OR cardinality(e.filter_types) = 0 OR $3 = ANY (e.filter_types))
    AND (e.channels IS NULL OR cardinality(e.channels) = 0 OR e.channels && coalesce($4::text[], '{}'))
  RETURNING id, state, next_attempt_at
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, reason, at)
  SELECT id, state, CASE WHEN state = 'skipped' THEN 'endpoint_disabled' ELSE 'published' END, coalesce($5::timestamptz, clock_timestamp())
  FROM made
)
SELECT count(*)::int AS total, count(*) FILTER (WHERE state = 'pending' AND next_attempt_at <> 'infinity')::int AS due FROM made`;

/**
 * The PostgreSQL {@link MessageStore}. Payloads are encrypted with `cipher` (context = message id).
 * `wake` is called after a commit that made due deliveries (in-process dispatchers); other processes are
 * woken by NOTIFY on {@link WAKE_CHANNEL} when the database is a server.
 */
export function createPgMessageStore(db: Db, cipher: Cipher, wake: () => void): MessageStore {
  return {
    async insert(tx, message: NewMessage, now) {
      const client = txClient(tx);
      const sealed = cipher.encrypt(message.payload, message.id);
      let createdAt: Date;
      try {
        const res = await client.query<{ created_at: Date }>(INSERT_MESSAGE, [
          message.id, message.appId, message.eventId, message.eventType, message.channels, message.tags,
          sealed.data, sealed.keyId, message.retentionHours, now,
        ]);
        createdAt = res.rows[0]!.created_at;
      } catch (error) {
        if (sqlState(error) === SqlState.uniqueViolation && constraintOf(error) === 'messages_app_event_id') {
          throw new AppError('conflict', `A message with eventId "${message.eventId}" already exists`, { cause: error });
        }
        throw error;
      }
      const fan = await client.query<{ total: number; due: number }>(FAN_OUT, [message.id, message.appId, message.eventType, message.channels, now]);
      const { total, due } = fan.rows[0]!;
      if (due > 0) {
        if (db.engine === 'server') await client.query(`SELECT pg_notify('${WAKE_CHANNEL}', '')`);
        onCommit(tx, wake);
      }
      const record: MessageRecord = {
        id: message.id, appId: message.appId, eventId: message.eventId, eventType: message.eventType,
        channels: message.channels, tags: message.tags, payload: message.payload, createdAt,
      };
      return { message: record, deliveries: total };
    },
  };
}
