import type { DeliveryState } from '../../../domain/delivery-state.ts';
import type { Cipher } from '../../../ports/cipher.ts';
import type { MessageView } from '../../../ports/message-query-store.ts';
import type {
  DeadLetterQuery,
  DeadLetterView,
  DeliveryQueryStore,
  DeliverySummary,
  EndpointMessageQuery,
  EndpointMessageView,
  TimelineEntry,
} from '../../../ports/delivery-query-store.ts';
import type { Page } from '../../../ports/paging.ts';
import { endpointDeliveries, endpointDeliveriesPage } from '../delivery-reads.ts';
import { holdColumnsSql, holdOf } from '../delivery-holds.ts';
import { toRecord as endpointRecord, type EndpointRow } from '../endpoint-row.ts';
import { addMessageFilters, Conditions, messageViewOf, payloadOf, type StoredMessageColumns } from '../message-rows.ts';
import { nowSql } from '../sql.ts';
import { keyset, toPage } from '../paging.ts';
import type { Db } from '../db.ts';

/** The endpoint columns the delivery read side reads, on alias `e`. */
const ENDPOINT_COLUMNS = [
  'id',
  'app_id',
  'uid',
  'url',
  'description',
  'version',
  'filter_types',
  'channels',
  'metadata',
  'headers',
  'rate_limit_per_s',
  'status',
  'status_reason',
  'created_at',
  'updated_at',
]
  .map((c) => `e.${c}`)
  .join(', ');

/**
 * A message's creation instant at the millisecond precision the API shows (`timestamp`), so that a window
 * or a before/after filter given a message's own timestamp treats it as the same instant.
 */
const MSG_MS = `date_trunc('milliseconds', m.created_at)`;

/** The due time of a delivery as the API shows it: only a pending one with a finite due time has one. */
const NEXT_ATTEMPT =
  `CASE WHEN d.state = 'pending' AND d.next_attempt_at <> 'infinity'::timestamptz THEN d.next_attempt_at END AS ` +
  'next_attempt';

/** The columns of a delivery's hold by its endpoint (alias `e`), judged at parameter `$n` (../delivery-holds.ts). */
const hold = (n: number): string => holdColumnsSql(nowSql(n));

/** What a row selecting {@link NEXT_ATTEMPT} and {@link hold} adds. */
interface ScheduleColumns {
  next_attempt: Date | null;
  held_by: string | null;
  held_until: Date | null;
}

/** Message columns on alias `m`; the payload only when wanted. */
const messageColumns = (withPayload: boolean) =>
  `m.id AS msg_id, m.app_id AS msg_app_id, m.event_id, m.event_type, m.channels AS msg_channels, m.tags,
   ${withPayload ? 'm.payload' : 'NULL::bytea AS payload'}, m.payload_key_id,
   (m.payload_expunged_at IS NOT NULL OR m.payload IS NULL) AS expunged, m.content_type, m.deliver_at,
   m.created_at AS msg_created_at`;

/** {@link StoredMessageColumns} as {@link messageColumns} names them (beside a delivery's columns). */
interface AliasedMessageColumns extends Omit<StoredMessageColumns, 'id' | 'app_id' | 'channels' | 'created_at'> {
  msg_id: string;
  msg_app_id: string;
  msg_channels: string[] | null;
  msg_created_at: Date;
}

interface DeadLetterRow {
  id: string;
  app_id: string;
  message_id: string;
  endpoint_id: string;
  event_type: string;
  msg_created_at: Date;
  dead_reason: string | null;
  attempt_count: number;
  last_status_code: number | null;
  last_error_kind: string | null;
  last_attempt_at: Date | null;
  updated_at: Date;
}

interface TimelineRow {
  id: string;
  state: string;
  dispatcher_id: string | null;
  fencing_token: string | null;
  status_code: number | null;
  latency_ms: number | null;
  error_kind: string | null;
  reason: string | null;
  at: Date;
}

function timelineEntry(row: TimelineRow): TimelineEntry {
  return {
    id: row.id,
    state: row.state,
    dispatcherId: row.dispatcher_id,
    fencingToken: row.fencing_token,
    statusCode: row.status_code,
    latencyMs: row.latency_ms,
    errorKind: row.error_kind,
    reason: row.reason,
    at: row.at,
  };
}

/** A message as the API shows it, its payload decrypted (a NULL key id: stored in plain text). */
const messageView = (cipher: Cipher, row: AliasedMessageColumns): MessageView =>
  messageViewOf(
    { ...row, id: row.msg_id, app_id: row.msg_app_id, channels: row.msg_channels, created_at: row.msg_created_at },
    payloadOf(cipher, row, row.msg_id),
  );

/**
 * The PostgreSQL {@link DeliveryQueryStore}. Payloads are decrypted with `cipher` (context = message id; a
 * NULL key id means stored in plain text). Indexes: deliveries (message_id, endpoint_id) unique for the
 * destinations, deliveries_endpoint_message and deliveries_endpoint_leased for an endpoint's messages
 * ({@link endpointDeliveriesPage}) and its stats ({@link endpointDeliveries}), deliveries_app_state for dead letters
 * (of one endpoint: the endpoint as a filter). The lists and the counts run on `reader` (a read replica while it is
 * fresh enough, docs/adr/0022-poolers-and-read-replicas.md; default `db`); `findDelivery` runs on `db`.
 */
export function createPgDeliveryQueryStore(db: Db, cipher: Cipher, reader: Db = db): DeliveryQueryStore {
  return {
    async listDestinations(appId, messageId, page, now = null) {
      const k = keyset(page, 'e.id', 5);
      const res = await reader.query<EndpointRow & ScheduleColumns & { state: DeliveryState }>(
        `SELECT ${ENDPOINT_COLUMNS}, d.state, ${NEXT_ATTEMPT}, ${hold(4)}
         FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
         WHERE d.message_id = $1 AND d.app_id = $2 AND e.deleted_at IS NULL AND ${k.where}
         ORDER BY ${k.orderBy} LIMIT $3`,
        [messageId, appId, k.fetch, now, ...k.params],
      );
      return toPage(
        res.rows,
        page,
        (r) => r.id,
        (r) => ({
          endpoint: endpointRecord(r),
          state: r.state,
          nextAttemptAt: r.next_attempt,
          ...holdOf(r),
        }),
      );
    },

    listEndpointMessages: (appId, endpointId, query, now = null) =>
      listEndpointMessages(reader, cipher, appId, endpointId, query, now),

    async endpointStats(appId, endpointId, since, until) {
      const c = new Conditions([endpointId, appId]);
      if (since !== null) c.add((p) => `${MSG_MS} >= ${p}`, since);
      if (until !== null) c.add((p) => `${MSG_MS} < ${p}`, until);
      const join = c.sql.length > 0 ? 'JOIN messages m ON m.id = d.message_id' : '';
      const res = await reader.query<{ state: DeliveryState; n: number }>(
        `SELECT d.state, count(*)::int AS n FROM ${endpointDeliveries('$1')} d ${join} WHERE d.app_id = ` +
          `$2${c.text} GROUP BY d.state`,
        c.params,
      );
      const counts: Record<DeliveryState, number> = {
        pending: 0,
        leased: 0,
        succeeded: 0,
        dead: 0,
        skipped: 0,
        canceled: 0,
      };
      for (const row of res.rows) counts[row.state] = row.n;
      return counts;
    },

    listDeadLetters: (appId, query) => listDeadLetters(reader, appId, query),

    findDelivery: (appId, messageId, endpointId, now = null) => findDelivery(db, appId, messageId, endpointId, now),

    async listTimeline(deliveryId, page) {
      const k = keyset(page, 'id', 3);
      const res = await reader.query<TimelineRow>(
        `SELECT id, state, dispatcher_id, fencing_token, status_code, latency_ms, error_kind, reason, at
          FROM delivery_events
         WHERE delivery_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT $2`,
        [deliveryId, k.fetch, ...k.params],
      );
      return toPage(res.rows, page, (r) => r.id, timelineEntry);
    },
  };
}

/** The messages of an endpoint with their deliveries' states, a page of each part (not leased, leased). */
async function listEndpointMessages(
  reader: Db,
  cipher: Cipher,
  appId: string,
  endpointId: string,
  query: EndpointMessageQuery,
  now: Date | null,
): Promise<Page<EndpointMessageView>> {
  const c = new Conditions([endpointId, appId, now]);
  if (query.states !== null) c.add((p) => `d.state = ANY (${p}::text[])`, query.states);
  addMessageFilters(c, query, 'm.', MSG_MS);
  const limitParam = c.params.length + 1;
  const k = keyset(query, 'd.message_id', limitParam + 1);
  // Without a filter on the messages each delivery's message is read by its key, so that a page reads a
  // page of deliveries in order (a join lets the planner walk the messages from the start of their index).
  const byMessage =
    query.eventTypes === null &&
    query.channel === null &&
    query.tag === null &&
    query.before === null &&
    query.after === null;
  const messages = byMessage
    ? 'CROSS JOIN LATERAL (SELECT * FROM messages m WHERE m.id = d.message_id OFFSET 0) m'
    : 'JOIN messages m ON m.id = d.message_id';
  // The endpoint's row (one, by its key) for the deliveries' hold.
  const part = (from: string, where: string): string =>
    `SELECT ${messageColumns(query.withPayload)}, d.state, ${NEXT_ATTEMPT}, ${hold(3)}
     FROM ${from} ${messages}
     CROSS JOIN (SELECT status, breaker_state, breaker_open_until, throttled_until FROM endpoints WHERE id = $1) e
     WHERE ${where} AND d.app_id = $2${c.text} AND ${k.where}
     ORDER BY ${k.orderBy} LIMIT $${limitParam}`;
  const parts = {
    notLeased: query.states === null || query.states.some((s) => s !== 'leased'),
    leased: query.states === null || query.states.includes('leased'),
  };
  const res = await reader.query<AliasedMessageColumns & ScheduleColumns & { state: DeliveryState }>(
    endpointDeliveriesPage('$1', part, k.orderBy.replace('d.message_id', 'msg_id'), `$${limitParam}`, parts),
    [...c.params, k.fetch, ...k.params],
  );
  return toPage(
    res.rows,
    query,
    (r) => r.msg_id,
    (r) => ({
      message: messageView(cipher, r),
      state: r.state,
      nextAttemptAt: r.next_attempt,
      ...holdOf(r),
    }),
  );
}

/** The dead letters of an application, or of every application (a lateral read per application). */
async function listDeadLetters(
  reader: Db,
  appId: string | null,
  query: DeadLetterQuery,
): Promise<Page<DeadLetterView>> {
  // Every application: the same read inside a lateral join per application, so each uses
  // deliveries_app_state (app_id, state, id) in its order, and the outer sort merges at most limit + 1
  // rows of each.
  const c = new Conditions(appId === null ? [] : [appId]);
  const app = appId === null ? 'a.id' : '$1';
  if (query.endpointId !== null) c.add((p) => `d.endpoint_id = ${p}`, query.endpointId);
  addMessageFilters(c, query, 'm.', MSG_MS);
  const limitParam = c.params.length + 1;
  const k = keyset(query, 'd.id', limitParam + 1);
  const read = `SELECT d.id, d.app_id, d.message_id, d.endpoint_id, m.event_type, m.created_at AS msg_created_at,
    d.dead_reason,
            d.attempt_count, d.last_status_code, d.last_error_kind, d.last_attempt_at, d.updated_at
     FROM deliveries d JOIN messages m ON m.id = d.message_id
     WHERE d.app_id = ${app} AND d.state = 'dead'${c.text} AND ${k.where}
     ORDER BY ${k.orderBy} LIMIT $${limitParam}`;
  const res = await reader.query<DeadLetterRow>(
    appId === null
      ? `SELECT x.* FROM applications a CROSS JOIN LATERAL (${read}) x ORDER BY ` +
          `${k.orderBy.replace('d.id', 'x.id')} LIMIT $${limitParam}`
      : read,
    [...c.params, k.fetch, ...k.params],
  );
  return toPage(
    res.rows,
    query,
    (r) => r.id,
    (r): DeadLetterView => ({
      cursor: r.id,
      appId: r.app_id,
      messageId: r.message_id,
      endpointId: r.endpoint_id,
      eventType: r.event_type,
      messageCreatedAt: r.msg_created_at,
      reason: r.dead_reason,
      attemptCount: r.attempt_count,
      lastStatusCode: r.last_status_code,
      lastErrorKind: r.last_error_kind,
      lastAttemptAt: r.last_attempt_at,
      deadAt: r.updated_at,
    }),
  );
}

/** One delivery of a message to an endpoint, with its hold. */
async function findDelivery(
  db: Db,
  appId: string,
  messageId: string,
  endpointId: string,
  now: Date | null,
): Promise<DeliverySummary | null> {
  const res = await db.query<{
    id: string;
    message_id: string;
    endpoint_id: string;
    state: DeliveryState;
    attempt_count: number;
    next_attempt_at: Date;
    dead_reason: string | null;
    held_by: string | null;
    held_until: Date | null;
  }>(
    `SELECT d.id, d.message_id, d.endpoint_id, d.state, d.attempt_count, d.next_attempt_at, d.dead_reason,
            ${hold(4)}
     FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
     WHERE d.app_id = $1 AND d.message_id = $2 AND d.endpoint_id = $3`,
    [appId, messageId, endpointId, now],
  );
  const row = res.rows[0];
  return row === undefined
    ? null
    : {
        id: row.id,
        messageId: row.message_id,
        endpointId: row.endpoint_id,
        state: row.state,
        attemptCount: row.attempt_count,
        nextAttemptAt: row.next_attempt_at,
        deadReason: row.dead_reason,
        ...holdOf(row),
      };
}
