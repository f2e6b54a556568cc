-- Up Migration
-- Raw and scheduled messages (docs/guides/coming-from-svix.md, "Raw messages" and "Scheduled messages").
-- content_type: NULL for a JSON payload (delivered as application/json), else the content type a raw
-- message is delivered with (its payload column then holds the raw body, encrypted like any payload).
-- deliver_at: the instant the publisher asked for the first attempt (Svix `deliverAt`), NULL = at once; the
-- deliveries' next_attempt_at carries it, this column only echoes it.
ALTER TABLE messages ADD COLUMN content_type text, ADD COLUMN deliver_at timestamptz;

-- The claim of migration 1764000004000, unchanged but for one more column: the message's content type.
DROP FUNCTION tidings_claim(text, integer, integer, timestamptz, integer, text[], text[]);

CREATE FUNCTION tidings_claim(p_worker text, p_limit integer, p_lease_ms integer, p_now timestamptz,
                              p_max_reclaims integer, p_gated text[], p_exclude text[])
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
  ), allow AS (
    SELECT id, gated, breaker_state, tokens, random() AS turn,
           least(per_endpoint,
                 CASE WHEN breaker_state = 'closed' THEN per_endpoint WHEN live = 0 THEN 1 ELSE 0 END,
                 CASE WHEN max_in_flight IS NULL THEN per_endpoint ELSE greatest(0, max_in_flight - live) END,
                 CASE WHEN tokens IS NULL THEN per_endpoint ELSE greatest(0, floor(tokens))::int END) AS n
    FROM bucket
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
    SELECT * FROM (SELECT * FROM expired UNION ALL SELECT * FROM due) c LIMIT $2
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
DROP FUNCTION tidings_claim(text, integer, integer, timestamptz, integer, text[], text[]);
CREATE FUNCTION tidings_claim(p_worker text, p_limit integer, p_lease_ms integer, p_now timestamptz,
                              p_max_reclaims integer, p_gated text[], p_exclude text[])
RETURNS TABLE (id bigint, fencing_token bigint, app_id text, message_id text, endpoint_id text, attempt_count integer,
               manual boolean, reclaimed boolean, event_type text, payload bytea, payload_key_id text, url text,
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
  ), allow AS (
    SELECT id, gated, breaker_state, tokens, random() AS turn,
           least(per_endpoint,
                 CASE WHEN breaker_state = 'closed' THEN per_endpoint WHEN live = 0 THEN 1 ELSE 0 END,
                 CASE WHEN max_in_flight IS NULL THEN per_endpoint ELSE greatest(0, max_in_flight - live) END,
                 CASE WHEN tokens IS NULL THEN per_endpoint ELSE greatest(0, floor(tokens))::int END) AS n
    FROM bucket
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
    SELECT * FROM (SELECT * FROM expired UNION ALL SELECT * FROM due) c LIMIT $2
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
         m.event_type, m.payload, m.payload_key_id,
         e.url, e.headers, e.secret, e.secret_key_id, e.sensitive_headers, e.sensitive_headers_key,
         CASE WHEN e.previous_secret_until > (SELECT now FROM t) THEN e.previous_secret END AS previous_secret,
         e.previous_secret_key_id
  FROM claimed c JOIN messages m ON m.id = c.message_id JOIN endpoints e ON e.id = c.endpoint_id;
END
$claim$;

ALTER TABLE messages DROP COLUMN content_type, DROP COLUMN deliver_at;
