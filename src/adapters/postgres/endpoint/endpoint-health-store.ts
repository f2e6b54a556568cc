import { AppError } from '../../../domain/errors.ts';
import type { BreakerState, EndpointHealth, EndpointHealthStore } from '../../../ports/endpoint-health-store.ts';
import type { Db } from '../db.ts';
import { endpointDeliveries } from '../delivery-reads.ts';

/** Recent windows of the health read model, in seconds: 5 minutes, 1 hour, 24 hours. */
export const HEALTH_WINDOWS_S: readonly number[] = Object.freeze([300, 3600, 86_400]);
/** Health events returned with the read model. */
const HISTORY_ROWS = 50;

const PAUSE = `
WITH ep AS (
  UPDATE endpoints SET status = 'paused', status_reason = 'paused by ' || $3::text,
         status_changed_at = coalesce($2::timestamptz, clock_timestamp()),
           updated_at = coalesce($2::timestamptz, clock_timestamp())
  WHERE id = $1 AND deleted_at IS NULL AND status = 'active'
  RETURNING id
), held AS (
  UPDATE deliveries SET next_attempt_at = 'infinity' WHERE endpoint_id IN (SELECT id FROM ep) AND state = 'pending'
), ev AS (
  INSERT INTO endpoint_events (endpoint_id, kind, reason, at) SELECT id, 'paused', 'paused by ' || $3::text,
    coalesce($2::timestamptz, clock_timestamp()) FROM ep
)
SELECT (SELECT status FROM endpoints WHERE id = $1 AND deleted_at IS NULL) AS status`;

const RESUME = `
WITH ep AS (
  UPDATE endpoints SET status = 'active', status_reason = NULL,
         status_changed_at = coalesce($2::timestamptz, clock_timestamp()),
           updated_at = coalesce($2::timestamptz, clock_timestamp())
  WHERE id = $1 AND deleted_at IS NULL AND status = 'paused'
  RETURNING id
), due AS (
  -- A scheduled message not yet attempted keeps its deliverAt (greatest ignores the NULL of the others).
  UPDATE deliveries d SET next_attempt_at = greatest(coalesce($2::timestamptz, clock_timestamp()), CASE
    WHEN d.attempt_count = 0 THEN m.deliver_at END)
  FROM messages m
  WHERE m.id = d.message_id AND d.endpoint_id IN (SELECT id FROM ep) AND d.state = 'pending'
    AND d.next_attempt_at = 'infinity'
  RETURNING d.id
), ev AS (
  INSERT INTO endpoint_events (endpoint_id, kind, reason, at) SELECT id, 'resumed', 'resumed by ' || $3::text,
    coalesce($2::timestamptz, clock_timestamp()) FROM ep
)
SELECT (SELECT status FROM endpoints WHERE id = $1 AND deleted_at IS NULL) AS status,
  (SELECT count(*)::int FROM due) AS due`;

/*
 * PROBE_NOW — the operator or the application (its portal or key) ends an open breaker's cool-down now, so that the
 * next claim sends exactly one probe (the claim's own rule: an open breaker whose cool-down is over allows one delivery
 * when nothing of the endpoint is in flight, and turns half-open). $1 endpoint id, $2 now, $3 who asked (history
 * reason). Returns the breaker state before (NULL = no such endpoint) and whether the cool-down was ended (only an open
 * breaker's is).
 */
const PROBE_NOW = `
WITH before AS (
  SELECT id, breaker_state FROM endpoints WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE
), ended AS (
  UPDATE endpoints e
  SET breaker_open_until = coalesce($2::timestamptz, clock_timestamp()),
    updated_at = coalesce($2::timestamptz, clock_timestamp())
  FROM before b WHERE e.id = b.id AND b.breaker_state = 'open'
  RETURNING e.id
), ev AS (
  INSERT INTO endpoint_events (endpoint_id, kind, reason, at)
  SELECT id, 'breaker_probe_requested', 'cool-down ended by ' || $3::text || ': one probe next',
    coalesce($2::timestamptz, clock_timestamp())
  FROM ended
)
SELECT (SELECT breaker_state FROM before) AS was, (SELECT count(*)::int FROM ended) AS ended`;

/*
 * CLOSE_BREAKER — the operator or the application closes the breaker: state closed, the failure streak and the
 * cool-down growth start again from zero (consecutive_failures, breaker_opened_count), so the endpoint's deliveries are
 * claimed as usual. Idempotent: a closed breaker is left alone and no history row is written. $1 endpoint
 * id, $2 now, $3 who asked (history reason). Returns the breaker state before (NULL = no such endpoint).
 */
const CLOSE_BREAKER = `
WITH before AS (
  SELECT id, breaker_state FROM endpoints WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE
), closed AS (
  UPDATE endpoints e
  SET breaker_state = 'closed', breaker_open_until = NULL, breaker_opened_count = 0, consecutive_failures = 0,
      breaker_changed_at = coalesce($2::timestamptz, clock_timestamp()),
        updated_at = coalesce($2::timestamptz, clock_timestamp())
  FROM before b WHERE e.id = b.id AND b.breaker_state <> 'closed'
  RETURNING e.id
), ev AS (
  INSERT INTO endpoint_events (endpoint_id, kind, reason, at)
  SELECT id, 'breaker_closed', 'closed by ' || $3::text, coalesce($2::timestamptz, clock_timestamp()) FROM closed
)
SELECT (SELECT breaker_state FROM before) AS was`;

const HEALTH = `
WITH t AS (SELECT coalesce($2::timestamptz, clock_timestamp()) AS now)
SELECT e.status, e.status_reason, e.status_changed_at, e.breaker_state, e.consecutive_failures, e.breaker_open_until,
       e.breaker_opened_count, e.breaker_changed_at, e.failing_since, e.last_success_at, e.throttled_until,
       e.max_in_flight, e.rate_limit_per_s, e.rate_burst,
       (SELECT count(*)::int FROM deliveries l, t WHERE l.endpoint_id = e.id AND l.state = 'leased'
         AND l.lease_expires_at > t.now) AS in_flight,
       (SELECT count(*)::int FROM delivery_events v, t
         WHERE v.endpoint_id = e.id AND v.state = 'leased' AND v.at > t.now - interval '1 second') AS rate_now,
       (SELECT coalesce(jsonb_object_agg(state, n), '{}')
         FROM (SELECT d.state, count(*)::int AS n FROM ${endpointDeliveries('$1')} d GROUP BY d.state) s) AS deliveries,
       (SELECT jsonb_agg(w ORDER BY w.window_s) FROM (
          SELECT win AS window_s, count(a.id)::int AS attempts, count(a.id)
            FILTER (WHERE a.succeeded)::int AS succeeded,
                 count(a.id) FILTER (WHERE a.error_kind = 'redirect')::int AS redirects,
                 percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS p50,
                 percentile_cont(0.99) WITHIN GROUP (ORDER BY a.duration_ms) AS p99
          FROM unnest($3::int[]) AS win CROSS JOIN t
          LEFT JOIN attempts a ON a.endpoint_id = e.id AND a.created_at > t.now - win * interval '1 second'
          GROUP BY win) w) AS windows,
       (SELECT jsonb_build_object('at', r.created_at, 'statusCode', r.response_status_code, 'location',
         r.response_location)
          FROM attempts r, t WHERE r.endpoint_id = e.id AND r.error_kind = 'redirect'
            AND r.created_at > t.now - interval '1 day'
          ORDER BY r.id DESC LIMIT 1) AS last_redirect,
       (SELECT coalesce(jsonb_agg(h ORDER BY h.id DESC), '[]') FROM (
          SELECT id, kind, reason, at FROM endpoint_events WHERE endpoint_id = e.id ORDER BY id DESC
            LIMIT ${HISTORY_ROWS}) h) AS history
FROM endpoints e WHERE e.id = $1 AND e.deleted_at IS NULL`;

interface HealthRow {
  status: EndpointHealth['status'];
  status_reason: string | null;
  status_changed_at: Date | null;
  breaker_state: EndpointHealth['breaker']['state'];
  consecutive_failures: number;
  breaker_open_until: Date | null;
  breaker_opened_count: number;
  breaker_changed_at: Date | null;
  failing_since: Date | null;
  last_success_at: Date | null;
  throttled_until: Date | null;
  max_in_flight: number | null;
  rate_limit_per_s: number | null;
  rate_burst: number | null;
  in_flight: number;
  rate_now: number;
  deliveries: Record<string, number>;
  windows: {
    window_s: number;
    attempts: number;
    succeeded: number;
    redirects: number;
    p50: number | null;
    p99: number | null;
  }[];
  last_redirect: { at: string; statusCode: number; location: string | null } | null;
  history: { kind: string; reason: string | null; at: string }[];
}

/**
 * The PostgreSQL {@link EndpointHealthStore}. `wake` wakes dispatchers (this process's, and others by NOTIFY) after a
 * resume.
 */
export function createPgEndpointHealthStore(db: Db, wake: () => void): EndpointHealthStore {
  return {
    async pause(endpointId, now, actor) {
      const status =
        (await db.query<{ status: string | null }>(PAUSE, [endpointId, now, actor])).rows[0]?.status ?? null;
      if (status === null) return false;
      if (status === 'disabled') throw new AppError('conflict', 'The endpoint is disabled; enable it before pausing');
      return true;
    },
    async resume(endpointId, now, actor) {
      const row = (await db.query<{ status: string | null; due: number }>(RESUME, [endpointId, now, actor])).rows[0];
      if (row === undefined || row.status === null) return false;
      if (row.due > 0) wake();
      return true;
    },
    async probeNow(endpointId, now, actor) {
      const row = (await db.query<{ was: BreakerState | null; ended: number }>(PROBE_NOW, [endpointId, now, actor]))
        .rows[0];
      if (row === undefined || row.was === null) return null;
      if (row.ended > 0) wake();
      return row.was;
    },
    async closeBreaker(endpointId, now, actor) {
      const row = (await db.query<{ was: BreakerState | null }>(CLOSE_BREAKER, [endpointId, now, actor])).rows[0];
      if (row === undefined || row.was === null) return null;
      if (row.was !== 'closed') wake();
      return row.was;
    },
    async setLimits(endpointId, limits) {
      const res = await db.query(
        `UPDATE endpoints SET max_in_flight = $2, rate_limit_per_s = $3, rate_burst = $4, rate_tokens = NULL,
          rate_refilled_at = NULL, updated_at = clock_timestamp()
         WHERE id = $1 AND deleted_at IS NULL`,
        [endpointId, limits.maxInFlight, limits.rateLimitPerS, limits.rateBurst],
      );
      return res.rowCount === 1;
    },
    async health(endpointId, now) {
      const row = (await db.query<HealthRow>(HEALTH, [endpointId, now, HEALTH_WINDOWS_S])).rows[0];
      if (row === undefined) return null;
      return {
        status: row.status,
        statusReason: row.status_reason,
        statusChangedAt: row.status_changed_at,
        breaker: {
          state: row.breaker_state,
          consecutiveFailures: row.consecutive_failures,
          openUntil: row.breaker_open_until,
          openedInARow: row.breaker_opened_count,
          changedAt: row.breaker_changed_at,
        },
        failingSince: row.failing_since,
        lastSuccessAt: row.last_success_at,
        throttledUntil: row.throttled_until,
        limits: { maxInFlight: row.max_in_flight, rateLimitPerS: row.rate_limit_per_s, rateBurst: row.rate_burst },
        inFlight: row.in_flight,
        currentRatePerS: row.rate_now,
        deliveries: row.deliveries,
        windows: row.windows.map((w) => ({
          windowS: w.window_s,
          attempts: w.attempts,
          succeeded: w.succeeded,
          failed: w.attempts - w.succeeded,
          successRatio: w.attempts === 0 ? null : w.succeeded / w.attempts,
          p50LatencyMs: w.p50 === null ? null : Math.round(w.p50),
          p99LatencyMs: w.p99 === null ? null : Math.round(w.p99),
          redirects: w.redirects,
        })),
        lastRedirect: row.last_redirect === null ? null : { ...row.last_redirect, at: new Date(row.last_redirect.at) },
        history: row.history.map((h) => ({ kind: h.kind, reason: h.reason, at: new Date(h.at) })),
      };
    },
  };
}
