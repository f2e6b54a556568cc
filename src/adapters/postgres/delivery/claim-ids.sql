-- tidings_claim_ids — step 1 of the delivery protocol for a broker transport (docs/guides/transports.md): the claim
-- of claim.sql restricted to the delivery ids that broker messages carried, with the same gates, so that a duplicate
-- or redelivered id leases nothing twice. One call, no BEGIN/COMMIT around it. A routine like claim.sql (re-applied by
-- checksum, src/adapters/postgres/routines.ts); only a broker transport calls it.
--
-- Parameters ($n in the body), as tidings_claim's but $2:
--   $1  p_dispatcher    the claiming dispatcher's id
--   $2  p_ids           the delivery ids to lease (bigint[]); each is leased at most once by this call
--   $3  p_lease_ms      lease length, ms
--   $4  p_now           the instant to use; NULL = the database clock
--   $5  p_max_reclaims  an expired lease is reclaimed only while reclaim_count < $5
--   $6  p_exclude       endpoint ids the caller does not claim from now (their share of its window is used up)
--   $7  p_share         most deliveries one endpoint may hold in the caller's window
--   $8, $9  p_held_ids, p_held_n  what the caller holds in flight per endpoint
--   $10 p_answering, $11 p_unresponsive, $12 p_budget   the reserve for answering endpoints (ADR 0009)
--
-- The gate and rank steps are the functions of migration 1764000016000 that tidings_claim reads too (claimable, the
-- gate's lock, the token bucket, the room of breaker, cap and bucket, the window's reserve, reclaimable), inlined.
-- Step 1, the gate: the endpoints of the given ids that are due and need the gate (an in-flight cap, a rate limit,
-- a breaker not closed) are locked with a try-only advisory lock, as in tidings_claim, so that caps, token buckets
-- and probes hold across every dispatcher and every source.
-- Step 2, the claim: as tidings_claim's, over the given ids only (an endpoint's part is not cut to a fair part of
-- the batch: the ids are the batch). Leased rows get the same lease, fencing token, reclaim count, token-bucket and
-- half-open writes and timeline rows.
--
-- Rows returned: one per given id that exists. `outcome` says what became of it:
--   leased   leased by this call; the other columns as tidings_claim returns them (retry_policy included);
--   not_due  nothing to lease: the row is not due (a future retry, paused, leased and live, settled), or an
--            expired lease reclaimed too often (the sweep dead-letters it): a later due instant publishes it again;
--   gated    its endpoint takes nothing now (not active, throttled, breaker cool-down, at its cap, no token, its gate
--            held by another dispatcher's claim): the row's broker stamp is cleared in this call, so the outbox
--            publishes it again once its endpoint's gate lets it (src/adapters/postgres/delivery/broker-outbox-sql.ts);
--   window   the caller's window holds no room for its endpoint now (excluded, share, budget): the caller may keep
--            the message and offer the id again when room frees;
--   busy     the row was locked by another statement (a claim, a record, a stamp) and skipped.
-- Every column but id, endpoint_id and outcome is NULL unless leased.
--
-- Indexes: deliveries_pkey for the given ids; deliveries_endpoint_leased for a gated endpoint's live leases;
-- messages_pkey and endpoints_pkey for the returned columns.

CREATE OR REPLACE FUNCTION tidings_claim_ids(p_dispatcher text, p_ids bigint[], p_lease_ms integer, p_now timestamptz,
                                  p_max_reclaims integer, p_exclude text[], p_share integer,
                                  p_held_ids text[], p_held_n integer[], p_answering text[], p_unresponsive text[],
                                  p_budget integer)
RETURNS TABLE (outcome text, id bigint, fencing_token bigint, app_id text, message_id text, endpoint_id text,
               attempt_count integer, manual boolean, reclaimed boolean, event_type text, payload bytea,
               payload_key_id text, content_type text, url text, headers jsonb, secret bytea, secret_key_id text,
               sensitive_headers bytea, sensitive_headers_key text, previous_secret bytea, previous_secret_key_id text,
               retry_policy jsonb)
LANGUAGE plpgsql VOLATILE AS $claim_ids$
#variable_conflict use_column
DECLARE
  v_gated text[];
  v_gate_at timestamptz := coalesce($4::timestamptz, clock_timestamp());
BEGIN
  v_gated := (
    SELECT coalesce(array_agg(gate.id), '{}') FROM (
    SELECT g.id FROM (
      SELECT e.id FROM endpoints e
      WHERE e.id IN (SELECT d.endpoint_id FROM deliveries d WHERE d.id = ANY ($2::bigint[]) AND d.state = 'pending'
                     AND d.next_attempt_at <= v_gate_at)
        AND tidings_endpoint_claimable(e, v_gate_at) AND NOT tidings_endpoint_ungated(e)
        AND NOT (e.id = ANY ($6::text[]))
      OFFSET 0
    ) g
    WHERE tidings_endpoint_gate_lock(g.id)
    ) gate
  );
  RETURN QUERY
  WITH t AS (
    SELECT coalesce($4::timestamptz, clock_timestamp()) AS now
  ), given AS (
    SELECT d.id, d.endpoint_id, d.state, d.reclaim_count,
           (d.state = 'pending' AND d.next_attempt_at <= t.now) AS due,
           (d.state = 'leased' AND d.lease_expires_at <= t.now) AS expired,
           row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS rank
    FROM deliveries d, t WHERE d.id = ANY ($2::bigint[])
  ), ep AS (
    SELECT e.id, e.max_in_flight, tidings_endpoint_tokens(e, t.now) AS tokens, e.breaker_state,
           e.id = ANY (v_gated) AS gated
    FROM endpoints e, t
    WHERE e.id IN (SELECT g.endpoint_id FROM given g WHERE g.due)
      AND tidings_endpoint_claimable(e, t.now)
      AND (tidings_endpoint_ungated(e) OR e.id = ANY (v_gated))
      AND NOT (e.id = ANY ($6::text[]))
  ), bucket AS (
    SELECT ep.*, f.live
    FROM ep CROSS JOIN t
    LEFT JOIN LATERAL (
      SELECT count(*)::int AS live FROM deliveries l
      WHERE ep.gated AND l.endpoint_id = ep.id AND l.state = 'leased' AND l.lease_expires_at > t.now
    ) f ON true
  ), held AS (
    SELECT h.id, h.n FROM unnest($8::text[], $9::int[]) AS h(id, n)
  ), wanted AS (
    -- gate_n: what the endpoint's breaker, cap and bucket allow; n: that within the caller's share as well.
    SELECT b.id, b.gated, b.breaker_state, b.tokens, random() AS turn, coalesce(h.n, 0) AS held,
           b.id = ANY ($10::text[]) AS answering, b.id = ANY ($11::text[]) AS unresponsive, g.gate_n,
           least(g.gate_n, greatest(0, $7 - coalesce(h.n, 0))) AS n
    FROM bucket b LEFT JOIN held h ON h.id = b.id
    CROSS JOIN LATERAL (
      SELECT tidings_endpoint_room(b.breaker_state, b.max_in_flight, b.tokens, b.live,
                                   cardinality($2::bigint[])) AS gate_n
    ) g
  ), allow AS (
    SELECT w.id, w.gated, w.breaker_state, w.tokens, w.turn, w.gate_n,
           tidings_window_allowance(w.n, w.answering, w.held, w.unresponsive, $12,
                                    sum(w.n) OVER (PARTITION BY w.answering ORDER BY w.turn
                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS n
    FROM wanted w
  ), due AS (
    SELECT d.id, d.endpoint_id, 'pending'::text AS previous_state
    FROM (SELECT * FROM allow WHERE n > 0 ORDER BY turn) a
    CROSS JOIN LATERAL (
      SELECT d.id, d.endpoint_id FROM deliveries d
      WHERE d.id = ANY ($2::bigint[]) AND d.endpoint_id = a.id AND d.state = 'pending'
        AND d.next_attempt_at <= (SELECT now FROM t)
      ORDER BY d.next_attempt_at, d.id
      LIMIT a.n
      FOR UPDATE OF d SKIP LOCKED
    ) d
  ), expired AS (
    SELECT d.id, d.endpoint_id, 'leased'::text AS previous_state FROM deliveries d
    WHERE d.id = ANY ($2::bigint[]) AND d.state = 'leased' AND d.lease_expires_at <= (SELECT now FROM t)
      AND d.reclaim_count < $5 AND NOT (d.endpoint_id = ANY ($6::text[]))
      AND (SELECT tidings_endpoint_reclaimable(e) FROM endpoints e WHERE e.id = d.endpoint_id)
    FOR UPDATE OF d SKIP LOCKED
  ), picked AS (
    SELECT c.id, c.endpoint_id, c.previous_state FROM (
      SELECT u.*, row_number() OVER (PARTITION BY u.endpoint_id ORDER BY u.previous_state = 'leased' DESC, u.id) AS rank
      FROM (SELECT * FROM expired UNION ALL SELECT * FROM due) u
    ) c LEFT JOIN held h ON h.id = c.endpoint_id
    WHERE c.rank <= $7 - coalesce(h.n, 0)
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
    INSERT INTO delivery_events (delivery_id, state, dispatcher_id, fencing_token, reason, at, app_id, endpoint_id,
                                 since_publish_ms, wait_ms)
    SELECT id, 'leased', $1, fencing_token, CASE WHEN previous_state = 'leased' THEN 'reclaimed' ELSE 'claimed' END,
           t.now, app_id, endpoint_id, greatest(0, round(extract(epoch FROM t.now - created_at) * 1000))::bigint,
           CASE WHEN previous_state = 'pending' AND next_attempt_at <> 'infinity'
                THEN greatest(0, round(extract(epoch FROM t.now - next_attempt_at) * 1000))::bigint END
    FROM claimed, t
  ), verdict AS (
    -- Why a given id was not leased (see the header); picked ids are 'leased'.
    SELECT g.id, g.endpoint_id, CASE
      WHEN NOT (g.due OR g.expired) OR (g.expired AND g.reclaim_count >= $5) THEN 'not_due'
      WHEN g.endpoint_id = ANY ($6::text[]) THEN 'window'
      WHEN g.expired THEN CASE WHEN (SELECT tidings_endpoint_reclaimable(e) FROM endpoints e WHERE e.id = g.endpoint_id)
                               THEN 'window' ELSE 'gated' END
      WHEN a.id IS NULL OR g.rank > a.gate_n THEN 'gated'
      WHEN g.rank > a.n THEN 'window'
      ELSE 'busy' END AS outcome
    FROM given g LEFT JOIN allow a ON a.id = g.endpoint_id
    WHERE NOT EXISTS (SELECT 1 FROM picked p WHERE p.id = g.id)
  ), forgotten AS (
    -- A gated id's message is acknowledged unleased: its stamp goes, and the outbox publishes it when its gate lets it.
    UPDATE deliveries d SET broker_published_at = NULL
    FROM verdict v WHERE d.id = v.id AND v.outcome = 'gated' AND d.state = 'pending'
      AND d.broker_published_at IS NOT NULL
  )
  SELECT 'leased'::text, c.id, c.fencing_token, c.app_id, c.message_id, c.endpoint_id, c.attempt_count, c.manual,
         c.previous_state = 'leased' AS reclaimed,
         m.event_type, m.payload, m.payload_key_id, m.content_type,
         e.url, e.headers, e.secret, e.secret_key_id, e.sensitive_headers, e.sensitive_headers_key,
         CASE WHEN e.previous_secret_until > (SELECT now FROM t) THEN e.previous_secret END AS previous_secret,
         e.previous_secret_key_id, c.retry_policy
  FROM claimed c JOIN messages m ON m.id = c.message_id JOIN endpoints e ON e.id = c.endpoint_id
  UNION ALL
  SELECT v.outcome, v.id, NULL::bigint, NULL::text, NULL::text, v.endpoint_id, NULL::integer, NULL::boolean,
         NULL::boolean, NULL::text, NULL::bytea, NULL::text, NULL::text, NULL::text, NULL::jsonb, NULL::bytea,
         NULL::text, NULL::bytea, NULL::text, NULL::bytea, NULL::text, NULL::jsonb
  FROM verdict v;
END
$claim_ids$;
