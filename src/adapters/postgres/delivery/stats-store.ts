import type { BacklogReading, StatsStore } from '../../../ports/stats-store.ts';
import type { Db } from '../db.ts';
import { SETTLED } from '../delivery-reads.ts';
import { dueHoldSql } from '../delivery-holds.ts';
import { readTimeInState } from './stats-time-in-state.ts';

export { planRead } from './stats-time-in-state.ts';

/*
 * Statistics statements (docs/adr/0013-observability.md): the overview of an installation or an application, and
 * the backlog gauges of a metrics scrape. The time-in-state figures are read by stats-time-in-state.ts.
 */

/** $1 now (NULL = database clock), $2 breaker list limit, $3 application id (app scope only). */
const overviewSql = (byApp: boolean): string => {
  // An application's settled deliveries are counted through deliveries_app_state (delivery-reads.ts), its
  // pending and leased ones through its endpoints, deleted ones included (app_endpoints, by
  // endpoints_app_including_deleted, read once): one pass over its pending deliveries
  // (deliveries_endpoint_due) and one over its leased ones (deliveries_endpoint_leased) give every count.
  // The installation's are read by state and time (deliveries_due, deliveries_lease_expiry). Due deliveries
  // are counted per endpoint, and those of an endpoint whose breaker or Retry-After holds them back are
  // counted as held, not due (../delivery-holds.ts).
  const backlog = byApp
    ? `(SELECT l.in_flight FROM lease l) AS leased_in_flight,
  (SELECT sum(p.later)::int FROM pend_ep p) AS scheduled_later,
  (SELECT sum(p.held)::int FROM pend_ep p) AS held_paused,`
    : `(SELECT count(*)::int FROM deliveries d
     WHERE d.state = 'leased' AND d.lease_expires_at > t.now) AS leased_in_flight,
  (SELECT count(*)::int FROM deliveries d
     WHERE d.state = 'pending' AND d.next_attempt_at > t.now AND d.next_attempt_at <> 'infinity') AS scheduled_later,
  (SELECT count(*)::int FROM deliveries d WHERE d.state = 'pending'
    AND d.next_attempt_at = 'infinity') AS held_paused,`;
  const states = byApp
    ? `SELECT d.state, count(*)::int AS n FROM deliveries d WHERE d.app_id = $3 AND ${SETTLED} GROUP BY d.state
       UNION ALL SELECT 'pending', sum(p.n)::int FROM pend_ep p HAVING sum(p.n) > 0
       UNION ALL SELECT 'leased', l.n FROM lease l WHERE l.n > 0`
    : 'SELECT d.state, count(*)::int AS n FROM deliveries d GROUP BY d.state';
  const dueByEndpoint = byApp
    ? `app_endpoints AS MATERIALIZED (SELECT e.id FROM endpoints e WHERE e.app_id = $3),
  pend_ep AS MATERIALIZED (
    SELECT d.endpoint_id, count(*)::int AS n, count(*) FILTER (WHERE d.next_attempt_at <= t.now)::int AS due_now,
           min(d.next_attempt_at) FILTER (WHERE d.next_attempt_at <= t.now) AS oldest_due,
           count(*) FILTER (WHERE d.next_attempt_at > t.now AND d.next_attempt_at <> 'infinity')::int AS later,
           count(*) FILTER (WHERE d.next_attempt_at = 'infinity')::int AS held
    FROM deliveries d, t WHERE d.state = 'pending' AND d.app_id = $3 AND d.endpoint_id IN (SELECT id FROM app_endpoints)
    GROUP BY d.endpoint_id),
  lease AS MATERIALIZED (
    SELECT count(*)::int AS n, count(*) FILTER (WHERE d.lease_expires_at > t.now)::int AS in_flight
    FROM deliveries d, t
    WHERE d.state = 'leased' AND d.app_id = $3 AND d.endpoint_id IN (SELECT id FROM app_endpoints)),
  due_ep AS (SELECT p.endpoint_id, p.due_now, p.oldest_due FROM pend_ep p WHERE p.due_now > 0)`
    : `due_ep AS MATERIALIZED (
    SELECT d.endpoint_id, count(*)::int AS due_now, min(d.next_attempt_at) AS oldest_due
    FROM deliveries d, t WHERE d.state = 'pending' AND d.next_attempt_at <= t.now GROUP BY d.endpoint_id)`;
  return `
WITH t AS (SELECT coalesce($1::timestamptz, clock_timestamp()) AS now),
  ${dueByEndpoint},
  due AS MATERIALIZED (
    SELECT coalesce(sum(b.due_now) FILTER (WHERE h.held_by IS NULL), 0)::int AS due_now,
           min(b.oldest_due) FILTER (WHERE h.held_by IS NULL) AS oldest_due,
           coalesce(sum(b.due_now) FILTER (WHERE h.held_by = 'breaker'), 0)::int AS held_breaker,
           coalesce(sum(b.due_now) FILTER (WHERE h.held_by = 'throttled'), 0)::int AS held_throttled
    FROM due_ep b JOIN endpoints e ON e.id = b.endpoint_id CROSS JOIN t
    CROSS JOIN LATERAL (SELECT ${dueHoldSql('t.now')} AS held_by) h)
SELECT
  (SELECT coalesce(jsonb_object_agg(state, n), '{}') FROM (${states}) s) AS states,
  (SELECT u.due_now FROM due u) AS due_now,
  (SELECT extract(epoch FROM t.now - u.oldest_due) * 1000 FROM due u)::float8 AS oldest_due_age_ms,
  (SELECT u.held_breaker FROM due u) AS held_breaker,
  (SELECT u.held_throttled FROM due u) AS held_throttled,
  ${backlog}
  (SELECT count(*)::int FROM delivery_events v WHERE v.state = 'dead' AND v.at > t.now - interval '24 hours'
    AND v.at <= t.now${byApp ? ' AND v.app_id = $3' : ''}) AS dead_24h,
  (SELECT count(*)::int FROM endpoints e WHERE e.breaker_state <> 'closed'
    AND e.deleted_at IS NULL${byApp ? ' AND e.app_id = $3' : ''}) AS open_breakers,
  (SELECT coalesce(array_agg(b.id ORDER BY b.changed, b.id), '{}') FROM (
     SELECT e.id, e.breaker_changed_at AS changed FROM endpoints e WHERE e.breaker_state <> 'closed'
       AND e.deleted_at IS NULL${byApp ? ' AND e.app_id = $3' : ''}
     ORDER BY e.breaker_changed_at NULLS FIRST, e.id LIMIT $2) b) AS open_breaker_ids,
  (SELECT count(*)::int FROM background_tasks k WHERE k.status = 'running'${byApp ? ' AND k.app_id = $3' : ''}) AS
    running_tasks
FROM t`;
};
const OVERVIEW_ALL = overviewSql(false);
const OVERVIEW_APP = overviewSql(true);

/*
 * BACKLOG — the one query of a metrics scrape: each count reads at most $1 rows of a partial index
 * (deliveries_due for pending, deliveries_lease_expiry for leased), so its cost stops growing at the cap;
 * the oldest due time is the first entry of deliveries_due; endpoints whose breaker is not closed are
 * counted from the endpoints table (one row per endpoint, not per delivery), capped too. Database clock.
 */
const BACKLOG = `
WITH t AS (SELECT clock_timestamp() AS now)
SELECT (SELECT count(*)::int FROM (SELECT 1 FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= t.now
  LIMIT $1) c) AS due,
       (SELECT count(*)::int FROM (SELECT 1 FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at > t.now
         AND d.next_attempt_at < 'infinity' LIMIT $1) c) AS scheduled,
       (SELECT count(*)::int FROM (SELECT 1 FROM deliveries d WHERE d.state = 'pending'
         AND d.next_attempt_at = 'infinity' LIMIT $1) c) AS held,
       (SELECT count(*)::int FROM (SELECT 1 FROM deliveries d WHERE d.state = 'leased' AND d.lease_expires_at > t.now
         LIMIT $1) c) AS leased,
       (SELECT count(*)::int FROM (SELECT 1 FROM endpoints e WHERE e.breaker_state <> 'closed' AND e.deleted_at IS NULL
         LIMIT $1) c) AS breakers_open,
       coalesce((SELECT extract(epoch FROM t.now - d.next_attempt_at) * 1000 FROM deliveries d
                 WHERE d.state = 'pending' AND d.next_attempt_at <= t.now ORDER BY d.next_attempt_at LIMIT 1),
                   0)::float8 AS oldest_due_age_ms
FROM t`;

/** Reads the backlog gauges' figures in one query (see BACKLOG); each count stops at `cap`. */
export function createPgBacklogReader(db: Db): (cap: number) => Promise<BacklogReading> {
  return async (cap) => {
    const r = (
      await db.query<{
        due: number;
        scheduled: number;
        held: number;
        leased: number;
        breakers_open: number;
        oldest_due_age_ms: number;
      }>(BACKLOG, [cap])
    ).rows[0]!;
    return {
      due: r.due,
      scheduled: r.scheduled,
      held: r.held,
      leased: r.leased,
      breakersOpen: r.breakers_open,
      oldestDueAgeMs: Math.max(0, Number(r.oldest_due_age_ms)),
    };
  };
}

interface OverviewRow {
  states: Record<string, number>;
  due_now: number;
  oldest_due_age_ms: number | null;
  leased_in_flight: number;
  scheduled_later: number | null;
  held_paused: number | null;
  held_breaker: number;
  held_throttled: number;
  dead_24h: number;
  open_breakers: number;
  open_breaker_ids: string[];
  running_tasks: number;
}

/** The PostgreSQL {@link StatsStore}. */
export function createPgStatsStore(db: Db): StatsStore {
  return {
    async overview(scope, now, breakerListLimit) {
      const byApp = scope.appId !== null;
      const row = (
        await db.query<OverviewRow>(
          byApp ? OVERVIEW_APP : OVERVIEW_ALL,
          byApp ? [now, breakerListLimit, scope.appId] : [now, breakerListLimit],
        )
      ).rows[0]!;
      const n = (state: string): number => row.states[state] ?? 0;
      return {
        deliveries: {
          pending: n('pending'),
          leased: n('leased'),
          succeeded: n('succeeded'),
          dead: n('dead'),
          skipped: n('skipped'),
          canceled: n('canceled'),
        },
        backlog: {
          dueNow: row.due_now,
          oldestDueAgeMs:
            row.oldest_due_age_ms === null ? null : Math.max(0, Math.round(Number(row.oldest_due_age_ms))),
          leasedInFlight: row.leased_in_flight,
          scheduledLater: row.scheduled_later ?? 0,
          held: (row.held_paused ?? 0) + row.held_breaker + row.held_throttled,
          heldBy: { paused: row.held_paused ?? 0, breaker: row.held_breaker, throttled: row.held_throttled },
        },
        deadLettersLast24h: row.dead_24h,
        openBreakers: { count: row.open_breakers, endpointIds: row.open_breaker_ids },
        runningTasks: row.running_tasks,
      };
    },
    timeInState: (scope, since, until, bucketMs) => readTimeInState(db, scope, since, until, bucketMs),
  };
}
