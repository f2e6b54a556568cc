import type { BacklogReading, Percentiles, SeriesPoint, StatsScope, StatsStore } from '../../../ports/stats-store.ts';
import type { Db } from '../db.ts';

/*
 * Statistics statements (docs/adr/0013-observability.md). Each has one text per scope so that the planner
 * sees a constant predicate and picks the matching index: delivery_events_at (installation),
 * delivery_events_app_at (application), delivery_events_endpoint_at (endpoint), all index-only range scans
 * over the columns the stamp trigger of migration 1764000008000 fills.
 */

type ScopeKind = 'all' | 'app' | 'endpoint';
const scopeKind = (s: StatsScope): ScopeKind => (s.endpointId !== null ? 'endpoint' : s.appId !== null ? 'app' : 'all');
const scopeParam = (s: StatsScope): string | null => s.endpointId ?? s.appId;
/** The timeline predicate of a scope; the scope's id is parameter `$n`. */
const eventScope = (k: ScopeKind, n: number): string => (k === 'all' ? '' : k === 'app' ? ` AND app_id = $${n}` : ` AND endpoint_id = $${n}`);

const PCT = 'ARRAY[0.5, 0.9, 0.99]::float8[]';

/** $1 since (exclusive), $2 until (inclusive), $3 scope id. One row of counts and percentile arrays. */
const windowSql = (k: ScopeKind): string => `
SELECT count(latency_ms)::int AS attempts,
       count(latency_ms) FILTER (WHERE state = 'succeeded')::int AS succeeded,
       count(latency_ms) FILTER (WHERE reason = 'retry_scheduled')::int AS retries,
       count(*) FILTER (WHERE state = 'dead')::int AS dead,
       count(*) FILTER (WHERE state = 'leased' AND reason = 'reclaimed')::int AS reclaims,
       count(wait_ms)::int AS wait_n,
       percentile_cont(${PCT}) WITHIN GROUP (ORDER BY wait_ms) AS wait_p,
       percentile_cont(${PCT}) WITHIN GROUP (ORDER BY latency_ms) AS latency_p,
       count(since_publish_ms) FILTER (WHERE state = 'succeeded' AND latency_ms IS NOT NULL)::int AS delivered_n,
       percentile_cont(${PCT}) WITHIN GROUP (ORDER BY since_publish_ms) FILTER (WHERE state = 'succeeded' AND latency_ms IS NOT NULL) AS delivered_p
FROM delivery_events
WHERE at > $1 AND at <= $2${eventScope(k, 3)}`;

/** $1 since, $2 until, $3 bucket ms, $4 scope id. Attempt counts per bucket (bucket = floor(epoch ms / $3)). */
const seriesSql = (k: ScopeKind): string => `
SELECT floor(extract(epoch FROM at) * 1000 / $3)::float8 AS bucket, count(*)::int AS attempts,
       count(*) FILTER (WHERE state = 'succeeded')::int AS succeeded
FROM delivery_events
WHERE at > $1 AND at <= $2 AND latency_ms IS NOT NULL${eventScope(k, 4)}
GROUP BY 1`;

const WINDOW_SQL = { all: windowSql('all'), app: windowSql('app'), endpoint: windowSql('endpoint') };
const SERIES_SQL = { all: seriesSql('all'), app: seriesSql('app'), endpoint: seriesSql('endpoint') };

/** $1 now (NULL = database clock), $2 breaker list limit, $3 application id (app scope only). */
const overviewSql = (byApp: boolean): string => {
  const d = byApp ? ' AND d.app_id = $3' : '';
  return `
WITH t AS (SELECT coalesce($1::timestamptz, clock_timestamp()) AS now)
SELECT
  (SELECT coalesce(jsonb_object_agg(state, n), '{}') FROM (SELECT d.state, count(*)::int AS n FROM deliveries d WHERE true${d} GROUP BY d.state) s) AS states,
  (SELECT count(*)::int FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= t.now${d}) AS due_now,
  (SELECT extract(epoch FROM t.now - min(d.next_attempt_at)) * 1000 FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= t.now${d})::float8 AS oldest_due_age_ms,
  (SELECT count(*)::int FROM deliveries d WHERE d.state = 'leased' AND d.lease_expires_at > t.now${d}) AS leased_in_flight,
  (SELECT count(*)::int FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at > t.now AND d.next_attempt_at <> 'infinity'${d}) AS scheduled_later,
  (SELECT count(*)::int FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at = 'infinity'${d}) AS held,
  (SELECT count(*)::int FROM delivery_events v WHERE v.state = 'dead' AND v.at > t.now - interval '24 hours' AND v.at <= t.now${byApp ? ' AND v.app_id = $3' : ''}) AS dead_24h,
  (SELECT count(*)::int FROM endpoints e WHERE e.breaker_state <> 'closed' AND e.deleted_at IS NULL${byApp ? ' AND e.app_id = $3' : ''}) AS open_breakers,
  (SELECT coalesce(array_agg(b.id ORDER BY b.changed, b.id), '{}') FROM (
     SELECT e.id, e.breaker_changed_at AS changed FROM endpoints e WHERE e.breaker_state <> 'closed' AND e.deleted_at IS NULL${byApp ? ' AND e.app_id = $3' : ''}
     ORDER BY e.breaker_changed_at NULLS FIRST, e.id LIMIT $2) b) AS open_breaker_ids,
  (SELECT count(*)::int FROM background_tasks k WHERE k.status = 'running'${byApp ? ' AND k.app_id = $3' : ''}) AS running_tasks
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
SELECT (SELECT count(*)::int FROM (SELECT 1 FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= t.now LIMIT $1) c) AS due,
       (SELECT count(*)::int FROM (SELECT 1 FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at > t.now AND d.next_attempt_at < 'infinity' LIMIT $1) c) AS scheduled,
       (SELECT count(*)::int FROM (SELECT 1 FROM deliveries d WHERE d.state = 'pending' AND d.next_attempt_at = 'infinity' LIMIT $1) c) AS held,
       (SELECT count(*)::int FROM (SELECT 1 FROM deliveries d WHERE d.state = 'leased' AND d.lease_expires_at > t.now LIMIT $1) c) AS leased,
       (SELECT count(*)::int FROM (SELECT 1 FROM endpoints e WHERE e.breaker_state <> 'closed' AND e.deleted_at IS NULL LIMIT $1) c) AS breakers_open,
       coalesce((SELECT extract(epoch FROM t.now - d.next_attempt_at) * 1000 FROM deliveries d
                 WHERE d.state = 'pending' AND d.next_attempt_at <= t.now ORDER BY d.next_attempt_at LIMIT 1), 0)::float8 AS oldest_due_age_ms
FROM t`;

/** Reads the backlog gauges' figures in one query (see BACKLOG); each count stops at `cap`. */
export function createPgBacklogReader(db: Db): (cap: number) => Promise<BacklogReading> {
  return async (cap) => {
    const r = (await db.query<{ due: number; scheduled: number; held: number; leased: number; breakers_open: number; oldest_due_age_ms: number }>(BACKLOG, [cap])).rows[0]!;
    return { due: r.due, scheduled: r.scheduled, held: r.held, leased: r.leased, breakersOpen: r.breakers_open, oldestDueAgeMs: Math.max(0, Number(r.oldest_due_age_ms)) };
  };
}

interface OverviewRow {
  states: Record<string, number>;
  due_now: number;
  oldest_due_age_ms: number | null;
  leased_in_flight: number;
  scheduled_later: number;
  held: number;
  dead_24h: number;
  open_breakers: number;
  open_breaker_ids: string[];
  running_tasks: number;
}

interface WindowRow {
  attempts: number;
  succeeded: number;
  retries: number;
  dead: number;
  reclaims: number;
  wait_n: number;
  wait_p: (number | string)[] | null;
  latency_p: (number | string)[] | null;
  delivered_n: number;
  delivered_p: (number | string)[] | null;
}

function percentiles(values: (number | string)[] | null, count: number): Percentiles {
  if (values === null || count === 0) return { p50: null, p90: null, p99: null, count };
  const [p50, p90, p99] = values.map(Number);
  return { p50: p50 ?? null, p90: p90 ?? null, p99: p99 ?? null, count };
}

/** Every bucket start in (since, until], zero-filled, oldest first. */
function fillSeries(since: Date, until: Date, bucketMs: number, rows: readonly { bucket: number; attempts: number; succeeded: number }[]): SeriesPoint[] {
  const byBucket = new Map(rows.map((r) => [Number(r.bucket), r]));
  const first = Math.floor((since.getTime() + 1) / bucketMs);
  const last = Math.floor(until.getTime() / bucketMs);
  const out: SeriesPoint[] = [];
  for (let b = first; b <= last; b++) {
    const r = byBucket.get(b);
    const attempts = r?.attempts ?? 0;
    const succeeded = r?.succeeded ?? 0;
    out.push({ at: new Date(b * bucketMs), attempts, succeeded, failed: attempts - succeeded });
  }
  return out;
}

/** The PostgreSQL {@link StatsStore}. */
export function createPgStatsStore(db: Db): StatsStore {
  return {
    async overview(scope, now, breakerListLimit) {
      const byApp = scope.appId !== null;
      const row = (await db.query<OverviewRow>(byApp ? OVERVIEW_APP : OVERVIEW_ALL, byApp ? [now, breakerListLimit, scope.appId] : [now, breakerListLimit])).rows[0]!;
      const n = (state: string): number => row.states[state] ?? 0;
      return {
        deliveries: { pending: n('pending'), leased: n('leased'), succeeded: n('succeeded'), dead: n('dead'), skipped: n('skipped'), canceled: n('canceled') },
        backlog: {
          dueNow: row.due_now,
          oldestDueAgeMs: row.oldest_due_age_ms === null ? null : Math.max(0, Math.round(Number(row.oldest_due_age_ms))),
          leasedInFlight: row.leased_in_flight,
          scheduledLater: row.scheduled_later,
          held: row.held,
        },
        deadLettersLast24h: row.dead_24h,
        openBreakers: { count: row.open_breakers, endpointIds: row.open_breaker_ids },
        runningTasks: row.running_tasks,
      };
    },
    async timeInState(scope, since, until, bucketMs) {
      const k = scopeKind(scope);
      const id = scopeParam(scope);
      const [w, s] = await Promise.all([
        db.query<WindowRow>(WINDOW_SQL[k], k === 'all' ? [since, until] : [since, until, id]),
        db.query<{ bucket: number; attempts: number; succeeded: number }>(SERIES_SQL[k], k === 'all' ? [since, until, bucketMs] : [since, until, bucketMs, id]),
      ]);
      const row = w.rows[0]!;
      return {
        queueWaitMs: percentiles(row.wait_p, row.wait_n),
        attemptLatencyMs: percentiles(row.latency_p, row.attempts),
        timeToDeliveredMs: percentiles(row.delivered_p, row.delivered_n),
        attempts: row.attempts,
        succeeded: row.succeeded,
        retriesScheduled: row.retries,
        deadLetterInflow: row.dead,
        reclaims: row.reclaims,
        series: fillSeries(since, until, bucketMs, s.rows),
      };
    },
  };
}
