-- tidings_claim — step 1 of the delivery protocol (docs/design.md#the-protocol): leases a batch of due
-- deliveries to one dispatcher in one call, with no BEGIN/COMMIT around it (docs/adr/0006-round-trips-and-wake-ups.md).
--
-- This file is a routine, not a migration: the migrator (src/adapters/postgres/migrator.ts) runs it after
-- the migrations, under the same advisory lock, whenever its checksum differs from the one recorded in
-- `tidings_routines`, so a change to the claim is an edit of this file. CREATE OR REPLACE cannot change the
-- parameter types, parameter names or result columns of an existing function: such a change defines a new
-- overload here, or, for a rename, a migration drops the old function first (as 1764000009200 did when the
-- dispatcher's id got one name; it also dropped the overloads that earlier migrations had created).
--
-- Parameters ($n in the body):
--   $1  p_dispatcher        the claiming dispatcher's id, written into dispatcher_id and the timeline row
--   $2  p_limit         most deliveries leased by this call
--   $3  p_lease_ms      lease length, ms (lease_expires_at = now + $3)
--   $4  p_now           the instant to use; NULL = the database clock (clock_timestamp()), a fixed instant
--                       under a test clock
--   $5  p_max_reclaims  an expired lease is reclaimed only while reclaim_count < $5 (the sweep in
--                       delivery-sql.ts dead-letters the others as lease_lost_repeatedly)
--   $6  p_exclude       endpoint ids the caller does not claim from (none of their rows is taken)
--   $7  p_share         most deliveries one endpoint may hold in the caller's window (TIDINGS_ENDPOINT_WINDOW_SHARE)
--   $8, $9  p_held_ids, p_held_n  the endpoints the caller holds in flight now and how many each (parallel
--                       arrays): an endpoint takes at most share − held, over due and reclaimed rows together
--   $10 p_answering     endpoints whose last attempt on this dispatcher got a status line
--   $11 p_unresponsive  endpoints whose last attempt ended without one (timeout, reset, refusal)
--   $12 p_budget        how many deliveries the endpoints not known to be answering may take together
--                       (the caller keeps TIDINGS_WINDOW_RESERVE of its window for answering endpoints); past
--                       it, an endpoint that holds nothing and is not known to be unresponsive still gets one
--                       (docs/adr/0009-window-share-within-a-claim.md)
--
-- Whether an endpoint takes work now (active, not deleted, not throttled: tidings_endpoint_accepting) and
-- whether it needs the gate (not tidings_endpoint_ungated) are the endpoint's functions of migration
-- 1764000010000, which the publish statement's hand-off reads too. The gate and rank steps this claim shares with
-- the claim by id (claim-ids.sql) are the functions of migration 1764000016000: claimable (accepting, no breaker
-- cool-down running), the gate's lock, the token bucket, the room of breaker, cap and bucket, the window's reserve
-- and whether an expired lease may be reclaimed. The planner inlines them all.
--
-- Step 1, the gate (its own query): endpoints whose claims must be serialized across dispatchers (an
-- in-flight cap, a rate limit, or a breaker that is not closed) and that have due work are locked with a
-- transaction-scoped advisory lock, try-only: an endpoint another dispatcher is claiming from right now is
-- skipped, as SKIP LOCKED skips rows. Endpoint rows themselves are never locked
-- (docs/adr/0004-endpoint-flow-control.md). The locks are held until the calling statement's transaction ends.
--
-- Step 2, the claim (a new query of a VOLATILE function, so a fresh snapshot: it sees every lease committed
-- before the gate's locks were taken):
-- - endpoints with due work (active, not deleted, not throttled, no breaker cool-down running, checked
--   again in this snapshot; ungated, or gated and locked by step 1)
--   are visited in random order, and each gets at most its fair part of the batch (ceil(limit / endpoints)),
--   its share of the caller's window, and its part of the budget;
-- - a gated endpoint's part is further limited by its in-flight cap (counted from live leased rows, never
--   a stored counter), its token bucket (rate_limit_per_s, burst), and its breaker: open or half-open
--   allows exactly one probe when nothing of the endpoint is in flight;
-- - each endpoint's due rows are read in due order and locked FOR UPDATE SKIP LOCKED (deliveries only);
--   expired leases of active endpoints with a closed breaker are reclaimed and counted (reclaim_count);
-- - the token buckets and the open → half-open transition of the endpoints claimed from are written in the
--   same query (gated endpoints only, under their advisory lock), with an endpoint_events row per probe.
-- Each claimed delivery gets state 'leased', dispatcher_id $1, lease_expires_at, fencing_token + 1 and one
-- timeline row (delivery_events, reason 'claimed' or 'reclaimed': docs/reference/timeline.md), stamped with its
-- application, endpoint, since_publish_ms and, when claimed, wait_ms (claim instant − next_attempt_at).
--
-- Rows returned: one per delivery leased — id, the new fencing_token, app_id, message_id, endpoint_id,
-- attempt_count (recorded attempts so far), manual (a resend), reclaimed (an expired lease taken over),
-- the message's event_type, payload, payload_key_id and content_type (NULL = JSON), and the endpoint's url,
-- headers, secret, secret_key_id, sensitive_headers, sensitive_headers_key and, while a rotation's grace
-- lasts, previous_secret and previous_secret_key_id (else NULL); and the delivery's retry_policy (the policy it was
-- created with, NULL = the installation's settings: migration 1764000012000).
--
-- Indexes: deliveries_endpoint_due (endpoint_id, next_attempt_at, id) WHERE state = 'pending' — the gate's
-- and the claim's "has due work" tests and each endpoint's due rows; deliveries_lease_expiry
-- (lease_expires_at, id) WHERE state = 'leased' — expired leases; deliveries_endpoint_leased (endpoint_id,
-- lease_expires_at) WHERE state = 'leased' — a gated endpoint's live leases; messages_pkey and
-- endpoints_pkey for the returned columns. The endpoints table is filtered on status without an index.

CREATE OR REPLACE FUNCTION tidings_claim(p_dispatcher text, p_limit integer, p_lease_ms integer, p_now timestamptz,
                              p_max_reclaims integer, p_exclude text[], p_share integer,
                              p_held_ids text[], p_held_n integer[], p_answering text[], p_unresponsive text[],
                              p_budget integer)
RETURNS TABLE (id bigint, fencing_token bigint, app_id text, message_id text, endpoint_id text, attempt_count integer,
               manual boolean, reclaimed boolean, event_type text, payload bytea, payload_key_id text,
               content_type text, url text,
               headers jsonb, secret bytea, secret_key_id text, sensitive_headers bytea, sensitive_headers_key text,
               previous_secret bytea, previous_secret_key_id text, retry_policy jsonb)
LANGUAGE plpgsql VOLATILE AS $claim$
#variable_conflict use_column
DECLARE
  v_gated text[];
  v_gate_at timestamptz := coalesce($4::timestamptz, clock_timestamp());
BEGIN
  v_gated := (
    SELECT coalesce(array_agg(gate.id), '{}') FROM (
    SELECT g.id FROM (
      SELECT e.id FROM endpoints e
      WHERE tidings_endpoint_claimable(e, v_gate_at) AND NOT tidings_endpoint_ungated(e)
        AND (SELECT d.id FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending'
             AND d.next_attempt_at <= v_gate_at ORDER BY d.next_attempt_at LIMIT 1) IS NOT NULL
      OFFSET 0
    ) g
    WHERE tidings_endpoint_gate_lock(g.id)
    ) gate
  );
  RETURN QUERY
  WITH t AS (
    SELECT coalesce($4::timestamptz, clock_timestamp()) AS now
  ), ep AS (
    SELECT e.id, e.max_in_flight, tidings_endpoint_tokens(e, t.now) AS tokens, e.breaker_state,
           e.id = ANY (v_gated) AS gated
    FROM endpoints e, t
    -- Claimable checked again in this snapshot: an outcome recorded since the gate read the row may have opened
    -- the breaker again for a new cool-down (its probe failed), and no probe may go out before it ends.
    WHERE tidings_endpoint_claimable(e, t.now)
      AND (tidings_endpoint_ungated(e) OR e.id = ANY (v_gated))
      AND NOT (e.id = ANY ($6::text[]))
      -- "Has due work" is the first due row in due order, not EXISTS: as a semi join, a planner whose
      -- statistics saw one endpoint with a backlog built a bitmap of every due row (of every endpoint) per
      -- endpoint probed; with LIMIT 1 in due order it reads an index until the first match
      -- (docs/adr/0016-hot-path-cost.md, decision 14).
      AND (SELECT d.id FROM deliveries d
           WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= t.now
           ORDER BY d.next_attempt_at LIMIT 1) IS NOT NULL
  ), share AS (
    SELECT greatest(1, ceil($2::numeric / greatest(count(*), 1)))::int AS per_endpoint FROM ep
  ), bucket AS (
    SELECT ep.*, s.per_endpoint, f.live
    FROM ep CROSS JOIN share s CROSS JOIN t
    LEFT JOIN LATERAL (
      SELECT count(*)::int AS live FROM deliveries l
      WHERE ep.gated AND l.endpoint_id = ep.id AND l.state = 'leased' AND l.lease_expires_at > t.now
    ) f ON true
  ), held AS (
    SELECT h.id, h.n FROM unnest($8::text[], $9::int[]) AS h(id, n)
  ), wanted AS (
    SELECT b.id, b.gated, b.breaker_state, b.tokens, random() AS turn, coalesce(h.n, 0) AS held,
           b.id = ANY ($10::text[]) AS answering, b.id = ANY ($11::text[]) AS unresponsive,
           least(tidings_endpoint_room(b.breaker_state, b.max_in_flight, b.tokens, b.live, b.per_endpoint),
                 greatest(0, $7 - coalesce(h.n, 0))) AS n
    FROM bucket b LEFT JOIN held h ON h.id = b.id
  ), allow AS (
    -- Endpoints not known to be answering share the budget, in turn order; past it, one that holds nothing
    -- and is not known to be unresponsive still gets one delivery (its first attempt proves it).
    SELECT w.id, w.gated, w.breaker_state, w.tokens, w.turn,
           tidings_window_allowance(w.n, w.answering, w.held, w.unresponsive, $12,
                                    sum(w.n) OVER (PARTITION BY w.answering ORDER BY w.turn
                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS n
    FROM wanted w
  ), due AS (
    SELECT d.id, d.endpoint_id, 'pending'::text AS previous_state
    FROM (SELECT * FROM allow WHERE n > 0 ORDER BY turn) a
    CROSS JOIN LATERAL (
      SELECT d.id, d.endpoint_id FROM deliveries d
      WHERE d.endpoint_id = a.id AND d.state = 'pending' AND d.next_attempt_at <= (SELECT now FROM t)
      ORDER BY d.next_attempt_at, d.id
      LIMIT a.n
      FOR UPDATE OF d SKIP LOCKED
    ) d
    LIMIT $2
  ), expired AS (
    -- The endpoint is tested per row by a scalar subquery, not joined: as a join, a planner whose statistics
    -- saw nothing leased read every expired lease through deliveries_endpoint_leased, endpoint by endpoint,
    -- and sorted them all before the LIMIT; with one table to order, the plan is an ordered read of
    -- deliveries_lease_expiry that stops at the LIMIT once the table has statistics
    -- (docs/adr/0016-hot-path-cost.md, decision 15).
    SELECT d.id, d.endpoint_id, 'leased'::text AS previous_state FROM deliveries d
    WHERE d.state = 'leased' AND d.lease_expires_at <= (SELECT now FROM t) AND d.reclaim_count < $5
      AND (SELECT tidings_endpoint_reclaimable(e) FROM endpoints e WHERE e.id = d.endpoint_id)
    ORDER BY d.lease_expires_at, d.id
    LIMIT $2
    FOR UPDATE OF d SKIP LOCKED
  ), picked AS (
    -- The share holds over reclaimed and due rows together: at most share − held per endpoint.
    SELECT c.id, c.endpoint_id, c.previous_state FROM (
      SELECT u.*, row_number() OVER (PARTITION BY u.endpoint_id ORDER BY u.previous_state = 'leased' DESC, u.id) AS rank
      FROM (SELECT * FROM expired UNION ALL SELECT * FROM due) u
    ) c LEFT JOIN held h ON h.id = c.endpoint_id
    WHERE c.rank <= $7 - coalesce(h.n, 0)
    ORDER BY c.previous_state = 'leased' DESC
    LIMIT $2
  ), gated_update AS (
    UPDATE endpoints e
    SET rate_tokens = CASE WHEN a.tokens IS NOT NULL THEN a.tokens - c.n ELSE e.rate_tokens END,
        rate_refilled_at = CASE WHEN a.tokens IS NOT NULL THEN t.now ELSE e.rate_refilled_at END,
        breaker_state = CASE WHEN a.breaker_state = 'open' THEN 'half_open' ELSE e.breaker_state END,
        breaker_changed_at = CASE WHEN a.breaker_state = 'open' THEN t.now ELSE e.breaker_changed_at END
    FROM allow a JOIN (SELECT endpoint_id, count(*)::int AS n FROM picked WHERE previous_state = 'pending' GROUP BY 1) c
      ON c.endpoint_id = a.id, t
    WHERE e.id = a.id AND a.gated AND (a.tokens IS NOT NULL OR a.breaker_state = 'open')
    RETURNING e.id, a.breaker_state = 'open' AS probing
  ), probe_events AS (
    INSERT INTO endpoint_events (endpoint_id, kind, reason, at)
    SELECT g.id, 'breaker_half_open', 'cool-down elapsed: one probe', t.now FROM gated_update g, t WHERE g.probing
  ), claimed AS (
    UPDATE deliveries d
    SET state = 'leased', dispatcher_id = $1,
        lease_expires_at = t.now + $3 * interval '1 millisecond',
        fencing_token = d.fencing_token + 1,
        reclaim_count = d.reclaim_count + CASE WHEN picked.previous_state = 'leased' THEN 1 ELSE 0 END,
        updated_at = t.now
    FROM picked, t WHERE d.id = picked.id
    RETURNING d.id, d.fencing_token, d.app_id, d.message_id, d.endpoint_id, d.attempt_count, d.manual,
              picked.previous_state, d.created_at, d.next_attempt_at, d.retry_policy
  ), logged AS (
    -- Stamped here with the formulas of the stamp trigger (migration 1764000008000), which then does not run
    -- (docs/adr/0016-hot-path-cost.md, decision 10).
    INSERT INTO delivery_events (delivery_id, state, dispatcher_id, fencing_token, reason, at, app_id, endpoint_id,
      since_publish_ms, wait_ms)
    SELECT id, 'leased', $1, fencing_token,
           CASE WHEN previous_state = 'leased' THEN 'reclaimed' ELSE 'claimed' END, t.now,
           app_id, endpoint_id, greatest(0, round(extract(epoch FROM t.now - created_at) * 1000))::bigint,
           CASE WHEN previous_state = 'pending' AND next_attempt_at <> 'infinity'
                THEN greatest(0, round(extract(epoch FROM t.now - next_attempt_at) * 1000))::bigint END
    FROM claimed, t
  )
  SELECT c.id, c.fencing_token, c.app_id, c.message_id, c.endpoint_id, c.attempt_count, c.manual,
         c.previous_state = 'leased' AS reclaimed,
         m.event_type, m.payload, m.payload_key_id, m.content_type,
         e.url, e.headers, e.secret, e.secret_key_id, e.sensitive_headers, e.sensitive_headers_key,
         CASE WHEN e.previous_secret_until > (SELECT now FROM t) THEN e.previous_secret END AS previous_secret,
         e.previous_secret_key_id, c.retry_policy
  FROM claimed c JOIN messages m ON m.id = c.message_id JOIN endpoints e ON e.id = c.endpoint_id;
END
$claim$;
