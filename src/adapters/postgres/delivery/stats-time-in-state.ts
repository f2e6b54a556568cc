import { addInto, BOUNDS, countOf, percentiles, type Histogram } from '../../../domain/duration-histogram.ts';
import {
  ROLLUP_LEVELS,
  rollupLevelFor,
  type Percentiles,
  type SeriesPoint,
  type StatsScope,
  type TimeInState,
} from '../../../ports/stats-store.ts';
import type { Db } from '../db.ts';

/*
 * The time-in-state figures of the statistics (docs/adr/0015-time-in-state-rollups.md): whole buckets from
 * stats_rollups, the edges and the tail not yet rolled up from the timeline, summed into counts, percentiles and a
 * series. One text per scope so that the planner sees a constant predicate and picks the matching index:
 * delivery_events_at (installation), delivery_events_app_at (application), delivery_events_endpoint_at (endpoint),
 * and the primary key of stats_rollups.
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

/** The time-in-state figures of `scope` over (since, until], in series buckets of `bucketMs`. */
export async function readTimeInState(
  db: Db,
  scope: StatsScope,
  since: Date,
  until: Date,
  bucketMs: number,
): Promise<TimeInState> {
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
}
