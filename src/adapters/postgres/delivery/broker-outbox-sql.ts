/*
 * The statements of a broker transport's outbox (docs/guides/transports.md): only a broker transport runs them; the
 * PostgreSQL transport's claim, record and publish never read or write `broker_published_at`.
 * A row is published for its current due instant when its stamp is at or after it (next_attempt_at of a pending row,
 * lease_expires_at of a leased one). `now` parameters are NULL in production (the database clock) and a fixed instant
 * under a test clock.
 */

import { prepared } from '../db.ts';

/*
 * STAMP_DUE — the outbox publisher's pick, in one statement: stamps `broker_published_at = now` on the rows to publish
 * and returns them.
 * - Each endpoint that takes work now (accepting, no breaker cool-down running, as the claim's gate reads it) with due
 *   rows: its first $2 due rows in due order (the head). Of these, the ones not yet published for their due instant
 *   are stamped, up to what its gates allow (a breaker not closed: one probe when nothing is in flight; an in-flight
 *   cap less its live leases; the whole tokens of its bucket; at most $2) less the head rows published and not yet
 *   leased. So the broker holds at most $2 ids of one endpoint, and a backlog of one endpoint waits in PostgreSQL, not
 *   in a queue in front of the others.
 * - Head rows stamped $3 ms ago or more and still due (their message was lost or is stuck): stamped again (`swept`).
 * - Expired leases of active endpoints with a closed breaker, not stamped since they expired, or stamped $3 ms ago or
 *   more (`swept` then), while reclaim_count < $5 (the others are the sweep's: lost too often).
 * The update keeps a row whose stamp changed since it was read (another dispatcher's publisher stamped it).
 * $1 most rows, $2 head per endpoint, $3 sweep after ms, $4 now, $5 max reclaims.
 * Rows: id, endpoint_id, swept, stamp_us (the stamp written, in Unix microseconds as text: exact, unlike a JS Date,
 * which keeps milliseconds of a column that holds microseconds).
 * Indexes: deliveries_endpoint_due (each endpoint's head), deliveries_endpoint_leased (a gated endpoint's live
 * leases), deliveries_lease_expiry (expired leases).
 */
export const STAMP_DUE = prepared(
  'tidings_broker_stamp_due',
  `
WITH t AS (
  SELECT coalesce($4::timestamptz, clock_timestamp()) AS now, $3 * interval '1 millisecond' AS sweep_after
), ep AS (
  SELECT e.id, e.max_in_flight, e.rate_limit_per_s, coalesce(e.rate_burst, e.rate_limit_per_s) AS burst,
         e.rate_tokens, e.rate_refilled_at, e.breaker_state, NOT tidings_endpoint_ungated(e) AS gated
  FROM endpoints e, t
  WHERE tidings_endpoint_accepting(e, t.now)
    AND (e.breaker_state <> 'open' OR e.breaker_open_until <= t.now)
    AND (SELECT d.id FROM deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= t.now
         ORDER BY d.next_attempt_at LIMIT 1) IS NOT NULL
), head AS (
  SELECT ep.id AS endpoint_id, h.id, h.stamp, h.published, h.stale,
         row_number() OVER (PARTITION BY ep.id, h.published ORDER BY h.next_attempt_at, h.id) AS rank
  FROM ep CROSS JOIN t CROSS JOIN LATERAL (
    SELECT d.id, d.next_attempt_at, d.broker_published_at AS stamp,
           coalesce(d.broker_published_at >= d.next_attempt_at, false) AS published,
           coalesce(d.broker_published_at >= d.next_attempt_at AND d.broker_published_at <= t.now - t.sweep_after,
                    false) AS stale
    FROM deliveries d
    WHERE d.endpoint_id = ep.id AND d.state = 'pending' AND d.next_attempt_at <= t.now
    ORDER BY d.next_attempt_at, d.id
    LIMIT $2
  ) h
), room AS (
  SELECT ep.id,
         least($2,
               CASE WHEN ep.breaker_state = 'closed' THEN $2 WHEN f.live = 0 THEN 1 ELSE 0 END,
               CASE WHEN ep.max_in_flight IS NULL THEN $2 ELSE ep.max_in_flight - f.live END,
               CASE WHEN ep.rate_limit_per_s IS NULL THEN $2
                    ELSE floor(least(ep.burst::float8, coalesce(ep.rate_tokens, ep.burst::float8)
                          + extract(epoch FROM t.now - coalesce(ep.rate_refilled_at,
                            t.now)) * ep.rate_limit_per_s))::int
               END)
         - (SELECT count(*)::int FROM head h WHERE h.endpoint_id = ep.id AND h.published AND NOT h.stale) AS n
  FROM ep CROSS JOIN t
  LEFT JOIN LATERAL (
    SELECT count(*)::int AS live FROM deliveries l
    WHERE ep.gated AND l.endpoint_id = ep.id AND l.state = 'leased' AND l.lease_expires_at > t.now
  ) f ON true
), expired AS (
  SELECT d.id, d.endpoint_id, d.broker_published_at AS stamp,
    coalesce(d.broker_published_at >= d.lease_expires_at, false) AS swept
  FROM deliveries d, t
  WHERE d.state = 'leased' AND d.lease_expires_at <= t.now AND d.reclaim_count < $5
    AND (d.broker_published_at IS NULL OR d.broker_published_at < d.lease_expires_at
         OR d.broker_published_at <= t.now - t.sweep_after)
    AND (SELECT e.status = 'active' AND e.deleted_at IS NULL AND e.breaker_state = 'closed'
         FROM endpoints e WHERE e.id = d.endpoint_id)
  ORDER BY d.lease_expires_at, d.id
  LIMIT $1
), picked AS (
  SELECT * FROM expired
  UNION ALL
  SELECT h.id, h.endpoint_id, h.stamp, false FROM head h JOIN room r ON r.id = h.endpoint_id
  WHERE NOT h.published AND h.rank <= r.n
  UNION ALL
  SELECT h.id, h.endpoint_id, h.stamp, true FROM head h WHERE h.stale
  LIMIT $1
)
UPDATE deliveries d SET broker_published_at = t.now
FROM picked p, t
WHERE d.id = p.id AND d.broker_published_at IS NOT DISTINCT FROM p.stamp
RETURNING d.id, d.endpoint_id, p.swept, (extract(epoch FROM t.now) * 1000000)::bigint::text AS stamp_us`,
);

/*
 * UNSTAMP — the ids whose publish the broker did not confirm lose the stamp the publisher wrote ($2, STAMP_DUE's
 * stamp_us: Unix microseconds), so that the next STAMP_DUE takes them again; a row stamped since by another publisher
 * keeps its stamp. The compare is in whole microseconds, exact. $1 ids. Index: pkey.
 */
export const UNSTAMP = prepared(
  'tidings_broker_unstamp',
  `
UPDATE deliveries SET broker_published_at = NULL WHERE id = ANY ($1::bigint[]) 
  AND (extract(epoch FROM broker_published_at) * 1000000)::bigint = $2::bigint`,
);

/*
 * CLAIM_IDS — one call of `tidings_claim_ids` (src/adapters/postgres/delivery/claim-ids.sql): the claim restricted to
 * the ids of broker messages, with its gates, returning one row per given id with its outcome. Parameters as CLAIM's
 * (delivery-sql.ts) but $2, the ids.
 */
export const CLAIM_IDS = prepared(
  'tidings_claim_ids',
  'SELECT * FROM tidings_claim_ids($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
);
