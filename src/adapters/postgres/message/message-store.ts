import { settingDefault } from '../../../config/config.ts';
import { AppError, notFound } from '../../../domain/errors.ts';
import type { Cipher } from '../../../ports/cipher.ts';
import { keyIdentity, type IdempotencyScope, type StoredAnswer } from '../../../ports/idempotency-store.ts';
import { StaleLookupError, type KeyedAnswer, type KeyedInsert, type MessageRecord, type MessageStore, type NewMessage } from '../../../ports/message-store.ts';
import { DEFAULT_BATCH_LIMITS, statementBatcher, type BatchLimits } from '../batching.ts';
import { dbForRows, prepared, type Db, type Queryable, type SmallStatements } from '../db.ts';
import pg from 'pg';
import { constraintOf, sqlState, SqlState } from '../sqlstate.ts';
import { isAutocommit, onCommit, txClient } from '../tx.ts';
import type { ClaimedDelivery } from '../../../ports/delivery-store.ts';
import type { Handoff, HandoffOffer } from '../../../ports/handoff.ts';
import { createClaimedReader } from '../claimed-row.ts';
import { WAKE_CHANNEL, type CarriedMode, type NotifyCarrier } from '../wakeups/notify-carrier.ts';

/*
 * PUBLISH — stores messages and their fan-out in one statement (one round trip, one commit when run on its
 * own): per message the message row, one delivery per subscribed endpoint of its application and the first
 * timeline row of each (stamped with its application, endpoint and since_publish_ms: docs/adr/0016-hot-path-cost.md,
 * decision 10). Several concurrent publishes share one run (group commit, ADR 0007); a lone publish
 * or one inside a transaction passes arrays of one. With $16 true and a delivery due now, the statement
 * sends the NOTIFY on {@link WAKE_CHANNEL} itself, delivered at its commit; with $19 also true it sends it even when it
 * made nothing due (a wake-up the process owes, see {@link NotifyCarrier}). The store asks for it only outside a caller's
 * transaction and when its {@link NotifyCarrier} has no other NOTIFY of the process in flight, because a notifying commit
 * takes a cluster-wide lock that serializes every such commit (ADR 0006); otherwise the caller's `wake` owes one after
 * commit. Subscribed: not deleted; no event-type filter or the type is in it; no
 * channels or at least one shared channel. Disabled endpoints get `skipped` deliveries (kept for
 * replay-missing); paused ones get pending deliveries due at 'infinity' until resumed. A message whose
 * (app, eventId) is taken is not stored (ON CONFLICT DO NOTHING) and is missing from the result. Messages
 * are inserted in (app, eventId) order: two groups that share eventIds wait for each other's rows in the
 * same order, so they cannot deadlock (in any other order they could: each holds a row the other needs).
 * A scheduled message (deliver_at later than its creation) gets pending deliveries due at deliver_at, and
 * their first timeline row says `scheduled` instead of `published`; a deliver_at in the past is due at once.
 * Parallel arrays, one element per message: $1 id, $2 app id, $3 event id, $4 event type, $5 channels and
 * $6 tags (JSON array text or NULL), $15 and $7 where the payload starts and ends in $14 (byte offsets, end
 * exclusive), $8 payload key id, $9 retention hours, $10 now (NULL = database clock), $11 content type
 * (NULL = JSON payload), $12 deliver_at (NULL = at once), $13 trace context (JSON text of the W3C
 * traceparent/tracestate; NULL = none, always when tracing is off). $14 is every payload's ciphertext end to
 * end, one bytea sent in binary: a bytea[] parameter travels as text, hex-encoded by the client and parsed
 * back by array_in (docs/adr/0016-hot-path-cost.md, decision 11). $16 whether to NOTIFY, $19 whether even without due work (see above).
 * $17 and $18 confirm the publish's lookups (ADR 0006, "Publish lookups are cached and confirmed"): $17 the
 * application's id or uid as the request named it (NULL = not confirmed), which must still name $2; $18 the
 * event type's revision its payload was checked against, 0 = no such type (NULL = not confirmed). A message
 * whose lookups no longer hold is not stored and comes back with `stale`.
 * Returns per stored message: id, created_at, the number of deliveries and how many are due now; per stale
 * message its id and stale = true.
 */
/** The columns of a hand-off row, NULL in the rows of messages (one line: the variants are cut by line). */
const HANDED_NONE = ', NULL::bigint AS delivery_id, NULL::bigint AS fencing_token, NULL::text AS endpoint_id, NULL::text AS url, NULL::jsonb AS headers, NULL::bytea AS secret, NULL::text AS secret_key_id, NULL::bytea AS sensitive_headers, NULL::text AS sensitive_headers_key, NULL::bytea AS previous_secret, NULL::text AS previous_secret_key_id';

/**
 * The text of {@link PUBLISH}, {@link PUBLISH_HANDING} and their keyed variants {@link PUBLISH_KEYED} and
 * {@link PUBLISH_KEYED_HANDING}: one statement in which a line ending in `-- hand-off` belongs to the handing variants
 * only, one ending in `-- no hand-off` to the others, one ending in `-- keyed` to the keyed variants only and one
 * ending in `-- not keyed` to the others.
 */
const PUBLISH_TEXT = `
WITH input AS (
  SELECT i.*, coalesce(i.at, clock_timestamp()) AS now,
         (i.app_ref IS NULL OR EXISTS (SELECT 1 FROM applications a WHERE a.id = i.app_id AND (a.id = i.app_ref OR a.uid = i.app_ref)))
         AND (i.type_revision IS NULL OR coalesce((SELECT t.revision FROM event_types t WHERE t.name = i.event_type), 0) = i.type_revision) AS confirmed
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::int[], $10::timestamptz[],
              $11::text[], $12::timestamptz[], $13::text[], $15::int[], $17::text[], $18::bigint[]
              , $k1::text[], $k2::text[], $k3::text[], $k4::text[], $k5::bigint[], $k6::int[], $k7::text[] -- keyed
              )
    AS i (id, app_id, event_id, event_type, channels, tags, payload_end, payload_key_id, retention_hours, at, content_type, deliver_at, trace_context, payload_start,
          app_ref, type_revision
          , key_owner, key_route, idem_key, key_fingerprint, key_ttl_ms, answer_status, answer_body -- keyed
          )
), wait AS ( -- keyed
  SELECT set_config('lock_timeout', $k8, true) AS lock_timeout -- keyed
), claimed AS ( -- keyed
  -- The keys, each with its answer (the body's timestamp is the message's creation, ms, as Date.toISOString writes it). -- keyed
  -- A message whose eventId is taken claims no key; one taken by a transaction in flight fails the statement (23505). -- keyed
  INSERT INTO idempotency_keys (owner, route, key, fingerprint, expires_at, response_status, response_body) -- keyed
  SELECT key_owner, key_route, idem_key, key_fingerprint, clock_timestamp() + key_ttl_ms * interval '1 millisecond', answer_status, -- keyed
         jsonb_set(answer_body::jsonb, '{timestamp}', to_jsonb(to_char(now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))) -- keyed
  FROM wait, input -- keyed
  WHERE confirmed AND (event_id IS NULL OR NOT EXISTS (SELECT 1 FROM messages m WHERE m.app_id = input.app_id AND m.event_id = input.event_id)) -- keyed
  ORDER BY key_owner, key_route, idem_key -- keyed
  ON CONFLICT (owner, route, key) DO NOTHING -- keyed
  RETURNING owner, route, key -- keyed
), msg AS (
  INSERT INTO messages (id, app_id, event_id, event_type, channels, tags, payload, payload_key_id, retention_hours, created_at, content_type, deliver_at, trace_context)
  SELECT id, app_id, event_id, event_type,
         CASE WHEN channels IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(channels::jsonb)) END,
         CASE WHEN tags IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(tags::jsonb)) END,
         substring($14::bytea FROM payload_start + 1 FOR payload_end - payload_start), payload_key_id, retention_hours, now,
         content_type, deliver_at, trace_context::jsonb
  FROM input WHERE confirmed -- not keyed
  FROM input JOIN claimed k ON k.owner = input.key_owner AND k.route = input.key_route AND k.key = input.idem_key -- keyed
  ORDER BY app_id, event_id
  ON CONFLICT (app_id, event_id) WHERE event_id IS NOT NULL DO NOTHING -- not keyed
  RETURNING id, app_id, event_type, channels, created_at, greatest(created_at, coalesce(deliver_at, created_at)) AS due_at
), fan AS (
  SELECT msg.app_id, msg.id AS message_id, e.id AS endpoint_id, e.status, msg.created_at, msg.due_at
         -- Leased at once to the offer's dispatcher ($20): due now, to an endpoint of the offer that needs no gate of the claim. -- hand-off
         , e.status = 'active' AND msg.due_at <= msg.created_at AND e.max_in_flight IS NULL AND e.rate_limit_per_s IS NULL -- hand-off
           AND e.breaker_state = 'closed' AND (e.throttled_until IS NULL OR e.throttled_until <= msg.created_at) -- hand-off
           AND r.room IS NOT NULL AS takeable, r.room -- hand-off
  FROM msg JOIN endpoints e ON e.app_id = msg.app_id
  LEFT JOIN unnest($23::text[], $24::int[]) AS r (id, room) ON r.id = e.id -- hand-off
  WHERE e.deleted_at IS NULL
    AND (e.filter_types IS NULL OR cardinality(e.filter_types) = 0 OR msg.event_type = ANY (e.filter_types))
    AND (e.channels IS NULL OR cardinality(e.channels) = 0 OR e.channels && coalesce(msg.channels, '{}'))
), fits AS ( -- hand-off
  SELECT f.*, f.takeable AND row_number() OVER (PARTITION BY f.takeable, f.endpoint_id ORDER BY f.message_id) <= f.room AS fits FROM fan f -- hand-off
), handed AS ( -- hand-off
  SELECT f.*, f.fits AND row_number() OVER (PARTITION BY f.fits ORDER BY f.message_id, f.endpoint_id) <= $22 AS leased FROM fits f -- hand-off
), made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, updated_at, -- hand-off
                          dispatcher_id, lease_expires_at, fencing_token) -- hand-off
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, updated_at) -- no hand-off
  SELECT app_id, message_id, endpoint_id,
         CASE WHEN leased THEN 'leased' WHEN status = 'disabled' THEN 'skipped' ELSE 'pending' END, -- hand-off
         CASE WHEN status = 'disabled' THEN 'skipped' ELSE 'pending' END, -- no hand-off
         CASE WHEN status = 'paused' THEN 'infinity'::timestamptz ELSE due_at END,
         created_at, created_at
         , CASE WHEN leased THEN $20::text END, CASE WHEN leased THEN created_at + $21::int * interval '1 millisecond' END, -- hand-off
         CASE WHEN leased THEN 1 ELSE 0 END -- hand-off
  FROM handed -- hand-off
  FROM fan -- no hand-off
  RETURNING id, app_id, endpoint_id, message_id, state, next_attempt_at, created_at, fencing_token
), logged AS (
  -- Stamped here (ADR 0016, decision 10): the row's instant is the delivery's creation, so since_publish_ms is 0.
  -- A delivery leased here gets its published row, then the claimed row of its lease (wait 0), in that order. -- hand-off
  INSERT INTO delivery_events (delivery_id, state, reason, at, app_id, endpoint_id, since_publish_ms, dispatcher_id, fencing_token, wait_ms) -- hand-off
  SELECT id, CASE WHEN step = 2 THEN 'leased' WHEN state = 'leased' THEN 'pending' ELSE state END, -- hand-off
         CASE WHEN step = 2 THEN 'claimed' -- hand-off
  INSERT INTO delivery_events (delivery_id, state, reason, at, app_id, endpoint_id, since_publish_ms) -- no hand-off
  SELECT id, state, -- no hand-off
         CASE -- no hand-off
              WHEN state = 'skipped' THEN 'endpoint_disabled'
              WHEN next_attempt_at > created_at AND next_attempt_at <> 'infinity' THEN 'scheduled' ELSE 'published' END,
         created_at, app_id, endpoint_id, 0
         , CASE WHEN step = 2 THEN $20::text END, CASE WHEN step = 2 THEN fencing_token END, CASE WHEN step = 2 THEN 0 END -- hand-off
  FROM made CROSS JOIN LATERAL (SELECT 1 AS step UNION ALL SELECT 2 WHERE made.state = 'leased') AS steps -- hand-off
  ORDER BY id, step -- hand-off
  FROM made -- no hand-off
), counts AS (
  SELECT message_id, count(*)::int AS total,
         count(*) FILTER (WHERE state = 'pending' AND next_attempt_at <= created_at)::int AS due
  FROM made GROUP BY message_id
), woke AS (
  SELECT pg_notify('${WAKE_CHANNEL}', '') FROM (SELECT 1) AS one WHERE $16::boolean AND ($19::boolean OR EXISTS (SELECT 1 FROM counts WHERE due > 0))
)
-- notified is read so that woke runs: a CTE without data modification runs only where it is used (so it may not run
-- when no message was stored: the caller then takes the NOTIFY as not sent, and at worst one more is sent).
SELECT msg.id, msg.created_at, coalesce(counts.total, 0) AS total, coalesce(counts.due, 0) AS due, woke_count.n > 0 AS notified, false AS stale
       ${HANDED_NONE} -- hand-off
FROM msg LEFT JOIN counts ON counts.message_id = msg.id CROSS JOIN (SELECT count(*) AS n FROM woke) AS woke_count
UNION ALL
SELECT id, NULL, 0, 0, false, true
       ${HANDED_NONE} -- hand-off
FROM input WHERE NOT confirmed
-- One row per delivery leased here, with what the dispatcher needs from its endpoint (as the claim returns it). -- hand-off
UNION ALL -- hand-off
SELECT d.message_id, NULL, 0, 0, false, false, d.id, d.fencing_token, d.endpoint_id, e.url, e.headers, e.secret, e.secret_key_id, -- hand-off
       e.sensitive_headers, e.sensitive_headers_key, -- hand-off
       CASE WHEN e.previous_secret_until > d.created_at THEN e.previous_secret END, e.previous_secret_key_id -- hand-off
FROM made d JOIN endpoints e ON e.id = d.endpoint_id WHERE d.state = 'leased' -- hand-off
`;

/**
 * {@link PUBLISH_TEXT} for one variant: the lines of the other variants dropped, the markers cut off, and the keyed
 * variant's parameters `$k1`…`$k8` numbered after the others (from $20, or $25 with a hand-off).
 */
const publishSql = (handing: boolean, keyed: boolean): string => PUBLISH_TEXT.split('\n').flatMap((line) => {
  const marker = / -- (hand-off|no hand-off|keyed|not keyed)$/.exec(line)?.[1];
  if (marker === undefined) return [line];
  const kept = marker === 'hand-off' ? handing : marker === 'no hand-off' ? !handing : marker === 'keyed' ? keyed : !keyed;
  return kept ? [line.slice(0, -(marker.length + 4))] : [];
}).join('\n').replace(/\$k(\d)/g, (_, n: string) => `$${(handing ? 24 : 19) + Number(n)}`);

const PUBLISH = prepared('tidings_publish', publishSql(false, false));

/*
 * PUBLISH_HANDING — {@link PUBLISH} with a hand-off to the dispatcher of the publishing process
 * (docs/adr/0018-publish-hands-off-leases.md): of the deliveries due at once to an active endpoint with no in-flight cap,
 * no rate limit, a closed breaker and no throttle, those of the endpoints in $23 (each at most its room in $24, at
 * most $22 in all, in message then endpoint order) are inserted leased to dispatcher $20 for $21 ms with fencing token
 * 1, and their timeline gets the claimed row of that lease after the published one. Besides the rows of
 * {@link PUBLISH} (delivery_id NULL), it returns one row per delivery leased: its message id in `id`, delivery_id,
 * fencing_token, endpoint_id and the endpoint's url, headers and secrets (as the claim returns them). `due` counts
 * only the deliveries left pending.
 */
const PUBLISH_HANDING = prepared('tidings_publish_handing', publishSql(true, false));

/*
 * PUBLISH_KEYED — {@link PUBLISH} under fresh Idempotency-Keys, one per message, with the keys and their answers in the
 * same statement (the grouped keyed publish: docs/adr/0007-group-commit.md, "One statement per keyed group"). The keys
 * are inserted first, in key order, each with its answer, waiting at most $27 (e.g. '50ms', the statement's
 * lock_timeout) for a key a transaction in flight holds; a message is stored only with the key it claimed. A key that
 * exists (answered, expired, in flight) is not claimed, nor is that of a message whose lookups no longer hold or whose
 * eventId is taken: that message is not stored and missing from the result (or `stale`). An eventId that a
 * transaction in flight takes fails the statement with unique_violation (23505), so that no key is stored with the
 * answer of a message that was not: the messages have no ON CONFLICT here (nor may two messages of one run share an
 * eventId: the caller leaves the second out). Parallel arrays besides PUBLISH's, one
 * element per message: $20 owners, $21 routes, $22 keys, $23 fingerprints, $24 ttl ms, $25 answer statuses, $26
 * answer bodies (JSON text; the statement sets their top-level `timestamp` to the message's creation, in UTC to the
 * ms, as Date.toISOString writes it). A key must not appear twice.
 */
const PUBLISH_KEYED = prepared('tidings_publish_keyed', publishSql(false, true));

/** PUBLISH_KEYED_HANDING — {@link PUBLISH_KEYED} with the hand-off of {@link PUBLISH_HANDING} ($20–$24), the keys' parameters from $25 to $32. */
const PUBLISH_KEYED_HANDING = prepared('tidings_publish_keyed_handing', publishSql(true, true));

/** A message ready for {@link PUBLISH}: the payload already sealed. */
interface SealedMessage {
  readonly message: NewMessage;
  readonly data: Buffer;
  readonly keyId: string;
  readonly now: Date | null;
}

/** What {@link PUBLISH} returns for one stored message. */
interface PublishedRow {
  readonly id: string;
  readonly created_at: Date;
  readonly total: number;
  readonly due: number;
  /** The statement sent the NOTIFY on {@link WAKE_CHANNEL}, delivered at its commit. */
  readonly notified: boolean;
  /** The message's expected lookups no longer held: it was not stored (its other columns mean nothing). */
  readonly stale: boolean;
}

/** A result of {@link publishRows} as a stored row, or null (an error). */
const publishedRow = (result: PublishedRow | Error): PublishedRow | null => (result instanceof Error ? null : result);

const jsonArray = (values: readonly string[] | null): string | null => (values === null ? null : JSON.stringify(values));

/** What {@link PUBLISH_HANDING} returns for one delivery it leased (the columns of a ClaimRow, src/adapters/postgres/claimed-row.ts, it has). */
interface HandedRow {
  readonly id: string;
  readonly delivery_id: string;
  readonly fencing_token: string;
  readonly endpoint_id: string;
  readonly url: string;
  readonly headers: Record<string, string> | null;
  readonly secret: Buffer;
  readonly secret_key_id: string;
  readonly sensitive_headers: Buffer | null;
  readonly sensitive_headers_key: string | null;
  readonly previous_secret: Buffer | null;
  readonly previous_secret_key_id: string | null;
}

/** One publish statement's results: one per message, in order, and the deliveries it leased to a hand-off offer. */
interface Published<R> {
  readonly results: R[];
  readonly handed: readonly { readonly row: HandedRow; readonly sealed: SealedMessage }[];
}

/**
 * Runs {@link PUBLISH} for `batch` (or {@link PUBLISH_HANDING} with `offer`; their keyed variants with `keyed`, one
 * call per message of `batch`); one result per message, in order: its row, AppError `conflict` (a keyed message: its
 * key was not claimed), or {@link StaleLookupError} when its expected lookups no longer held; and the deliveries
 * leased to the offer.
 * @throws AppError `not_found` when `batch` is one message whose application was deleted before the publish
 *   committed (the foreign key of messages.app_id: the publish waited for the deletion, then found nothing);
 *   a larger batch rejects with the database's error, and the caller publishes its messages one by one.
 */
async function publishRows(client: Queryable, batch: readonly SealedMessage[], notify: CarriedMode, offer: HandoffOffer | null = null, keyed: KeyedBatch | null = null): Promise<Published<PublishedRow | AppError | StaleLookupError>> {
  const column = <T>(pick: (m: SealedMessage) => T): T[] => batch.map(pick);
  const starts: number[] = [];
  const ends: number[] = [];
  let offset = 0;
  for (const m of batch) {
    starts.push(offset);
    offset += m.data.length;
    ends.push(offset);
  }
  const params: unknown[] = [
    column((m) => m.message.id), column((m) => m.message.appId), column((m) => m.message.eventId), column((m) => m.message.eventType),
    column((m) => jsonArray(m.message.channels)), column((m) => jsonArray(m.message.tags)), ends,
    column((m) => m.keyId), column((m) => m.message.retentionHours), column((m) => m.now),
    column((m) => m.message.contentType ?? null), column((m) => m.message.deliverAt ?? null),
    column((m) => (m.message.traceContext == null ? null : JSON.stringify(m.message.traceContext))),
    batch.length === 1 ? batch[0]!.data : Buffer.concat(batch.map((m) => m.data), offset), starts, notify !== 'none',
    column((m) => m.message.expected?.appRef ?? null), column((m) => m.message.expected?.eventTypeRevision ?? null), notify === 'always',
  ];
  if (offer !== null) params.push(offer.dispatcherId, offer.leaseMs, offer.slots, offer.endpointIds, offer.room);
  if (keyed !== null) {
    const scopes = keyed.calls.map((call) => call.scope);
    params.push(
      scopes.map((s) => s.owner), scopes.map((s) => s.route), scopes.map((s) => s.key), scopes.map((s) => s.fingerprint), scopes.map((s) => s.ttlMs),
      keyed.calls.map((call) => call.answer.status), keyed.calls.map((call) => JSON.stringify(call.answer.body)), `${Math.max(1, Math.round(keyed.lockTimeoutMs))}ms`,
    );
  }
  const statement = keyed === null ? (offer === null ? PUBLISH : PUBLISH_HANDING) : (offer === null ? PUBLISH_KEYED : PUBLISH_KEYED_HANDING);
  const res = await client.query<PublishedRow & Partial<HandedRow>>(statement, params).catch((error: unknown) => {
    if (batch.length === 1 && sqlState(error) === SqlState.foreignKeyViolation && constraintOf(error) === 'messages_app_id_fkey') throw notFound('Application');
    throw error;
  });
  const byId = new Map<string, PublishedRow>();
  const handedRows: HandedRow[] = [];
  for (const row of res.rows) {
    if (row.delivery_id == null) byId.set(row.id, row);
    else handedRows.push(row as HandedRow);
  }
  const sealedById = handedRows.length === 0 ? null : new Map(batch.map((m) => [m.message.id, m]));
  return {
    results: batch.map(({ message }) => {
      const row = byId.get(message.id);
      if (row?.stale === true) return new StaleLookupError(message.id);
      if (row !== undefined) return row;
      // ON CONFLICT names the (app, eventId) index only: any other conflict fails the statement.
      return new AppError('conflict', `A message with eventId "${message.eventId}" already exists`);
    }),
    handed: handedRows.map((row) => ({ row, sealed: sealedById!.get(row.id)! })),
  };
}

/**
 * Whether a grouped keyed publish refused by the server is an expected event, not worth a log line: a key
 * held by a concurrent request (55P03), a deadlock or serialization victim (class 40), or a request's own
 * data (classes 22 and 23: the ordinary path answers it).
 */
function expectedGroupRefusal(error: unknown): boolean {
  return sqlState(error) === SqlState.lockNotAvailable || retryAlone(error);
}

/**
 * Whether a failed batch may be retried message by message: only a statement the database refused, so that
 * nothing of it was stored — for its data (SQLSTATE classes 22 and 23, e.g. an application deleted
 * meanwhile) or as a deadlock or serialization victim (class 40). After any other error (connection lost,
 * timeout) the outcome is unknown, and every call of the batch fails.
 */
function retryAlone(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && (state.startsWith('22') || state.startsWith('23') || state.startsWith('40'));
}

/**
 * Longest wait of a grouped keyed publish for a key or eventId that a transaction in flight holds, in ms: past it
 * the group gives up and each of its calls takes the ordinary keyed path (which waits TIDINGS_IDEMPOTENCY_WAIT).
 * Short, because the wait holds every call of the group.
 */
export const KEYED_GROUP_LOCK_TIMEOUT_MS = 50;

/** One call of a grouped keyed publish. */
interface KeyedCall {
  readonly scope: IdempotencyScope;
  readonly sealed: SealedMessage;
  readonly answer: KeyedAnswer;
}

/** The calls of a grouped keyed publish, one per message of its statement, and how long it waits for a held key or eventId (ms). */
interface KeyedBatch {
  readonly calls: readonly KeyedCall[];
  readonly lockTimeoutMs: number;
}

/** What a grouped keyed publish stored for one call: its message's row and the answer stored with its key. */
interface KeyedResult {
  readonly row: PublishedRow;
  readonly answer: StoredAnswer;
}

const recordOf = (message: NewMessage, createdAt: Date): MessageRecord => ({
  id: message.id, appId: message.appId, eventId: message.eventId, eventType: message.eventType,
  channels: message.channels, tags: message.tags, payload: message.payload, contentType: message.contentType ?? null,
  deliverAt: message.deliverAt ?? null, createdAt,
});

/**
 * Runs a group of keyed publishes as one statement ({@link PUBLISH_KEYED}), which claims the fresh keys, publishes their
 * messages and stores their answers. A call whose key is not fresh (or held by an earlier call of the group), whose
 * eventId is taken or whose lookups are stale gets null. Rejects when the statement failed (nothing of it was stored, or
 * its outcome is unknown). `notify`: whether the statement sends the NOTIFY, delivered at its commit ({@link CarriedMode});
 * `offer`: the hand-off it may lease to; `lockTimeoutMs`: the longest wait for a key or eventId held by a transaction in
 * flight, past which the statement fails with lock_not_available (55P03).
 */
async function publishKeyedGroup(db: Db, calls: readonly KeyedCall[], notify: CarriedMode, offer: HandoffOffer | null, lockTimeoutMs: number): Promise<Published<KeyedResult | null>> {
  // The same key, or the same eventId of an application, twice in one group: the first call may claim it, the others
  // take the ordinary path (a second message with the eventId would fail the whole statement: PUBLISH_KEYED).
  const keys = new Set<string>();
  const eventIds = new Set<string>();
  const mine = calls.filter((call) => {
    const key = keyIdentity(call.scope);
    const { appId, eventId } = call.sealed.message;
    const event = eventId === null ? null : JSON.stringify([appId, eventId]);
    if (keys.has(key) || (event !== null && eventIds.has(event))) return false;
    keys.add(key);
    if (event !== null) eventIds.add(event);
    return true;
  });
  const published = await publishRows(db, mine.map((call) => call.sealed), notify, offer, { calls: mine, lockTimeoutMs });
  const done = new Map<KeyedCall, KeyedResult>();
  for (const [i, call] of mine.entries()) {
    const row = published.results[i]!;
    // The answer as the statement stored it: pg reads created_at to the ms by truncation, as to_char's MS writes it.
    if (!(row instanceof Error)) done.set(call, { row, answer: { status: call.answer.status, body: { ...call.answer.body, timestamp: row.created_at.toISOString() } } });
  }
  return { results: calls.map((call) => done.get(call) ?? null), handed: published.handed };
}

/** Options of {@link createPgMessageStore}. */
export interface MessageStoreOptions {
  /** Group sizes and statements in flight (TIDINGS_DB_BATCH, TIDINGS_DB_BATCHES_IN_FLIGHT). */
  readonly limits?: BatchLimits;
  /**
   * Largest payload, in bytes, of a message that joins a group (TIDINGS_DB_BATCH_MAX_PAYLOAD); a larger one is
   * published by a statement of its own, so that a group's parameters stay small. Default 65,536.
   */
  readonly maxGroupedPayloadBytes?: number;
  /**
   * Told when the server refused a grouped keyed publish for an unexpected reason (not a key held by a
   * concurrent request, a deadlock or serialization victim, or a request's own data): its calls took the
   * ordinary keyed path. For a log line.
   */
  readonly onGroupError?: (error: unknown) => void;
  /**
   * Whether keyed publishes outside a transaction are grouped ({@link PUBLISH_KEYED}). False or absent: every keyed
   * insert answers null, and the caller takes the ordinary keyed path.
   */
  readonly groupKeyed?: boolean;
  /**
   * Longest wait of a grouped keyed publish for a key or eventId that a transaction in flight holds, in ms; past it the
   * group is refused and its calls take the ordinary keyed path. Default {@link KEYED_GROUP_LOCK_TIMEOUT_MS}.
   */
  readonly keyedLockTimeoutMs?: number;
  /**
   * The process's NOTIFY, which a publish statement may carry (Wakeups; given on a PostgreSQL server): a publish
   * outside a caller's transaction (a statement of its own: a group, keyed or not, or a lone message) asks it as the
   * statement starts whether to send the NOTIFY itself, delivered at its commit (ADR 0006, "The process's NOTIFY rides
   * on a publish statement"), and after a commit that notified calls its `woken` instead of `wake`.
   * Absent = no NOTIFY inside; `wake` after every commit with due work.
   */
  readonly carrier?: NotifyCarrier;
  /**
   * The dispatcher of this process, to which a publish outside a caller's transaction may hand its new deliveries
   * leased ({@link PUBLISH_HANDING}; docs/adr/0018-publish-hands-off-leases.md). Absent = every delivery is inserted
   * pending and claimed.
   */
  readonly handoff?: Handoff;
  /**
   * Where the groups (keyed or not) of few messages run, planned once (docs/adr/0016-hot-path-cost.md,
   * decision 24): on a server a pool of their own, on the embedded engine `withGenericPlans` of the one
   * session. Only the groups, whose statements in flight `limits` bounds; a message published alone (a payload
   * too large for a group, a retry after its group failed) runs on `db`. Absent = every statement on `db`.
   */
  readonly small?: SmallStatements;
}

/** Default {@link MessageStoreOptions.maxGroupedPayloadBytes}: that of TIDINGS_DB_BATCH_MAX_PAYLOAD. */
export const DEFAULT_MAX_GROUPED_PAYLOAD_BYTES = settingDefault('dbBatchMaxPayloadBytes');

/**
 * The PostgreSQL {@link MessageStore}. Payloads are encrypted with `cipher` (context = message id).
 * `wake` is called after a commit that made due deliveries and carried no NOTIFY: it wakes in-process dispatchers
 * and, on a server, owes the others a NOTIFY on {@link WAKE_CHANNEL} (../wakeups/wakeups.ts). Inserts outside a transaction (an
 * autocommit {@link Tx}) from concurrent requests share one statement, within `limits` (group commit,
 * ADR 0007); an insert inside a transaction runs alone on that transaction.
 */
export function createPgMessageStore(db: Db, cipher: Cipher, wake: () => void, options: MessageStoreOptions = {}): MessageStore {
  const limits = options.limits ?? DEFAULT_BATCH_LIMITS;
  const maxGroupedBytes = options.maxGroupedPayloadBytes ?? DEFAULT_MAX_GROUPED_PAYLOAD_BYTES;
  const carrier = options.carrier;
  const keyedLockTimeoutMs = options.keyedLockTimeoutMs ?? KEYED_GROUP_LOCK_TIMEOUT_MS;
  const handoff = options.handoff;
  const dbFor = (rows: number): Db => dbForRows(db, options.small, rows);
  const readLease = handoff === undefined ? null : createClaimedReader(cipher);
  const leasedOf = (offer: HandoffOffer, handed: Published<unknown>['handed']): ClaimedDelivery[] => handed.map(({ row, sealed }) => {
    const { message } = sealed;
    const delivery = readLease!({
      ...row, id: row.delivery_id, message_id: message.id, app_id: message.appId, attempt_count: 0, manual: false, reclaimed: false,
      event_type: message.eventType, payload: null, payload_key_id: null, content_type: message.contentType ?? null,
    }, offer.dispatcherId, message.payload);
    return message.traceContext == null ? delivery : { ...delivery, traceContext: message.traceContext };
  });
  // One publish statement of this store (a group, keyed or not, or a lone message) with its part in the process's NOTIFY and,
  // with a hand-off, the room its dispatcher offers. `rowOf` picks the published rows out of the results, to read whether
  // the statement notified. The leases it made are adopted once it has ended (committed), or the room given back.
  const carried = async <T>(count: number, work: (mode: CarriedMode, offer: HandoffOffer | null) => Promise<Published<T>>, rowOf: (result: T) => PublishedRow | null): Promise<readonly T[]> => {
    const part = carrier?.begin();
    const offer = handoff?.offer(count) ?? null;
    let notified = false;
    let handed: Published<T>['handed'] = [];
    try {
      const published = await work(part?.mode ?? 'none', offer);
      notified = published.results.some((result) => rowOf(result)?.notified === true);
      handed = published.handed;
      return published.results;
    } finally {
      part?.end(notified);
      if (offer !== null) {
        // Rows that cannot be read (a secret that does not decrypt) give the room back and fail nothing: the publish is
        // committed, their leases expire, and the claim that takes them reports the error.
        let deliveries: ClaimedDelivery[] = [];
        try {
          if (handed.length > 0) deliveries = leasedOf(offer, handed);
        } catch {
          deliveries = [];
        }
        handoff!.adopt(offer, deliveries);
      }
    }
  };
  const woken = carrier === undefined ? wake : () => carrier.woken();
  const wakeAfter = (row: PublishedRow): (() => void) => (row.notified ? woken : wake);
  const grouped = statementBatcher<SealedMessage, PublishedRow>(limits, async (batch) => {
    try {
      return await carried(batch.length, (notify, offer) => publishRows(dbFor(batch.length), batch, notify, offer), publishedRow);
    } catch (error) {
      // The group's part in the NOTIFY has ended: its messages, retried one by one, carry none and call `wake`.
      if (batch.length === 1 || !retryAlone(error)) throw error;
      return Promise.all(batch.map(async (one) => {
        try {
          return (await publishRows(db, [one], 'none')).results[0]!;
        } catch (alone) {
          return alone instanceof Error ? alone : new Error(String(alone));
        }
      }));
    }
  });
  const keyedGroups = options.groupKeyed !== true ? null : statementBatcher<KeyedCall, KeyedResult | null>(limits, async (calls) => {
    try {
      return await carried(calls.length, (notify, offer) => publishKeyedGroup(dbFor(calls.length), calls, notify, offer, keyedLockTimeoutMs), (result) => result?.row ?? null);
    } catch (error) {
      // Refused by the server: rolled back, nothing stored; the ordinary path answers each call. Any other
      // failure (connection lost, timeout) leaves the outcome unknown: the calls fail, and a client retrying
      // with its key is answered from the key row if the group did commit.
      if (!(error instanceof pg.DatabaseError)) throw error;
      if (!expectedGroupRefusal(error)) options.onGroupError?.(error);
      return calls.map(() => null);
    }
  });
  return {
    async insertKeyed(scope, message, now, answer): Promise<KeyedInsert | null> {
      if (keyedGroups === null || message.payload.byteLength > maxGroupedBytes) return null;
      const sealed = cipher.encrypt(message.payload, message.id);
      const result = await keyedGroups({ scope, sealed: { message, data: sealed.data, keyId: sealed.keyId, now }, answer });
      if (result === null) return null;
      if (result.row.due > 0) wakeAfter(result.row)();
      return { message: recordOf(message, result.row.created_at), deliveries: result.row.total, answer: result.answer };
    },

    async insert(tx, message: NewMessage, now) {
      const sealed = cipher.encrypt(message.payload, message.id);
      const input: SealedMessage = { message, data: sealed.data, keyId: sealed.keyId, now };
      const alone = !isAutocommit(tx) || message.payload.byteLength > maxGroupedBytes;
      // Inside a caller's transaction the NOTIFY would wait for a commit that this store does not see: `wake` then.
      const row = !alone ? await grouped(input)
        : isAutocommit(tx) ? (await carried(1, (notify, offer) => publishRows(db, [input], notify, offer), publishedRow))[0]!
          : (await publishRows(txClient(tx), [input], 'none')).results[0]!;
      if (row instanceof Error) throw row;
      if (row.due > 0) onCommit(tx, wakeAfter(row));
      return { message: recordOf(message, row.created_at), deliveries: row.total };
    },
  };
}
