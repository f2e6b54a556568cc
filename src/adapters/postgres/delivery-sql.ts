/*
 * The hot-path statements of the delivery protocol (DESIGN §2). Each is a constant with its purpose,
 * parameters, rows returned and the index it reads. `now` parameters are NULL in production (the database
 * clock, clock_timestamp()) and a fixed instant under a test clock.
 */

/*
 * SWEEP — housekeeping of expired leases that the claim must not take, in one statement:
 * (1) leases reclaimed `maxReclaims` times without any recorded outcome are dead-lettered with reason
 *     `lease_lost_repeatedly` (a payload that crashes dispatchers must not loop forever);
 * (2) expired leases of endpoints that are no longer active are settled: deleted → canceled (no request is
 *     ever sent after deletion), disabled → skipped, paused → pending at 'infinity' (held until resumed).
 * The two sets are disjoint (active vs not active endpoints). Each change appends a timeline row.
 * $1 max reclaims, $2 now, $3 batch limit. Returns one row per change with the new state.
 * Index: deliveries_lease_expiry.
 */
export const SWEEP = `
WITH lost AS (
  SELECT d.id FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
  WHERE d.state = 'leased' AND d.lease_expires_at <= coalesce($2::timestamptz, clock_timestamp()) AND d.reclaim_count >= $1
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
  SET state = 'dead', dead_reason = 'lease_lost_repeatedly', lease_owner = NULL, lease_expires_at = NULL,
      manual = false, manual_return = NULL, updated_at = coalesce($2::timestamptz, clock_timestamp())
  FROM lost WHERE d.id = lost.id
  RETURNING d.id, d.state, d.fencing_token, 'lease_lost_repeatedly' AS reason
), settled AS (
  UPDATE deliveries d
  SET state = CASE WHEN o.deleted THEN 'canceled' WHEN o.status = 'disabled' THEN 'skipped' ELSE 'pending' END,
      next_attempt_at = CASE WHEN NOT o.deleted AND o.status = 'paused' THEN 'infinity'::timestamptz ELSE d.next_attempt_at END,
      lease_owner = NULL, lease_expires_at = NULL, manual = false, manual_return = NULL,
      updated_at = coalesce($2::timestamptz, clock_timestamp())
  FROM orphans o WHERE d.id = o.id
  RETURNING d.id, d.state, d.fencing_token,
            CASE WHEN o.deleted THEN 'endpoint_deleted' WHEN o.status = 'disabled' THEN 'endpoint_disabled' ELSE 'endpoint_paused' END AS reason
), changed AS (
  SELECT * FROM dead UNION ALL SELECT * FROM settled
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, fencing_token, reason, at)
  SELECT id, state, fencing_token, reason, coalesce($2::timestamptz, clock_timestamp()) FROM changed
)
SELECT id, state, reason FROM changed`;

/*
 * CLAIM — leases up to $2 due deliveries for worker $1 in one statement: pending with
 * next_attempt_at ≤ now (index deliveries_due, read in its own order), or leased with an expired lease
 * (index deliveries_lease_expiry: the reclaim branch is the whole crash recovery). Rows are locked with
 * FOR UPDATE SKIP LOCKED on deliveries only — endpoint rows are read, never locked. Deliveries of
 * endpoints that are not active, or that are throttled, are left alone. Each claim bumps the fencing token,
 * counts a reclaim, and appends a timeline row; the message payload and the endpoint's URL, secrets and
 * headers are returned with it so the attempt needs no further read.
 * $1 worker id, $2 limit, $3 lease ms, $4 now, $5 max reclaims.
 */
export const CLAIM = `
WITH due AS (
  SELECT d.id, d.state FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
  WHERE d.state = 'pending' AND d.next_attempt_at <= coalesce($4::timestamptz, clock_timestamp())
    AND e.status = 'active' AND e.deleted_at IS NULL
    AND (e.throttled_until IS NULL OR e.throttled_until <= coalesce($4::timestamptz, clock_timestamp()))
  ORDER BY d.next_attempt_at, d.id
  LIMIT $2
  FOR UPDATE OF d SKIP LOCKED
), expired AS (
  SELECT d.id, d.state FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
  WHERE d.state = 'leased' AND d.lease_expires_at <= coalesce($4::timestamptz, clock_timestamp()) AND d.reclaim_count < $5
    AND e.status = 'active' AND e.deleted_at IS NULL
  ORDER BY d.lease_expires_at, d.id
  LIMIT $2
  FOR UPDATE OF d SKIP LOCKED
), candidates AS (
  SELECT id, state FROM expired UNION ALL SELECT id, state FROM due
), picked AS (
  SELECT id, state AS previous_state FROM candidates LIMIT $2
), claimed AS (
  UPDATE deliveries d
  SET state = 'leased', lease_owner = $1,
      lease_expires_at = coalesce($4::timestamptz, clock_timestamp()) + $3 * interval '1 millisecond',
      fencing_token = d.fencing_token + 1,
      reclaim_count = d.reclaim_count + CASE WHEN picked.previous_state = 'leased' THEN 1 ELSE 0 END,
      updated_at = coalesce($4::timestamptz, clock_timestamp())
  FROM picked WHERE d.id = picked.id
  RETURNING d.id, d.fencing_token, d.app_id, d.message_id, d.endpoint_id, d.attempt_count, d.manual, picked.previous_state
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, worker_id, fencing_token, reason, at)
  SELECT id, 'leased', $1, fencing_token, CASE WHEN previous_state = 'leased' THEN 'reclaimed' ELSE 'claimed' END,
         coalesce($4::timestamptz, clock_timestamp())
  FROM claimed
)
SELECT c.id, c.fencing_token, c.app_id, c.message_id, c.endpoint_id, c.attempt_count, c.manual,
       c.previous_state = 'leased' AS reclaimed,
       m.event_type, m.payload, m.payload_key_id,
       e.url, e.headers, e.secret, e.secret_key_id, e.sensitive_headers, e.sensitive_headers_key,
       CASE WHEN e.previous_secret_until > coalesce($4::timestamptz, clock_timestamp()) THEN e.previous_secret END AS previous_secret,
       e.previous_secret_key_id
FROM claimed c JOIN messages m ON m.id = c.message_id JOIN endpoints e ON e.id = c.endpoint_id`;

/*
 * EXTEND_LEASES — the heartbeat: renews every lease of the batch whose (id, fencing token, owner) still
 * match. $1 ids, $2 tokens, $3 owner, $4 lease ms, $5 now. Returns the ids renewed (the rest are lost).
 */
export const EXTEND_LEASES = `
UPDATE deliveries d
SET lease_expires_at = coalesce($5::timestamptz, clock_timestamp()) + $4 * interval '1 millisecond'
FROM unnest($1::bigint[], $2::bigint[]) AS l(id, token)
WHERE d.id = l.id AND d.fencing_token = l.token AND d.lease_owner = $3 AND d.state = 'leased'
RETURNING d.id`;

/*
 * RELEASE_LEASES — graceful stop: gives leases back without charging an attempt; the deliveries are due
 * now. Fenced like every write. $1 ids, $2 tokens, $3 owner, $4 now. Returns the ids released.
 */
export const RELEASE_LEASES = `
WITH released AS (
  UPDATE deliveries d
  SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL,
      next_attempt_at = coalesce($4::timestamptz, clock_timestamp()), updated_at = coalesce($4::timestamptz, clock_timestamp())
  FROM unnest($1::bigint[], $2::bigint[]) AS l(id, token)
  WHERE d.id = l.id AND d.fencing_token = l.token AND d.lease_owner = $3 AND d.state = 'leased'
  RETURNING d.id, d.fencing_token
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, worker_id, fencing_token, reason, at)
  SELECT id, 'pending', $3, fencing_token, 'released', coalesce($4::timestamptz, clock_timestamp()) FROM released
)
SELECT id FROM released`;

/*
 * RECORD_ATTEMPTS — step 3 of the protocol for a batch of outcomes, in one statement (one transaction):
 * every row is guarded by (id, fencing token, owner, state = 'leased'). A fenced-out row matches nothing in
 * `upd`, so no attempt and no timeline row is written for it; the other rows are unaffected. A failed
 * resend (manual) returns the delivery to the state it had before the resend.
 * Parameters are parallel arrays ($1 … $17, see the unnest list) plus $18 now. Returns the ids recorded.
 */
export const RECORD_ATTEMPTS = `
WITH o AS (
  SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[],
                       $8::int[], $9::text[], $10::text[], $11::bool[], $12::int[], $13::text[], $14::text[],
                       $15::text[], $16::text[], $17::int[])
    AS o(id, token, worker, next_state, delay_ms, dead_reason, attempt_id, attempt_number, trig, url, succeeded,
         status, body, location, error_kind, error_detail, duration_ms)
), ep AS (
  -- The endpoint may have been deleted, disabled or paused while the attempt was in flight.
  SELECT DISTINCT e.id, e.status, e.deleted_at IS NOT NULL AS deleted
  FROM endpoints e JOIN deliveries d ON d.endpoint_id = e.id JOIN o ON o.id = d.id
), upd AS (
  UPDATE deliveries d
  SET state = CASE WHEN o.next_state = 'succeeded' THEN 'succeeded'
                   WHEN ep.deleted THEN 'canceled'
                   WHEN o.next_state = 'dead' AND d.manual AND d.manual_return IS NOT NULL THEN d.manual_return
                   WHEN o.next_state = 'pending' AND ep.status = 'disabled' THEN 'skipped'
                   ELSE o.next_state END,
      next_attempt_at = CASE WHEN o.next_state = 'pending' AND ep.status = 'paused' THEN 'infinity'::timestamptz
                             WHEN o.next_state = 'pending'
                             THEN coalesce($18::timestamptz, clock_timestamp()) + o.delay_ms * interval '1 millisecond'
                             ELSE d.next_attempt_at END,
      dead_reason = CASE WHEN o.next_state = 'dead' AND NOT (d.manual AND d.manual_return IS NOT NULL) THEN o.dead_reason ELSE d.dead_reason END,
      attempt_count = d.attempt_count + 1,
      lease_owner = NULL, lease_expires_at = NULL, reclaim_count = 0, manual = false, manual_return = NULL,
      last_status_code = o.status, last_error_kind = o.error_kind,
      last_attempt_at = coalesce($18::timestamptz, clock_timestamp()), updated_at = coalesce($18::timestamptz, clock_timestamp())
  FROM o, ep
  WHERE d.id = o.id AND ep.id = d.endpoint_id AND d.fencing_token = o.token AND d.lease_owner = o.worker AND d.state = 'leased'
  RETURNING d.id, d.state, d.app_id, d.message_id, d.endpoint_id, d.dead_reason
), att AS (
  INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger, succeeded,
                        response_status_code, response_body, response_location, error_kind, error_detail, url,
                        duration_ms, worker_id, fencing_token, created_at)
  SELECT o.attempt_id, o.id, upd.app_id, upd.message_id, upd.endpoint_id, o.attempt_number, o.trig, o.succeeded,
         o.status, o.body, o.location, o.error_kind, o.error_detail, o.url, o.duration_ms, o.worker, o.token,
         coalesce($18::timestamptz, clock_timestamp())
  FROM o JOIN upd ON upd.id = o.id
), ev AS (
  INSERT INTO delivery_events (delivery_id, state, worker_id, fencing_token, status_code, latency_ms, error_kind, reason, at)
  SELECT o.id, upd.state, o.worker, o.token, o.status, o.duration_ms, o.error_kind,
         CASE WHEN upd.state = 'dead' THEN upd.dead_reason WHEN upd.state = 'pending' THEN 'retry_scheduled'
              WHEN upd.state = 'canceled' THEN 'endpoint_deleted' WHEN upd.state = 'skipped' AND o.next_state = 'pending' THEN 'endpoint_disabled'
              WHEN o.trig = 'manual' THEN 'resent' END,
         coalesce($18::timestamptz, clock_timestamp())
  FROM o JOIN upd ON upd.id = o.id
)
SELECT id, state, endpoint_id, dead_reason FROM upd`;

/*
 * THROTTLE_ENDPOINT — a 429/503 with Retry-After holds the whole endpoint back until now + $2 ms
 * (never shortens an existing throttle). Atomic single-statement update. $1 endpoint id, $2 ms, $3 now.
 */
export const THROTTLE_ENDPOINT = `
UPDATE endpoints SET throttled_until = greatest(coalesce(throttled_until, '-infinity'), coalesce($3::timestamptz, clock_timestamp()) + $2 * interval '1 millisecond')
WHERE id = $1`;

/*
 * DISABLE_ENDPOINT — 410 Gone (or an operator): the endpoint is disabled with a reason, and its pending
 * deliveries become skipped (kept for replay-missing), each with a timeline row. $1 endpoint id, $2 reason,
 * $3 now. Returns the skipped delivery ids.
 */
export const DISABLE_ENDPOINT = `
WITH ep AS (
  UPDATE endpoints SET status = 'disabled', status_reason = $2, status_changed_at = coalesce($3::timestamptz, clock_timestamp()),
                       updated_at = coalesce($3::timestamptz, clock_timestamp())
  WHERE id = $1 AND status <> 'disabled'
  RETURNING id
), ev_ep AS (
  INSERT INTO endpoint_events (endpoint_id, kind, reason, at) SELECT id, 'disabled', $2, coalesce($3::timestamptz, clock_timestamp()) FROM ep
), skipped AS (
  UPDATE deliveries d SET state = 'skipped', updated_at = coalesce($3::timestamptz, clock_timestamp())
  WHERE d.endpoint_id = $1 AND d.state = 'pending'
  RETURNING d.id
), ev AS (
  INSERT INTO delivery_events (delivery_id, state, reason, at) SELECT id, 'skipped', 'endpoint_disabled', coalesce($3::timestamptz, clock_timestamp()) FROM skipped
)
SELECT id FROM skipped`;
