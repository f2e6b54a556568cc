import { addInto, BOUNDS, countOf, percentiles, type Histogram } from '../../../domain/duration-histogram.ts';
import {
  ROLLUP_LEVELS,
  rollupLevelFor,
  type BacklogReading,
  type Percentiles,
  type SeriesPoint,
  type StatsScope,
  type StatsStore,
  type TimeInState,
} from '../../../ports/stats-store.ts';
import type { Db } from '../db.ts';
import { SETTLED } from '../delivery-reads.ts';
import { dueHoldSql } from '../delivery-holds.ts';

/*
 * Statistics statements (docs/adr/0013-observability.md, docs/adr/0015-time-in-state-rollups.md). Each has
 * one text per scope so that the planner sees a constant predicate and picks the matching index:
 * delivery_events_at (installation), delivery_events_app_at (application), delivery_events_endpoint_at
 * (endpoint), and the primary key of stats_rollups.
 */

type ScopeKind = 'all' | 'app' | 'endpoint';
const scopeKind = (s: StatsScope): ScopeKind => (s.endpointId !== null ? 'endpoint' : s.appId !== null ? 'app' : 'all');
/** The timeline predicate of a scope; the scope's id is parameter `$n`. */
const eventScope = (k: ScopeKind, n: number): string =>
  k === 'all' ? '' : k === 'app' ? ` AND e.app_id = $${n}` : ` AND e.endpoint_id = $${n}`;
/** The rollup predicate of a scope: `$n` the application (app) or endpoint id, `$n+1` the endpoint's application. */
const rollupScope = (k: ScopeKind, n: number): string =>
  k === 'all'
    ? `r.app_id = '' AND r.endpoint_id = ''`
    : k === 'app'
      ? `r.app_id = $${n} AND r.endpoint_id = ''`
      : `r.app_id = $${n + 1} AND r.endpoint_id = $${n}`;

/** Scope ids as $10 and $11 (unused ones NULL, typed text so that every text names all parameters). */
const pad = (ids: readonly (string | null)[]): (string | null)[] => [ids[0] ?? null, ids[1] ?? null];

const RAW_COLUMNS = 'e.at, e.state, e.reason, e.latency_ms, e.wait_ms, e.since_publish_ms';

/**
 * The timeline rows (alias `e`) that the statistics count: an attempt's outcome (latency_ms), a claim (wait_ms;
 * a reclaim is a leased row), a dead letter. Every figure of TIME_IN_STATE and of the rollups comes from these
 * rows alone; the others (a delivery's first row, pauses, replays, cancellations) add nothing to any of them.
 * It is the predicate of the three covering indexes (migration 1764000009800, docs/adr/0016-hot-path-cost.md,
 * decision 18), written out so that the planner can use them whatever the parameters.
 */
const COUNTED = `(e.latency_ms IS NOT NULL OR e.wait_ms IS NOT NULL OR e.state IN ('leased', 'dead'))`;

/** Most rollup parts of one read: the body level and the finer levels covering its trailing edge. */
const MAX_PARTS = ROLLUP_LEVELS.length;

/** The rollup rows of part n of a read (1-based): of its level, from its start, before its end. */
const rollupPart = (n: number): string =>
  `(r.level_ms = ($3::int[])[${n}] AND r.bucket_at >= ($12::timestamptz[])[${n}] ` +
  `AND r.bucket_at < ($13::timestamptz[])[${n}])`;

/**
 * TIME_IN_STATE — $1 since (exclusive), $2 until (inclusive), $3 part levels (ms, MAX_PARTS entries),
 * $4 series bucket ms, $5 histogram bounds, $6 f1 = start of the span the rollups cover, $7 max(f1, g),
 * $8 g = end of that span, $9 watermark (stats_rollup_state.rolled_id, read in the same snapshot),
 * $10/$11 scope ids, $12/$13 part starts and ends. Rows of (series bucket, counts, sparse histograms):
 * - rollup rows of each part (level, [start, end)) — the body level inside the window, then finer levels
 *   up to `until` (they count the timeline ids ≤ $9); an unused part has start = end;
 * - raw timeline rows of the partial buckets at both edges, (since, f1) and [max(f1, g), until];
 * - raw timeline rows above the watermark inside [f1, g) (the tail not yet rolled up).
 * The raw rows are the {@link COUNTED} ones.
 */
const timeInStateSql = (k: ScopeKind): string => `
WITH scope_ids AS (SELECT $10::text AS id, $11::text AS app_id),
raw AS (
  SELECT ${RAW_COLUMNS} FROM delivery_events e WHERE e.at > $1 AND e.at < $6 AND e.at <= $2${eventScope(k, 10)}
    AND ${COUNTED}
  UNION ALL
  SELECT ${RAW_COLUMNS} FROM delivery_events e WHERE e.at >= $7 AND e.at <= $2${eventScope(k, 10)} AND ${COUNTED}
  UNION ALL
  SELECT ${RAW_COLUMNS} FROM delivery_events e WHERE e.id > $9 AND e.at >= $6 AND e.at < $8${eventScope(k, 10)}
    AND ${COUNTED}
),
rb AS MATERIALIZED (
  SELECT floor(extract(epoch FROM at) * 1000 / $4::int)::float8 AS bucket, state, reason, latency_ms,
         CASE WHEN wait_ms IS NOT NULL THEN width_bucket(greatest(wait_ms, 0), $5::bigint[]) - 1 END AS w,
         CASE WHEN latency_ms IS NOT NULL THEN width_bucket(greatest(latency_ms, 0)::bigint, $5::bigint[]) - 1 END AS l,
         CASE WHEN state = 'succeeded' AND latency_ms IS NOT NULL AND since_publish_ms IS NOT NULL
           THEN width_bucket(greatest(since_publish_ms, 0), $5::bigint[]) - 1 END AS d
  FROM raw
),
counts AS (
  SELECT bucket, count(latency_ms)::int AS attempts,
    (count(latency_ms) FILTER (WHERE state = 'succeeded'))::int AS succeeded,
         (count(latency_ms) FILTER (WHERE reason = 'retry_scheduled'))::int AS retries,
         (count(*) FILTER (WHERE state = 'dead'))::int AS dead,
           (count(*) FILTER (WHERE state = 'leased' AND reason = 'reclaimed'))::int AS reclaims
  FROM rb GROUP BY bucket
),
hist AS (
  SELECT bucket, m, jsonb_object_agg(b, n) AS h
  FROM (SELECT bucket, x.m, x.b, count(*) AS n FROM rb CROSS JOIN LATERAL (VALUES ('w', w), ('l', l), ('d', d)) x(m, b)
    WHERE x.b IS NOT NULL GROUP BY 1, 2, 3) s
  GROUP BY 1, 2
)
SELECT c.bucket, c.attempts, c.succeeded, c.retries, c.dead, c.reclaims, hw.h AS queue_wait, hl.h AS attempt_latency,
  hd.h AS time_to_delivered
FROM counts c
LEFT JOIN hist hw ON hw.bucket = c.bucket AND hw.m = 'w'
LEFT JOIN hist hl ON hl.bucket = c.bucket AND hl.m = 'l'
LEFT JOIN hist hd ON hd.bucket = c.bucket AND hd.m = 'd'
UNION ALL
SELECT floor(extract(epoch FROM r.bucket_at) * 1000 / $4::int)::float8, r.attempts, r.succeeded, r.retries, r.dead,
  r.reclaims, r.queue_wait, r.attempt_latency, r.time_to_delivered
FROM stats_rollups r WHERE
  (${Array.from({ length: MAX_PARTS }, (_, i) => rollupPart(i + 1)).join('\n   OR ')})
  AND ${rollupScope(k, 10)}`;

const TIME_IN_STATE_SQL = {
  all: timeInStateSql('all'),
  app: timeInStateSql('app'),
  endpoint: timeInStateSql('endpoint'),
};
const WATERMARK = 'SELECT rolled_id FROM stats_rollup_state';

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

/** One row of TIME_IN_STATE. */
interface PartRow {
  bucket: number;
  attempts: number;
  succeeded: number;
  retries: number;
  dead: number;
  reclaims: number;
  queue_wait: Histogram | null;
  attempt_latency: Histogram | null;
  time_to_delivered: Histogram | null;
}

const FRACTIONS = [0.5, 0.9, 0.99];

function percentilesOf(h: Histogram): Percentiles {
  const count = countOf(h);
  const [p50, p90, p99] = percentiles(h, FRACTIONS);
  return { p50: p50 ?? null, p90: p90 ?? null, p99: p99 ?? null, count };
}

/** Every bucket start in (since, until], zero-filled, oldest first. */
function fillSeries(
  since: Date,
  until: Date,
  bucketMs: number,
  byBucket: ReadonlyMap<number, { attempts: number; succeeded: number }>,
): SeriesPoint[] {
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

/** One rollup range of a read: rows of level `levelMs` with bucket starts in [from, to). */
interface Part {
  readonly levelMs: number;
  readonly from: number;
  readonly to: number;
}

/**
 * How a read splits (since, until]: rollup parts covering [f1, g), raw rows before f1 and from g on. f1 is
 * the first multiple of the body level after `since`; the body part runs to the last multiple at or before
 * `until`, and each finer level then covers whole buckets of its own up to `until`, so the raw trailing
 * edge is less than the finest level wide (one second) whatever the body level. Without a body level,
 * f1 = g lie after `until` and every row of the window is read raw.
 */
export function planRead(
  sinceMs: number,
  untilMs: number,
  levelMs: number | null,
): { parts: Part[]; f1: number; g: number } {
  if (levelMs === null) return { parts: [], f1: untilMs + 1, g: untilMs + 1 };
  const f1 = (Math.floor(sinceMs / levelMs) + 1) * levelMs;
  const f2 = Math.floor(untilMs / levelMs) * levelMs;
  if (f1 >= f2) return { parts: [], f1, g: f1 };
  const parts: Part[] = [{ levelMs, from: f1, to: f2 }];
  let g = f2;
  for (const l of [...ROLLUP_LEVELS].reverse()) {
    if (l.levelMs >= levelMs || levelMs % l.levelMs !== 0) continue;
    const b = Math.floor(untilMs / l.levelMs) * l.levelMs;
    if (b > g) parts.push({ levelMs: l.levelMs, from: g, to: b });
    g = Math.max(g, b);
  }
  return { parts, f1, g };
}

/** Sums the rows of TIME_IN_STATE into the figures. */
function figures(rows: readonly PartRow[], since: Date, until: Date, bucketMs: number): TimeInState {
  const wait: Record<number, number> = {};
  const latency: Record<number, number> = {};
  const delivered: Record<number, number> = {};
  const byBucket = new Map<number, { attempts: number; succeeded: number }>();
  let attempts = 0,
    succeeded = 0,
    retries = 0,
    dead = 0,
    reclaims = 0;
  for (const r of rows) {
    attempts += r.attempts;
    succeeded += r.succeeded;
    retries += r.retries;
    dead += r.dead;
    reclaims += r.reclaims;
    if (r.queue_wait !== null) addInto(wait, r.queue_wait);
    if (r.attempt_latency !== null) addInto(latency, r.attempt_latency);
    if (r.time_to_delivered !== null) addInto(delivered, r.time_to_delivered);
    const b = byBucket.get(Number(r.bucket)) ?? { attempts: 0, succeeded: 0 };
    b.attempts += r.attempts;
    b.succeeded += r.succeeded;
    byBucket.set(Number(r.bucket), b);
  }
  return {
    queueWaitMs: percentilesOf(wait),
    attemptLatencyMs: percentilesOf(latency),
    timeToDeliveredMs: percentilesOf(delivered),
    attempts,
    succeeded,
    retriesScheduled: retries,
    deadLetterInflow: dead,
    reclaims,
    series: fillSeries(since, until, bucketMs, byBucket),
  };
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
    async timeInState(scope, since, until, bucketMs) {
      const k = scopeKind(scope);
      const levelMs = rollupLevelFor(until.getTime() - since.getTime(), bucketMs);
      const plan = planRead(since.getTime(), until.getTime(), levelMs);
      const parts = Array.from({ length: MAX_PARTS }, (_, i) => plan.parts[i] ?? { levelMs: 0, from: 0, to: 0 });
      const partParams = [
        parts.map((p) => p.levelMs),
        parts.map((p) => new Date(p.from)),
        parts.map((p) => new Date(p.to)),
      ];
      const ids = k === 'all' ? [] : k === 'app' ? [scope.appId] : [scope.endpointId, scope.appId];
      // One snapshot for the watermark and the rows it splits: a roll-up committing in between would
      // otherwise count its rows twice or not at all.
      const rows = await db.tx(async (q) => {
        await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const rolledId = (await q.query<{ rolled_id: string }>(WATERMARK)).rows[0]?.rolled_id ?? '0';
        return (
          await q.query<PartRow>(TIME_IN_STATE_SQL[k], [
            since,
            until,
            partParams[0],
            bucketMs,
            BOUNDS,
            new Date(plan.f1),
            new Date(Math.max(plan.f1, plan.g)),
            new Date(plan.g),
            rolledId,
            ...pad(ids),
            partParams[1],
            partParams[2],
          ])
        ).rows;
      });
      return figures(rows, since, until, bucketMs);
    },
  };
}
