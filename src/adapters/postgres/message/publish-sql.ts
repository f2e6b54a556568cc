/*
 * The publish statement in its four variants, composed from named pieces with named parameters
 * (../named-sql.ts). Each variant is rendered whole in test/fixtures/sql/ (`npm run sql-fixtures`), with the
 * header made from the docs below: read those files to review a variant.
 *
 * - PUBLISH: messages and their fan-out in one statement (docs/adr/0007-group-commit.md);
 * - PUBLISH_HANDING: the same, with the hand-off of new deliveries, leased, to the dispatcher of the publishing
 *   process (docs/adr/0018-publish-hands-off-leases.md);
 * - PUBLISH_KEYED, PUBLISH_KEYED_HANDING: the two above under fresh Idempotency-Keys, with the keys and their
 *   answers in the same statement (ADR 0007, "One statement per keyed group").
 */
import { joined, namedStatement, NOTHING, params, raw, sql, type NamedStatement, type Sql } from '../named-sql.ts';
import { WAKE_CHANNEL } from '../wakeups/notify-carrier.ts';

/** The parameters of the publish statements: parallel arrays hold one element per message. */
export const PUBLISH_PARAMS = params({
  id: 'text[]: message ids (the arrays are parallel: one element per message)',
  app_id: 'text[]: application ids',
  event_id: 'text[]: eventIds (NULL = none)',
  event_type: 'text[]: event type names',
  channels: 'text[]: channels, JSON array text (NULL = none)',
  tags: 'text[]: tags, JSON array text (NULL = none)',
  payload_start: 'int[]: where each payload starts in `payloads` (byte offset)',
  payload_end: 'int[]: where each payload ends in `payloads` (byte offset, exclusive)',
  payload_key_id: "text[]: the key id of each payload's ciphertext",
  retention_hours: 'int[]: payload retention (NULL = the default)',
  at: 'timestamptz[]: now (NULL = the database clock)',
  content_type: 'text[]: content type of a raw message (NULL = JSON payload)',
  deliver_at: 'timestamptz[]: when the first attempt is due (NULL = at once)',
  trace_context: 'text[]: JSON text of the W3C traceparent/tracestate (NULL = none, always when tracing is off)',
  app_ref:
    "text[]: the application's id or uid as the request named it, which must still name app_id " +
    '(NULL = not confirmed)',
  type_revision:
    'bigint[]: the event type revision the payload was checked against, 0 = no such type ' + '(NULL = not confirmed)',
  filter_revision:
    "bigint[]: the application's filter revision the endpoints' payload filters were evaluated at, which must " +
    'still be its own (NULL = not confirmed: no filter was evaluated)',
  filtered_out: 'text[]: the endpoints whose payload filter the message did not match, JSON array text (NULL = none)',
  payloads: "bytea: every payload's ciphertext end to end, sent in binary (a bytea[] would travel as hex text)",
  notify: 'boolean: whether the statement sends the NOTIFY on tidings_due, delivered at its commit',
  notify_always: 'boolean: with notify, whether even when it made nothing due (a wake-up the process owes)',
  dispatcher: 'text: the dispatcher the offer leases to',
  lease_ms: 'int: lease length, ms',
  slots: 'int: most deliveries leased in all',
  room_endpoints: 'text[]: the endpoints of the offer',
  room: 'int[]: how many deliveries each endpoint of room_endpoints may take',
  key_owner: 'text[]: idempotency key owner, one per message',
  key_route: 'text[]: idempotency key route',
  idem_key: 'text[]: the Idempotency-Key (a key must not appear twice)',
  key_fingerprint: 'text[]: the request fingerprint',
  key_ttl_ms: 'bigint[]: how long the key is kept, ms',
  answer_status: "int[]: the stored answer's status",
  answer_body:
    "text[]: the stored answer's body, JSON text; its top-level `timestamp` is set to the message's " +
    'creation (UTC, ms, as Date.toISOString writes it)',
  lock_timeout: "text: the statement's lock_timeout, e.g. '50ms'",
});
const p = PUBLISH_PARAMS;

/** A name of {@link PUBLISH_PARAMS}. */
export type PublishParam = keyof typeof PUBLISH_PARAMS;

/** Which publish statement: with the hand-off of an offer, under fresh Idempotency-Keys. */
interface Variant {
  readonly handing: boolean;
  readonly keyed: boolean;
}

type Piece = Sql<PublishParam>;
const when = (cond: boolean, piece: Piece): Piece => (cond ? piece : NOTHING);

/** The messages with their lookups confirmed (ADR 0006, "Publish lookups are cached and confirmed"). */
const input = (v: Variant): Piece => sql`input AS (
  SELECT i.*, coalesce(i.at, clock_timestamp()) AS now,
         (i.app_ref IS NULL AND i.filter_revision IS NULL
          OR EXISTS (SELECT 1 FROM applications a
                     WHERE a.id = i.app_id AND (i.app_ref IS NULL OR a.id = i.app_ref OR a.uid = i.app_ref)
                       AND (i.filter_revision IS NULL OR a.filter_revision = i.filter_revision)))
         AND (i.type_revision IS NULL
              OR coalesce((SELECT t.revision FROM event_types t WHERE t.name = i.event_type), 0) = i.type_revision)
         AS confirmed
  FROM unnest(${p.id}::text[], ${p.app_id}::text[], ${p.event_id}::text[], ${p.event_type}::text[],
              ${p.channels}::text[], ${p.tags}::text[], ${p.payload_end}::int[], ${p.payload_key_id}::text[],
              ${p.retention_hours}::int[], ${p.at}::timestamptz[], ${p.content_type}::text[],
              ${p.deliver_at}::timestamptz[], ${p.trace_context}::text[], ${p.payload_start}::int[],
              ${p.app_ref}::text[], ${p.type_revision}::bigint[], ${p.filter_revision}::bigint[],
              ${p.filtered_out}::text[]${when(
                v.keyed,
                sql`,
              ${p.key_owner}::text[], ${p.key_route}::text[], ${p.idem_key}::text[], ${p.key_fingerprint}::text[],
              ${p.key_ttl_ms}::bigint[], ${p.answer_status}::int[], ${p.answer_body}::text[]`,
              )})
    AS i (id, app_id, event_id, event_type, channels, tags, payload_end, payload_key_id, retention_hours, at,
          content_type, deliver_at, trace_context, payload_start, app_ref, type_revision, filter_revision,
          filtered_out${when(
            v.keyed,
            sql`,
          key_owner, key_route, idem_key, key_fingerprint, key_ttl_ms, answer_status, answer_body`,
          )})
)`;

/** Keyed: the statement's own lock_timeout, then the keys it claims, each with its answer. */
const keyClaims: Piece = sql`wait AS (
  SELECT set_config('lock_timeout', ${p.lock_timeout}, true) AS lock_timeout
), claimed AS (
  -- The keys, each with its answer (the body's timestamp is the message's creation, ms, as Date.toISOString
  -- writes it). A message whose eventId is taken claims no key; one taken by a transaction in flight fails the
  -- statement (23505).
  INSERT INTO idempotency_keys (owner, route, key, fingerprint, expires_at, response_status, response_body)
  SELECT key_owner, key_route, idem_key, key_fingerprint, clock_timestamp() + key_ttl_ms * interval '1 millisecond',
         answer_status,
         jsonb_set(answer_body::jsonb, '{timestamp}',
                   to_jsonb(to_char(now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
  FROM wait, input
  WHERE confirmed
    AND (event_id IS NULL
         OR NOT EXISTS (SELECT 1 FROM messages m WHERE m.app_id = input.app_id AND m.event_id = input.event_id))
  ORDER BY key_owner, key_route, idem_key
  ON CONFLICT (owner, route, key) DO NOTHING
  RETURNING owner, route, key
)`;

/**
 * The messages, in (app, eventId) order so that two groups sharing eventIds cannot deadlock. Not keyed: a taken
 * eventId skips its message (ON CONFLICT). Keyed: only the messages whose key was claimed, with no ON CONFLICT.
 */
const msg = (v: Variant): Piece => sql`msg AS (
  INSERT INTO messages (id, app_id, event_id, event_type, channels, tags, payload, payload_key_id, retention_hours,
                        created_at, content_type, deliver_at, trace_context, filtered_out)
  SELECT id, app_id, event_id, event_type,
         CASE WHEN channels IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(channels::jsonb)) END,
         CASE WHEN tags IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(tags::jsonb)) END,
         substring(${p.payloads}::bytea FROM payload_start + 1 FOR payload_end - payload_start),
         payload_key_id, retention_hours, now, content_type, deliver_at, trace_context::jsonb,
         CASE WHEN filtered_out IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(filtered_out::jsonb)) END
  ${
    v.keyed
      ? sql`FROM input
  JOIN claimed k ON k.owner = input.key_owner AND k.route = input.key_route AND k.key = input.idem_key`
      : sql`FROM input WHERE confirmed`
  }
  ORDER BY app_id, event_id${when(
    !v.keyed,
    sql`
  ON CONFLICT (app_id, event_id) WHERE event_id IS NOT NULL DO NOTHING`,
  )}
  RETURNING id, app_id, event_type, channels, created_at, filtered_out,
            greatest(created_at, coalesce(deliver_at, created_at)) AS due_at
)`;

/**
 * One row per subscribed endpoint of each message, with the retry policy its delivery keeps (the endpoint's over
 * the event type's: migration 1764000012000); with the hand-off, whether the offer may take it.
 */
const fan = (v: Variant): Piece => sql`fan AS (
  SELECT msg.app_id, msg.id AS message_id, e.id AS endpoint_id, e.status, msg.created_at,
         msg.due_at, tidings_retry_policy(e.retry_policy, t.retry_policy) AS retry_policy${when(
           v.handing,
           sql`,
         -- Leased at once to the offer's dispatcher: due now, to an endpoint of the offer that takes work and
         -- needs no gate of the claim (the endpoint's rule, as the claim reads it: migration 1764000010000).
         tidings_endpoint_accepting(e, msg.created_at) AND tidings_endpoint_ungated(e)
           AND msg.due_at <= msg.created_at AND r.room IS NOT NULL AS takeable, r.room`,
         )}
  FROM msg JOIN endpoints e ON e.app_id = msg.app_id
  LEFT JOIN event_types t ON t.name = msg.event_type${when(
    v.handing,
    sql`
  LEFT JOIN unnest(${p.room_endpoints}::text[], ${p.room}::int[]) AS r (id, room) ON r.id = e.id`,
  )}
  WHERE e.deleted_at IS NULL
    AND (e.filter_types IS NULL OR cardinality(e.filter_types) = 0 OR msg.event_type = ANY (e.filter_types))
    AND (e.channels IS NULL OR cardinality(e.channels) = 0 OR e.channels && coalesce(msg.channels, '{}'))
    AND (msg.filtered_out IS NULL OR e.id <> ALL (msg.filtered_out))
)`;

/** Hand-off: each endpoint's takeable rows within its room, then at most `slots` in message then endpoint order. */
const handed: Piece = sql`fits AS (
  SELECT f.*,
         f.takeable AND row_number() OVER (PARTITION BY f.takeable, f.endpoint_id ORDER BY f.message_id) <= f.room
         AS fits
  FROM fan f
), handed AS (
  SELECT f.*,
         f.fits AND row_number() OVER (PARTITION BY f.fits ORDER BY f.message_id, f.endpoint_id) <= ${p.slots} AS leased
  FROM fits f
)`;

/** The deliveries: skipped to a disabled endpoint, due at 'infinity' to a paused one; handing, some leased. */
const made = (v: Variant): Piece =>
  v.handing
    ? sql`made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, updated_at,
                          dispatcher_id, lease_expires_at, fencing_token, retry_policy)
  SELECT app_id, message_id, endpoint_id,
         CASE WHEN leased THEN 'leased' WHEN status = 'disabled' THEN 'skipped' ELSE 'pending' END,
         CASE WHEN status = 'paused' THEN 'infinity'::timestamptz ELSE due_at END,
         created_at, created_at,
         CASE WHEN leased THEN ${p.dispatcher}::text END,
         CASE WHEN leased THEN created_at + ${p.lease_ms}::int * interval '1 millisecond' END,
         CASE WHEN leased THEN 1 ELSE 0 END, retry_policy
  FROM handed
  RETURNING id, app_id, endpoint_id, message_id, state, next_attempt_at, created_at, fencing_token, retry_policy
)`
    : sql`made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, updated_at, retry_policy)
  SELECT app_id, message_id, endpoint_id,
         CASE WHEN status = 'disabled' THEN 'skipped' ELSE 'pending' END,
         CASE WHEN status = 'paused' THEN 'infinity'::timestamptz ELSE due_at END,
         created_at, created_at, retry_policy
  FROM fan
  RETURNING id, app_id, endpoint_id, message_id, state, next_attempt_at, created_at, fencing_token
)`;

/** The first timeline row of each delivery; a leased one also gets the claimed row of its lease. */
const logged = (v: Variant): Piece =>
  v.handing
    ? sql`logged AS (
  -- Stamped here (ADR 0016, decision 10): the row's instant is the delivery's creation, so since_publish_ms is 0.
  -- A delivery leased here gets its published row, then the claimed row of its lease (wait 0), in that order.
  INSERT INTO delivery_events (delivery_id, state, reason, at, app_id, endpoint_id, since_publish_ms,
                               dispatcher_id, fencing_token, wait_ms)
  SELECT id, CASE WHEN step = 2 THEN 'leased' WHEN state = 'leased' THEN 'pending' ELSE state END,
         CASE WHEN step = 2 THEN 'claimed'
              WHEN state = 'skipped' THEN 'endpoint_disabled'
              WHEN next_attempt_at > created_at AND next_attempt_at <> 'infinity' THEN 'scheduled' ELSE 'published' END,
         created_at, app_id, endpoint_id, 0,
         CASE WHEN step = 2 THEN ${p.dispatcher}::text END, CASE WHEN step = 2 THEN fencing_token END,
         CASE WHEN step = 2 THEN 0 END
  FROM made CROSS JOIN LATERAL (SELECT 1 AS step UNION ALL SELECT 2 WHERE made.state = 'leased') AS steps
  ORDER BY id, step
)`
    : sql`logged AS (
  -- Stamped here (ADR 0016, decision 10): the row's instant is the delivery's creation, so since_publish_ms is 0.
  INSERT INTO delivery_events (delivery_id, state, reason, at, app_id, endpoint_id, since_publish_ms)
  SELECT id, state,
         CASE WHEN state = 'skipped' THEN 'endpoint_disabled'
              WHEN next_attempt_at > created_at AND next_attempt_at <> 'infinity' THEN 'scheduled' ELSE 'published' END,
         created_at, app_id, endpoint_id, 0
  FROM made
)`;

/** Per message, its deliveries and how many are due now; then the NOTIFY, when asked for. */
const counted: Piece = sql`counts AS (
  SELECT message_id, count(*)::int AS total,
         count(*) FILTER (WHERE state = 'pending' AND next_attempt_at <= created_at)::int AS due
  FROM made GROUP BY message_id
), woke AS (
  SELECT pg_notify('${raw(WAKE_CHANNEL)}', '') FROM (SELECT 1) AS one
  WHERE ${p.notify}::boolean AND (${p.notify_always}::boolean OR EXISTS (SELECT 1 FROM counts WHERE due > 0))
)`;

/** The columns of a hand-off row, NULL in the rows of messages. */
const HANDED_NONE: Piece = sql`,
       NULL::bigint AS delivery_id, NULL::bigint AS fencing_token, NULL::text AS endpoint_id, NULL::text AS url,
       NULL::jsonb AS headers, NULL::bytea AS secret, NULL::text AS secret_key_id, NULL::bytea AS sensitive_headers,
       NULL::text AS sensitive_headers_key, NULL::bytea AS previous_secret, NULL::text AS previous_secret_key_id,
       NULL::jsonb AS retry_policy`;

/** A row per stored message, one per stale one, and with the hand-off one per delivery leased. */
const result = (v: Variant): Piece => sql`
-- notified is read so that woke runs: a CTE without data modification runs only where it is used (so it may not
-- run when no message was stored: the caller then takes the NOTIFY as not sent, and at worst one more is sent).
SELECT msg.id, msg.created_at, coalesce(counts.total, 0) AS total, coalesce(counts.due, 0) AS due,
       woke_count.n > 0 AS notified, false AS stale${when(v.handing, HANDED_NONE)}
FROM msg LEFT JOIN counts ON counts.message_id = msg.id CROSS JOIN (SELECT count(*) AS n FROM woke) AS woke_count
UNION ALL
SELECT id, NULL, 0, 0, false, true${when(v.handing, HANDED_NONE)}
FROM input WHERE NOT confirmed${when(
  v.handing,
  sql`
-- One row per delivery leased here, with what the dispatcher needs from its endpoint (as the claim returns it).
UNION ALL
SELECT d.message_id, NULL, 0, 0, false, false, d.id, d.fencing_token, d.endpoint_id, e.url, e.headers, e.secret,
       e.secret_key_id, e.sensitive_headers, e.sensitive_headers_key,
       CASE WHEN e.previous_secret_until > d.created_at THEN e.previous_secret END, e.previous_secret_key_id,
       d.retry_policy
FROM made d JOIN endpoints e ON e.id = d.endpoint_id WHERE d.state = 'leased'`,
)}`;

/** The whole statement of a variant. */
const publishBody = (v: Variant): Piece => {
  const ctes: Piece[] = [
    input(v),
    ...(v.keyed ? [keyClaims] : []),
    msg(v),
    fan(v),
    ...(v.handing ? [handed] : []),
    made(v),
    logged(v),
    counted,
  ];
  return sql`WITH ${joined(ctes, ', ')}${result(v)}`;
};

const PURPOSE = `Stores messages and their fan-out in one statement (one round trip, one commit when run on its
own): per message the message row, one delivery per subscribed endpoint of its application and the first timeline
row of each (stamped with its application, endpoint and since_publish_ms: docs/adr/0016-hot-path-cost.md,
decision 10).
Several concurrent publishes share one run (group commit, docs/adr/0007-group-commit.md); a lone publish or one
inside a transaction passes arrays of one.
Subscribed: not deleted; no event-type filter or the type is in it; no channels or at least one shared channel;
not among the message's filtered_out (the endpoints whose payload filter it did not match, evaluated by the caller
and stored on the message: docs/adr/0029-endpoint-payload-filters.md).
Each delivery stores its retry policy: the endpoint's fields over its event type's (tidings_retry_policy).
Disabled endpoints get skipped deliveries (kept for replay-missing); paused ones get pending deliveries due at
'infinity' until resumed. A scheduled message (deliver_at later than its creation) gets pending deliveries due at
deliver_at, and their first timeline row says scheduled instead of published; a deliver_at in the past is due at
once.
Messages are inserted in (app, eventId) order: two groups that share eventIds wait for each other's rows in the
same order, so they cannot deadlock. A message whose lookups (app_ref, type_revision, filter_revision) no longer
hold is not stored and comes back stale.
With notify and a delivery due now, the statement sends the NOTIFY on tidings_due itself, delivered at its commit
(the store asks for it only outside a caller's transaction, when no other NOTIFY of the process is in flight:
src/adapters/postgres/wakeups/, ADR 0006); with notify_always even when it made nothing due.`;

const HANDING = `
With the hand-off (docs/adr/0018-publish-hands-off-leases.md): of the deliveries due at once to an active endpoint
with no in-flight cap, no rate limit, a closed breaker and no throttle, those of room_endpoints (each at most its
room, at most slots in all, in message then endpoint order) are inserted leased to dispatcher for lease_ms with
fencing token 1, and their timeline gets the claimed row of that lease after the published one. due counts only
the deliveries left pending.`;

const KEYED = `
Keyed (docs/adr/0007-group-commit.md, "One statement per keyed group"): the keys are inserted first, in key order,
each with its answer, waiting at most lock_timeout for a key a transaction in flight holds; a message is stored
only with the key it claimed. A key that exists (answered, expired, in flight) is not claimed, nor is that of a
message whose lookups no longer hold or whose eventId is taken: that message is not stored and missing from the
result (or stale). An eventId that a transaction in flight takes fails the statement with unique_violation
(23505), so that no key is stored with the answer of a message that was not: the messages have no ON CONFLICT here
(nor may two messages of one run share an eventId: the caller leaves the second out).`;

const RETURNS = `per stored message: id, created_at, total (its deliveries), due (how many are due now),
notified, stale = false; per message whose lookups no longer held: id, stale = true. Not keyed, a message whose
(app, eventId) is taken is missing from the result (ON CONFLICT DO NOTHING).`;

const HANDED_RETURNS = `
With the hand-off, also one row per delivery leased: its message id in id, delivery_id, fencing_token, endpoint_id,
the endpoint's url, headers and secrets and the delivery's retry_policy as the claim returns them (delivery_id is
NULL in the other rows).`;

const INDEXES = `messages_app_event_id (ON CONFLICT, and the keyed test of a taken eventId); applications_pkey,
applications_uid_key and event_types_pkey (the confirmed lookups; the event type's retry policy);
endpoints_app (the fan-out); endpoints_pkey (the hand-off's rows); idempotency_keys_pkey (keyed: ON CONFLICT).`;

const variant = (name: string, v: Variant): NamedStatement<PublishParam> =>
  namedStatement(
    name,
    {
      purpose: PURPOSE + (v.handing ? HANDING : '') + (v.keyed ? KEYED : ''),
      returns: RETURNS + (v.handing ? HANDED_RETURNS : ''),
      indexes: INDEXES,
    },
    publishBody(v),
  );

/** Messages and their fan-out (group commit). */
export const PUBLISH = variant('tidings_publish', { handing: false, keyed: false });
/** {@link PUBLISH} with the hand-off of due deliveries, leased, to the dispatcher of the publishing process. */
export const PUBLISH_HANDING = variant('tidings_publish_handing', { handing: true, keyed: false });
/** {@link PUBLISH} under fresh Idempotency-Keys, the keys and their answers in the same statement. */
export const PUBLISH_KEYED = variant('tidings_publish_keyed', { handing: false, keyed: true });
/** {@link PUBLISH_KEYED} with the hand-off of {@link PUBLISH_HANDING}. */
export const PUBLISH_KEYED_HANDING = variant('tidings_publish_keyed_handing', { handing: true, keyed: true });
