-- Up Migration
-- The dispatcher's window within one claim (docs/adr/0009-window-share-within-a-claim.md). The claim
-- function of migrations/1764000004000_claim-function.sql gains the dispatcher's view of its own window, so
-- that the share of each endpoint holds inside one claim and not only before it:
--
-- $8  share: most deliveries one endpoint may hold in the caller's window (TIDINGS_ENDPOINT_WINDOW_SHARE);
-- $9, $10  the endpoints the caller holds in flight now and how many each (parallel arrays): an endpoint may
--          take at most share − held in this claim, counted over due and reclaimed rows together;
-- $11 endpoints known to be answering (their last attempt on this dispatcher got a status line);
-- $12 endpoints known to be unresponsive (their last attempt ended without one: timeout, reset, refusal);
-- $13 budget: how many deliveries the endpoints not known to be answering may take together in this
--     claim (the caller keeps TIDINGS_WINDOW_RESERVE of its window for answering endpoints). Beyond the
--     budget, an endpoint that holds nothing and is not known to be unresponsive still gets one delivery:
--     the first attempt that can prove it answers.
--
-- Everything else is the statement of 1764000005000 (1764000004000 with the message's content type),
-- unchanged. The function of 1764000005000 (seven parameters) is kept, so that a dispatcher of the previous
-- version keeps claiming during a rolling upgrade.

CREATE OR REPLACE FUNCTION tidings_claim(p_worker text, p_limit integer, p_lease_ms integer, p_now timestamptz,
                              p_max_reclaims integer, p_gated text[], p_exclude text[], p_share integer,
                              p_held_ids text[], p_held_n integer[], p_answering text[], p_unresponsive text[],
                              p_budget integer)
RETURNS TABLE (id bigint, fencing_token bigint, app_id text, message_id text, endpoint_id text, attempt_count integer,
               manual boolean, reclaimed boolean, event_type text, payload bytea, payload_key_id text, content_type text, url text,
               headers jsonb, secret bytea, secret_key_id text, sensitive_headers bytea, sensitive_headers_key text,
               previous_secret bytea, previous_secret_key_id text)
LANGUAGE plpgsql VOLATILE AS $claim$
#variable_conflict use_column
BEGIN
  p_gated := (
    SELECT coalesce(array_agg(gate.id), '{}') FROM (
    SELECT g.id FROM (
      SELECT e.id FROM endpoints e
      WHERE e.status = 'active' AND e.deleted_at IS NULL
        AND (e.max_in_flight IS NOT NULL OR e.rate_limit_per_s IS NOT NULL OR e.breaker_state <> 'closed')
        AND (e.breaker_state <> 'open' OR e.breaker_open_until <= coalesce($4::timestamptz, clock_timestamp()))
        AND (e.throttled_until IS NULL OR e.throttled_until <= coalesce($4::timestamptz, clock_timestamp()))
        AND EXISTS (SELECT 1 FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending'
                    AND d.next_attempt_at <= coalesce($4::timestamptz, clock_timestamp()))
      OFFSET 0
    ) g
    WHERE pg_try_advisory_xact_lock(1953064039, hashtext(g.id))
    ) gate
  );
  RETURN QUERY
  WITH t AS (
    SELECT coalesce($4::timestamptz, clock_timestamp()) AS now
  ), ep AS (
    SELECT e.id, e.max_in_flight, e.rate_limit_per_s, coalesce(e.rate_burst, e.rate_limit_per_s) AS burst,
           e.rate_tokens, e.rate_refilled_at, e.breaker_state, e.id = ANY ($6::text[]) AS gated
    FROM endpoints e, t
    WHERE e.status = 'active' AND e.deleted_at IS NULL
      AND (e.throttled_until IS NULL OR e.throttled_until <= t.now)
      AND ((e.max_in_flight IS NULL AND e.rate_limit_per_s IS NULL AND e.breaker_state = 'closed') OR e.id = ANY ($6::text[]))
      AND NOT (e.id = ANY ($7::text[]))
      AND EXISTS (SELECT 1 FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= t.now)
  ), share AS (
    SELECT greatest(1, ceil($2::numeric / greatest(count(*), 1)))::int AS per_endpoint FROM ep
  ), bucket AS (
    SELECT ep.*, s.per_endpoint, f.live,
           CASE WHEN ep.rate_limit_per_s IS NULL THEN NULL
                ELSE least(ep.burst::float8, coalesce(ep.rate_tokens, ep.burst::float8)
                           + extract(epoch FROM t.now - coalesce(ep.rate_refilled_at, t.now)) * ep.rate_limit_per_s) END AS tokens
    FROM ep CROSS JOIN share s CROSS JOIN t
    LEFT JOIN LATERAL (
      SELECT count(*)::int AS live FROM deliveries l
      WHERE ep.gated AND l.endpoint_id = ep.id AND l.state = 'leased' AND l.lease_expires_at > t.now
    ) f ON true
  ), held AS (
    SELECT h.id, h.n FROM unnest($9::text[], $10::int[]) AS h(id, n)
  ), wanted AS (
    SELECT b.id, b.gated, b.breaker_state, b.tokens, random() AS turn, coalesce(h.n, 0) AS held,
           b.id = ANY ($11::text[]) AS answering, b.id = ANY ($12::text[]) AS unresponsive,
           least(b.per_endpoint, greatest(0, $8 - coalesce(h.n, 0)),
                 CASE WHEN b.breaker_state = 'closed' THEN b.per_endpoint WHEN b.live = 0 THEN 1 ELSE 0 END,
                 CASE WHEN b.max_in_flight IS NULL THEN b.per_endpoint ELSE greatest(0, b.max_in_flight - b.live) END,
                 CASE WHEN b.tokens IS NULL THEN b.per_endpoint ELSE greatest(0, floor(b.tokens))::int END) AS n
    FROM bucket b LEFT JOIN held h ON h.id = b.id
  ), allow AS (
    -- Endpoints not known to be answering share the budget, in turn order; past it, one that holds nothing
    -- and is not known to be unresponsive still gets one delivery (its first attempt proves it).
    SELECT w.id, w.gated, w.breaker_state, w.tokens, w.turn,
           CASE WHEN w.answering THEN w.n
                ELSE greatest(least(w.n, greatest(0, $13 - coalesce(sum(w.n) OVER (PARTITION BY w.answering ORDER BY w.turn
                                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))),
                              CASE WHEN w.held = 0 AND NOT w.unresponsive THEN least(w.n, 1) ELSE 0 END) END AS n
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
    SELECT d.id, d.endpoint_id, 'leased'::text AS previous_state FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id
    WHERE d.state = 'leased' AND d.lease_expires_at <= (SELECT now FROM t) AND d.reclaim_count < $5
      AND e.status = 'active' AND e.deleted_at IS NULL AND e.breaker_state = 'closed'
    ORDER BY d.lease_expires_at, d.id
    LIMIT $2
    FOR UPDATE OF d SKIP LOCKED
  ), picked AS (
    -- The share holds over reclaimed and due rows together: at most share − held per endpoint.
    SELECT c.id, c.endpoint_id, c.previous_state FROM (
      SELECT u.*, row_number() OVER (PARTITION BY u.endpoint_id ORDER BY u.previous_state = 'leased' DESC, u.id) AS rank
      FROM (SELECT * FROM expired UNION ALL SELECT * FROM due) u
    ) c LEFT JOIN held h ON h.id = c.endpoint_id
    WHERE c.rank <= $8 - coalesce(h.n, 0)
    ORDER BY c.previous_state = 'leased' DESC
    LIMIT $2
  ), gated_update AS (
    UPDATE endpoints e
    SET rate_tokens = CASE WHEN a.tokens IS NOT NULL THEN a.tokens - c.n ELSE e.rate_tokens END,
        rate_refilled_at = CASE WHEN a.tokens IS NOT NULL THEN t.now ELSE e.rate_refilled_at END,
        breaker_state = CASE WHEN a.breaker_state = 'open' THEN 'half_open' ELSE e.breaker_state END,
        breaker_changed_at = CASE WHEN a.breaker_state = 'open' THEN t.now ELSE e.breaker_changed_at END
    FROM allow a JOIN (SELECT endpoint_id, count(*)::int AS n FROM picked WHERE previous_state = 'pending' GROUP BY 1) c ON c.endpoint_id = a.id, t
    WHERE e.id = a.id AND a.gated AND (a.tokens IS NOT NULL OR a.breaker_state = 'open')
    RETURNING e.id, a.breaker_state = 'open' AS probing
  ), probe_events AS (
    INSERT INTO endpoint_events (endpoint_id, kind, reason, at)
    SELECT g.id, 'breaker_half_open', 'cool-down elapsed: one probe', t.now FROM gated_update g, t WHERE g.probing
  ), claimed AS (
    UPDATE deliveries d
    SET state = 'leased', lease_owner = $1,
        lease_expires_at = t.now + $3 * interval '1 millisecond',
        fencing_token = d.fencing_token + 1,
        reclaim_count = d.reclaim_count + CASE WHEN picked.previous_state = 'leased' THEN 1 ELSE 0 END,
        updated_at = t.now
    FROM picked, t WHERE d.id = picked.id
    RETURNING d.id, d.fencing_token, d.app_id, d.message_id, d.endpoint_id, d.attempt_count, d.manual, picked.previous_state
  ), logged AS (
    INSERT INTO delivery_events (delivery_id, state, worker_id, fencing_token, reason, at)
    SELECT id, 'leased', $1, fencing_token, CASE WHEN previous_state = 'leased' THEN 'reclaimed' ELSE 'claimed' END, t.now
    FROM claimed, t
  )
  SELECT c.id, c.fencing_token, c.app_id, c.message_id, c.endpoint_id, c.attempt_count, c.manual,
         c.previous_state = 'leased' AS reclaimed,
         m.event_type, m.payload, m.payload_key_id, m.content_type,
         e.url, e.headers, e.secret, e.secret_key_id, e.sensitive_headers, e.sensitive_headers_key,
         CASE WHEN e.previous_secret_until > (SELECT now FROM t) THEN e.previous_secret END AS previous_secret,
         e.previous_secret_key_id
  FROM claimed c JOIN messages m ON m.id = c.message_id JOIN endpoints e ON e.id = c.endpoint_id;
END
$claim$;


-- Down Migration
DROP FUNCTION tidings_claim(text, integer, integer, timestamptz, integer, text[], text[], integer, text[], integer[], text[], text[], integer);
