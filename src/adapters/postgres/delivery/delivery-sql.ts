/*
 * The hot-path statements of the delivery protocol (docs/design.md#the-protocol). Each is a constant with its purpose,
 * parameters, rows returned and the index it reads. `now` parameters are NULL in production (the database
 * clock, clock_timestamp()) and a fixed instant under a test clock. Every one is a {@link Prepared} statement:
 * each connection parses and plans it once.
 */

import { prepared } from '../db.ts';
import { namedStatement, params, sql } from '../named-sql.ts';

/*
 * SWEEP — housekeeping of expired leases that the claim must not take, in one statement:
 * (1) leases reclaimed `maxReclaims` times without any recorded outcome are dead-lettered with reason
 *     `lease_lost_repeatedly` (a payload that crashes dispatchers must not loop forever);
 * (2) expired leases of endpoints that are no longer active are settled: deleted → canceled (no request is
 *     ever sent after deletion), disabled → skipped, paused → pending at 'infinity' (held until resumed).
 * The two sets are disjoint (active vs not active endpoints). Each change appends a timeline row. (2) settles
 * the states as src/domain/outcome-rules.ts (`settledState`) does for a retry, for a lease that ended without
 * an outcome; its timeline reasons are its own (`endpoint_deleted`, `endpoint_disabled`, `endpoint_paused`).
 * $1 max reclaims, $2 now, $3 batch limit. Returns one row per change with the new state.
 * Index: deliveries_lease_expiry.
 */
export const SWEEP = prepared(
  'tidings_sweep',
  `
WITH lost AS (
  SELECT d.id FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
  WHERE d.state = 'leased' AND d.lease_expires_at <= coalesce($2::timestamptz, clock_timestamp())
    AND d.reclaim_count >= $1
    AND e.status = 'active' AND e.deleted_at IS NULL
  ORDER BY d.lease_expires_at, d.id
  LIMIT $3
  FOR UPDATE OF d SKIP LOCKED
), orphans AS (
  SELECT d.id, e.status, e.deleted_at IS NOT NULL AS deleted FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
  WHERE d.state = 'leased' AND d.lease_expires_at <= coalesce($2::timestamptz, clock_timestamp())
    AND (e.status <> 'active' OR e.deleted_at IS NOT NULL)
  ORDER BY d.lease_expires_at, d.id
  LIMIT $3
  FOR UPDATE OF d SKIP LOCKED
), dead AS (
  UPDATE deliveries d
  SET state = 'dead', dead_reason = 'lease_lost_repeatedly', dispatcher_id = NULL, lease_expires_at = NULL,
      manual = false, manual_return = NULL, updated_at = coalesce($2::timestamptz, clock_timestamp())
  FROM lost WHERE d.id = lost.id
  RETURNING d.id, d.state, d.fencing_token, 'lease_lost_repeatedly' AS reason
), settled AS (
  UPDATE deliveries d
  SET state = CASE WHEN o.deleted THEN 'canceled' WHEN o.status = 'disabled' THEN 'skipped' ELSE 'pending' END,
      next_attempt_at = CASE WHEN NOT o.deleted AND o.status = 'paused' THEN 'infinity'::timestamptz
        ELSE d.next_attempt_at END,
      dispatcher_id = NULL, lease_expires_at = NULL, manual = false, manual_return = NULL,
      updated_at = coalesce($2::timestamptz, clock_timestamp())
  FROM orphans o WHERE d.id = o.id
  RETURNING d.id, d.state, d.fencing_token,
            CASE WHEN o.deleted THEN 'endpoint_deleted' WHEN o.status = 'disabled' THEN 'endpoint_disabled'
              ELSE 'endpoint_paused' END AS reason
), changed AS (
  SELECT * FROM dead UNION ALL SELECT * FROM settled
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, fencing_token, reason, at)
  SELECT id, state, fencing_token, reason, coalesce($2::timestamptz, clock_timestamp()) FROM changed
)
SELECT id, state, reason FROM changed`,
);

/*
 * CLAIM — one call of the function `tidings_claim`, defined in src/adapters/postgres/delivery/claim.sql (its two
 * queries, its parameters, the rows it returns and the indexes it reads are documented there):
 * step 1 locks, with try-only advisory locks, the endpoints whose claims must be serialized across
 * dispatchers (an in-flight cap, a rate limit, a breaker not closed); step 2, with a fresh snapshot, leases
 * up to $2 due deliveries spread over endpoints by fair share, within each endpoint's share of the caller's
 * window (share − held, over due and reclaimed rows together), within the budget of endpoints not known to
 * be answering, within each gated endpoint's cap, token bucket and breaker; reclaims expired leases, bumps
 * fencing tokens, appends timeline rows, and returns each delivery with its payload and the endpoint's URL,
 * secrets and headers. One round trip, no BEGIN/COMMIT (ADR 0006, ADR 0009). $1 dispatcher id, $2 limit,
 * $3 lease ms, $4 now, $5 max reclaims, $6 endpoint ids this dispatcher excludes, $7 share per endpoint,
 * $8/$9 endpoints held and how many, $10 answering endpoints, $11 unresponsive endpoints, $12 budget.
 * Indexes: deliveries_endpoint_due, deliveries_lease_expiry, deliveries_endpoint_leased.
 */
export const CLAIM = prepared(
  'tidings_claim_window',
  'SELECT * FROM tidings_claim($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
);

/*
 * EXTEND_LEASES — the heartbeat: renews every lease of the batch whose (id, fencing token, dispatcher id) still
 * match. $1 ids, $2 tokens, $3 dispatcher id, $4 lease ms, $5 now. Returns the ids renewed (the rest are lost).
 */
export const EXTEND_LEASES = prepared(
  'tidings_extend_leases',
  `
UPDATE deliveries d
SET lease_expires_at = coalesce($5::timestamptz, clock_timestamp()) + $4 * interval '1 millisecond'
FROM unnest($1::bigint[], $2::bigint[]) AS l(id, token)
-- Written as RECORD_ATTEMPTS' update, so that no plan takes the rows from a partial index of every lease
-- (docs/adr/0016-hot-path-cost.md, decision 12).
WHERE d.id = ANY ($1::bigint[]) AND d.id = l.id AND d.fencing_token = l.token AND d.dispatcher_id = $3
  AND d.state COLLATE "C" = 'leased'
RETURNING d.id`,
);

/*
 * RELEASE_LEASES — graceful stop: gives leases back without charging an attempt; the deliveries are due
 * now. Fenced like every write. $1 ids, $2 tokens, $3 dispatcher id, $4 now. Returns the ids released.
 */
export const RELEASE_LEASES = prepared(
  'tidings_release_leases',
  `
WITH released AS (
  UPDATE deliveries d
  SET state = 'pending', dispatcher_id = NULL, lease_expires_at = NULL,
      next_attempt_at = coalesce($4::timestamptz, clock_timestamp()),
        updated_at = coalesce($4::timestamptz, clock_timestamp())
  FROM unnest($1::bigint[], $2::bigint[]) AS l(id, token)
  -- Written as RECORD_ATTEMPTS' update, so that no plan takes the rows from a partial index of every lease
  -- (docs/adr/0016-hot-path-cost.md, decision 12).
  WHERE d.id = ANY ($1::bigint[]) AND d.id = l.id AND d.fencing_token = l.token AND d.dispatcher_id = $3
    AND d.state COLLATE "C" = 'leased'
  RETURNING d.id, d.fencing_token
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, dispatcher_id, fencing_token, reason, at)
  SELECT id, 'pending', $3, fencing_token, 'released', coalesce($4::timestamptz, clock_timestamp()) FROM released
)
SELECT id FROM released`,
);

/** The parameters of {@link RECORD_ATTEMPTS}: parallel arrays hold one element per outcome. */
export const RECORD_PARAMS = params({
  id: 'bigint[]: delivery ids (the arrays are parallel: one element per outcome)',
  token: 'bigint[]: the fencing token each outcome was sent under',
  dispatcher: 'text[]: the dispatcher that holds the lease',
  next_state: 'text[]: succeeded, pending (retry) or dead, as the outcome rules decided',
  delay_ms: "bigint[]: a retry's delay from now, ms (NULL otherwise)",
  dead_reason: "text[]: a dead letter's reason (NULL otherwise)",
  attempt_id: "text[]: the attempt's id (atmpt_...)",
  attempt_number: "int[]: the attempt's number",
  trig: 'text[]: scheduled or manual (a resend)',
  url: 'text[]: the URL the attempt was sent to',
  succeeded: 'bool[]: whether the attempt succeeded',
  status: 'int[]: the response status (NULL = none)',
  body_hex: "text[]: hex of the response body prefix's ciphertext (NULL = empty)",
  location: "text[]: a redirect's Location",
  error_kind: 'text[]: the error kind (NULL = succeeded)',
  error_detail: "text[]: the error's detail",
  duration_ms: "int[]: the attempt's duration, ms",
  body_key_id: "text[]: the key id of body_hex's ciphertext",
  operator_detail: 'jsonb[]: details for the operator (NULL = none)',
  now: 'timestamptz: now (NULL = the database clock)',
  breaker_threshold: 'int: consecutive failures that open a closed breaker',
  cooldown_ms: "float8: the breaker's first cool-down, ms (doubled per opening)",
  max_cooldown_ms: 'float8: the longest cool-down, ms',
  auto_disable_after_ms: 'int: how long an endpoint fails before it should be disabled, ms',
});
const r = RECORD_PARAMS;

/** A name of {@link RECORD_PARAMS}. */
export type RecordParam = keyof typeof RECORD_PARAMS;

const RECORD_PURPOSE = `Step 3 of the protocol (docs/design.md#the-protocol) for a batch of outcomes, in one
statement (one transaction): every row is guarded by (id, fencing token, dispatcher id, state = 'leased'). A
fenced-out row matches nothing in upd, so no attempt and no timeline row is written for it; the other rows are
unaffected. It is kept, marked, in fenced_attempts (the operator's record of a request that may have reached the
receiver). The attempt, timeline and health rows are made from the rows upd returns, each carrying the outcome
that matched its (id, token): a stale outcome of a delivery whose newer lease is recorded in the same batch writes
nothing (the recorder also keeps one outcome per delivery a batch). A failed resend (manual) returns the delivery
to the state it had before the resend. The batch's deliveries are read by primary key (cur) and nothing joins the
batch a second time, so a statement costs the same per outcome whatever number of leases the endpoint holds
(docs/adr/0016-hot-path-cost.md, decision 4).
The endpoints of the recorded scheduled attempts get their health updated in the same statement (consecutive
failures, failing since, breaker: closed -> open after breaker_threshold consecutive failures, half-open -> open
on a failed probe, any success -> closed; the cool-down is cooldown_ms doubled per opening up to max_cooldown_ms).
The rules live in src/domain/outcome-rules.ts; this statement executes two of them where the row is written, for
atomicity: the state a delivery settles in (settledState) and the breaker's transitions (breakerAfter), with the
policy from recordPolicyParams. What the returned rows then cause (410 disable, auto-disable, health events,
operational events) is planRecordActions, executed by the store in the same transaction.`;

/**
 * Whether a failed batch opens the endpoint's breaker (`breakerAfter` in src/domain/outcome-rules.ts): a failed
 * probe of a half-open breaker, or a closed one that reaches the threshold. Written once, used in four columns.
 */
const OPENS = sql<RecordParam>`e.breaker_state = 'half_open'
  OR (e.breaker_state = 'closed' AND e.consecutive_failures + h.failed >= ${r.breaker_threshold})`;

/*
 * RECORD_ATTEMPTS — step 3 of the protocol for a batch of outcomes, in one statement: the attempts, the
 * deliveries' next state and timeline rows, and their endpoints' health. Rendered whole, with its parameters by
 * position, in test/fixtures/sql/record-attempts.sql (`npm run sql-fixtures`); its header is made from
 * RECORD_PURPOSE and RECORD_PARAMS.
 */
export const RECORD_ATTEMPTS = namedStatement<RecordParam>(
  'tidings_record_attempts',
  {
    purpose: RECORD_PURPOSE,
    returns: `one row per recorded delivery (kind 'delivery': id, app_id, state, endpoint_id, message_id, dead_reason,
and the record instant's distance from the delivery's publish and from its due time, ms, for metrics) and one per
endpoint whose health row changed (kind 'endpoint': its breaker state, consecutive failures, whether the breaker
changed state, whether the endpoint has failed long enough to be disabled, failing_since, breaker_open_until).`,
    indexes: "deliveries_pkey (cur's probe per outcome, upd), endpoints_pkey (cur, health).",
  },
  sql`
WITH o AS (
  SELECT * FROM unnest(${r.id}::bigint[], ${r.token}::bigint[], ${r.dispatcher}::text[], ${r.next_state}::text[],
                       ${r.delay_ms}::bigint[], ${r.dead_reason}::text[], ${r.attempt_id}::text[],
                       ${r.attempt_number}::int[], ${r.trig}::text[], ${r.url}::text[], ${r.succeeded}::bool[],
                       ${r.status}::int[], ${r.body_hex}::text[], ${r.location}::text[], ${r.error_kind}::text[],
                       ${r.error_detail}::text[], ${r.duration_ms}::int[], ${r.body_key_id}::text[],
                       ${r.operator_detail}::jsonb[])
    AS o(id, token, dispatcher, next_state, delay_ms, dead_reason, attempt_id, attempt_number, trig, url, succeeded,
         status, body_hex, location, error_kind, error_detail, duration_ms, body_key_id, operator_detail)
), cur AS MATERIALIZED (
  -- Each outcome with its delivery as this statement's snapshot sees it, read by primary key (so the cost is
  -- the batch's, whatever else the endpoint holds), and its endpoint, which may have been deleted, disabled or
  -- paused while the attempt was in flight. created_at and next_attempt_at are the values before the update.
  -- The LATERAL step with OFFSET 0 cannot be flattened into a join, so the plan probes the primary key once
  -- per outcome whatever the table's statistics say: with a plain join, a planner whose row estimate lags
  -- a growing table (a new database under load) picks a sequential scan of every delivery, dead row
  -- versions included, per record statement.
  SELECT o.*, d.endpoint_id, d.created_at AS published_at, d.next_attempt_at AS due_at,
         e.status AS endpoint_status, e.deleted_at IS NOT NULL AS endpoint_deleted
  FROM o
  JOIN LATERAL (SELECT d.endpoint_id, d.created_at, d.next_attempt_at FROM deliveries d WHERE d.id = o.id OFFSET 0) d
    ON true
  JOIN endpoints e ON e.id = d.endpoint_id
), upd AS (
  UPDATE deliveries d
  SET state = CASE WHEN c.next_state = 'succeeded' THEN 'succeeded'
                   WHEN c.endpoint_deleted THEN 'canceled'
                   WHEN c.next_state = 'dead' AND d.manual AND d.manual_return IS NOT NULL THEN d.manual_return
                   WHEN c.next_state = 'pending' AND c.endpoint_status = 'disabled' THEN 'skipped'
                   ELSE c.next_state END,
      next_attempt_at = CASE WHEN c.next_state = 'pending' AND c.endpoint_status = 'paused' THEN 'infinity'::timestamptz
                             WHEN c.next_state = 'pending'
                             THEN coalesce(${r.now}::timestamptz, clock_timestamp())
                                  + c.delay_ms * interval '1 millisecond'
                             ELSE d.next_attempt_at END,
      dead_reason = CASE WHEN c.next_state = 'dead' AND NOT (d.manual AND d.manual_return IS NOT NULL)
                         THEN c.dead_reason ELSE d.dead_reason END,
      attempt_count = d.attempt_count + 1,
      dispatcher_id = NULL, lease_expires_at = NULL, reclaim_count = 0, manual = false, manual_return = NULL,
      last_status_code = c.status, last_error_kind = c.error_kind,
      last_attempt_at = coalesce(${r.now}::timestamptz, clock_timestamp()),
      updated_at = coalesce(${r.now}::timestamptz, clock_timestamp())
  FROM cur c
  -- The rows are found by primary key whatever the statistics say (docs/adr/0016-hot-path-cost.md, decision 12):
  -- id = ANY (id) gives the planner the batch's keys as an index condition, and the state test is written in
  -- the "C" collation (the same test for these ASCII values) so that it does not match the predicate of the
  -- partial indexes on state = 'leased'. With the plain form, a planner whose last ANALYZE saw few leases
  -- read every lease of deliveries_lease_expiry or deliveries_endpoint_leased once per outcome.
  WHERE d.id = ANY (${r.id}::bigint[]) AND d.id = c.id AND d.fencing_token = c.token AND d.dispatcher_id = c.dispatcher
    AND d.state COLLATE "C" = 'leased'
  -- The outcome's own columns come back with the row, so that what follows never joins the batch again.
  RETURNING d.id, d.fencing_token, d.state, d.app_id, d.message_id, d.endpoint_id, d.dead_reason,
            c.dispatcher, c.next_state, c.attempt_id, c.attempt_number, c.trig, c.url, c.succeeded, c.status,
            c.body_hex, c.location, c.error_kind, c.error_detail, c.duration_ms, c.body_key_id, c.operator_detail,
            c.published_at, c.due_at
), att AS (
  INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger, succeeded,
                        response_status_code, response_body, response_body_key_id, response_location, error_kind,
                        error_detail, url, duration_ms, dispatcher_id, fencing_token, operator_detail, created_at)
  SELECT u.attempt_id, u.id, u.app_id, u.message_id, u.endpoint_id, u.attempt_number, u.trig, u.succeeded,
         u.status, decode(u.body_hex, 'hex'), u.body_key_id, u.location, u.error_kind, u.error_detail, u.url,
         u.duration_ms,
         u.dispatcher, u.fencing_token, u.operator_detail, coalesce(${r.now}::timestamptz, clock_timestamp())
  FROM upd u
), fenced AS (
  -- Outcomes fenced out: recorded apart, marked, outside the delivery's history (the request may have been sent).
  INSERT INTO fenced_attempts (id, delivery_id, endpoint_id, attempt_number, dispatcher_id, fencing_token,
                               response_status_code, error_kind, duration_ms, operator_detail, created_at)
  SELECT c.attempt_id, c.id, c.endpoint_id, c.attempt_number, c.dispatcher, c.token, c.status, c.error_kind,
         c.duration_ms, c.operator_detail, coalesce(${r.now}::timestamptz, clock_timestamp())
  FROM cur c
  WHERE (c.id, c.token) NOT IN (SELECT u.id, u.fencing_token FROM upd u)
  ON CONFLICT (id) DO NOTHING
), t AS (
  SELECT coalesce(${r.now}::timestamptz, clock_timestamp()) AS now
), ev AS (
  -- Stamped here with the stamp trigger's formula (migration 1764000008000), which then does not run (ADR 0016,
  -- decision 10).
  INSERT INTO delivery_events (delivery_id, state, dispatcher_id, fencing_token, status_code, latency_ms, error_kind,
                               reason, at, app_id, endpoint_id, since_publish_ms)
  SELECT u.id, u.state, u.dispatcher, u.fencing_token, u.status, u.duration_ms, u.error_kind,
         CASE WHEN u.state = 'dead' THEN u.dead_reason WHEN u.state = 'pending' THEN 'retry_scheduled'
              WHEN u.state = 'canceled' THEN 'endpoint_deleted'
              WHEN u.state = 'skipped' AND u.next_state = 'pending' THEN 'endpoint_disabled'
              WHEN u.trig = 'manual' THEN 'resent' END,
         t.now, u.app_id, u.endpoint_id, greatest(0, round(extract(epoch FROM t.now - u.published_at) * 1000))::bigint
  FROM upd u, t
), h AS (
  -- Scheduled attempts only: a manual resend says nothing about the endpoint's health.
  SELECT u.endpoint_id, count(*) FILTER (WHERE u.succeeded)::int AS ok,
         count(*) FILTER (WHERE NOT u.succeeded)::int AS failed
  FROM upd u WHERE u.trig = 'scheduled' GROUP BY u.endpoint_id
), health AS (
  -- Endpoint health by one atomic UPDATE per endpoint of the batch: counters change relative to the row's
  -- current value (never read-modify-write), so they stay exact across any number of dispatchers.
  UPDATE endpoints e
  SET consecutive_failures = CASE WHEN h.ok > 0 THEN 0 ELSE e.consecutive_failures + h.failed END,
      failing_since = CASE WHEN h.ok > 0 THEN NULL ELSE coalesce(e.failing_since, t.now) END,
      last_success_at = CASE WHEN h.ok > 0 THEN t.now ELSE e.last_success_at END,
      breaker_state = CASE WHEN h.ok > 0 THEN 'closed'
                           WHEN ${OPENS} THEN 'open'
                           ELSE e.breaker_state END,
      breaker_open_until = CASE WHEN h.ok = 0 AND (${OPENS})
                                THEN t.now + least(${r.max_cooldown_ms}::float8,
                                                   ${r.cooldown_ms}::float8
                                                   * power(2, least(e.breaker_opened_count, 30)))
                                             * interval '1 millisecond'
                                ELSE e.breaker_open_until END,
      breaker_opened_count = CASE WHEN h.ok > 0 THEN 0
                                  WHEN ${OPENS} THEN e.breaker_opened_count + 1
                                  ELSE e.breaker_opened_count END,
      breaker_changed_at = CASE WHEN (h.ok > 0 AND e.breaker_state <> 'closed')
                                  OR (h.ok = 0 AND (${OPENS}))
                                THEN t.now ELSE e.breaker_changed_at END
  FROM h, t
  WHERE e.id = h.endpoint_id
    AND (h.failed > 0 OR e.consecutive_failures > 0 OR e.breaker_state <> 'closed' OR e.failing_since IS NOT NULL
         OR e.last_success_at IS NULL OR e.last_success_at < t.now - interval '1 second')
  RETURNING e.id, e.app_id, e.breaker_state, e.consecutive_failures, e.breaker_open_until,
            e.breaker_changed_at = t.now AS breaker_changed,
            e.failing_since IS NOT NULL
            AND e.failing_since <= t.now - ${r.auto_disable_after_ms} * interval '1 millisecond' AS should_disable,
            e.failing_since
)
SELECT 'delivery' AS kind, u.id::text AS id, u.app_id, u.state, u.endpoint_id, u.message_id, u.dead_reason,
       NULL::int AS consecutive_failures, NULL::boolean AS breaker_changed, NULL::boolean AS should_disable,
       NULL::timestamptz AS failing_since, NULL::timestamptz AS breaker_open_until,
       (extract(epoch FROM coalesce(${r.now}::timestamptz, clock_timestamp()) - u.published_at) * 1000)::float8
       AS since_publish_ms,
       (extract(epoch FROM coalesce(${r.now}::timestamptz, clock_timestamp()) - u.due_at) * 1000)::float8
       AS since_due_ms
FROM upd u
UNION ALL
SELECT 'endpoint', id, app_id, breaker_state, id, NULL, NULL, consecutive_failures, breaker_changed, should_disable,
       failing_since, breaker_open_until, NULL, NULL
FROM health`,
);

/*
 * INSERT_ENDPOINT_EVENT — one row of an endpoint's health history (a breaker opened or closed), written in the
 * record's transaction when the outcome rules ask for it (src/domain/outcome-rules.ts). $1 endpoint id,
 * $2 kind, $3 reason, $4 now.
 */
export const INSERT_ENDPOINT_EVENT = prepared(
  'tidings_insert_endpoint_event',
  'INSERT INTO endpoint_events (endpoint_id, kind, reason, at) VALUES ($1, $2, $3, coalesce($4::timestamptz, ' +
    'clock_timestamp()))',
);

/*
 * THROTTLE_ENDPOINT — a 429/503 with Retry-After holds the whole endpoint back until now + $2 ms
 * (never shortens an existing throttle). Atomic single-statement update. $1 endpoint id, $2 ms, $3 now.
 */
export const THROTTLE_ENDPOINT = prepared(
  'tidings_throttle_endpoint',
  `
UPDATE endpoints SET throttled_until = greatest(coalesce(throttled_until, '-infinity'),
  coalesce($3::timestamptz, clock_timestamp()) + $2 * interval '1 millisecond')
WHERE id = $1`,
);

/*
 * DISABLE_ENDPOINT — a 410 Gone or an auto-disable, in the record's transaction (an operator disables through
 * the endpoint store): the endpoint is disabled with a reason, and its pending
 * deliveries become skipped (kept for replay-missing), each with a timeline row. $1 endpoint id, $2 reason,
 * $3 now. Returns one row: `transitioned` (this statement made the active → disabled transition; false
 * when the endpoint was disabled already, by another 410 of the batch, an auto-disable, or a concurrent
 * transaction whose commit the row lock waited for) and `skipped` (deliveries skipped). The operational
 * event `endpoint.disabled` is published only when `transitioned` is true, so once per transition.
 */
export const DISABLE_ENDPOINT = prepared(
  'tidings_disable_endpoint',
  `
WITH ep AS (
  UPDATE endpoints SET status = 'disabled', status_reason = $2,
    status_changed_at = coalesce($3::timestamptz, clock_timestamp()),
                       updated_at = coalesce($3::timestamptz, clock_timestamp())
  WHERE id = $1 AND status <> 'disabled'
  RETURNING id
), ev_ep AS (
  INSERT INTO endpoint_events (endpoint_id, kind, reason, at) SELECT id, 'disabled', $2,
    coalesce($3::timestamptz, clock_timestamp()) FROM ep
), skipped AS (
  UPDATE deliveries d SET state = 'skipped', updated_at = coalesce($3::timestamptz, clock_timestamp())
  WHERE d.endpoint_id = $1 AND d.state = 'pending'
  RETURNING d.id
), ev AS (
  INSERT INTO delivery_events (delivery_id, state, reason, at) SELECT id, 'skipped', 'endpoint_disabled',
    coalesce($3::timestamptz, clock_timestamp()) FROM skipped
)
SELECT EXISTS (SELECT 1 FROM ep) AS transitioned, (SELECT count(*) FROM skipped)::int AS skipped`,
);
