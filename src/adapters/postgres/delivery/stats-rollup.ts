import { BOUNDS } from '../../../domain/duration-histogram.ts';
import { ROLLUP_LEVELS, type StatsRollup } from '../../../ports/stats-store.ts';
import type { Db } from '../db.ts';

/*
 * The time-in-state roll-up (docs/adr/0015-time-in-state-rollups.md): timeline rows with ids in
 * (watermark, target] are folded into stats_rollups at every level of ROLLUP_LEVELS and for three scopes
 * (installation, application, endpoint), in the transaction that moves the watermark, so a read that sees
 * the watermark sees exactly the rollups of the rows below it.
 *
 * Which ids are safe: identity values are handed out before their rows commit, so a row with a lower id
 * may still become visible after a higher one. A transaction takes its RowExclusiveLock on delivery_events
 * before it draws an id, and holds it until it ends. Each step reads the highest visible id and then the
 * transactions holding that lock; once none of those is running, every id up to that maximum is committed
 * or will never be (rolled back). With no writer at all, the maximum is safe at once.
 */

/** $1 state row locked or nothing (another process is rolling up). */
const LOCK_STATE = `SELECT rolled_id, pending_id, pending_writers FROM stats_rollup_state FOR UPDATE SKIP LOCKED`;

/**
 * $1 the previous step's writers. Returns the highest visible timeline id, the transactions now holding a
 * write lock on delivery_events (this one excluded), and how many of the previous writers still run. The
 * statement's snapshot is taken before pg_locks is read, which the argument above needs.
 */
const OBSERVE = `
SELECT coalesce((SELECT max(id) FROM delivery_events), 0)::bigint AS max_id,
       array(SELECT DISTINCT l.virtualtransaction FROM pg_locks l
             WHERE l.locktype = 'relation' AND l.relation = 'delivery_events'::regclass
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND l.mode = 'RowExclusiveLock' AND l.pid IS DISTINCT FROM pg_backend_pid()) AS writers,
       (SELECT count(*) FROM pg_locks l WHERE l.virtualtransaction = ANY($1::text[]))::int AS pending_live`;

const LEVEL_MS = ROLLUP_LEVELS.map((l) => l.levelMs);
const KEEP_MS = ROLLUP_LEVELS.map((l) => l.keepMs);
/** Width of the finest level, ms: rows are first counted per bucket of it (every level is a multiple of it). */
const FINEST_MS = LEVEL_MS[0]!;
if (LEVEL_MS.some((ms) => ms % FINEST_MS !== 0)) throw new Error('every rollup level must be a multiple of the finest');

/** `kept`: bit i set when the row is young enough for level i (`at >= now - keep of level i`). */
const KEPT_BITS = KEEP_MS.map(
  (_, i) => `((e.at >= t.now - ($6::bigint[])[${i + 1}] * interval '1 millisecond')::int << ${i})`,
).join(' | ');

/** The three scopes of a row: the installation, its application, its endpoint (a scope with a NULL id is left out). */
const SCOPES = `CROSS JOIN LATERAL (VALUES ('', ''), (f.app_id, ''), (f.app_id, f.endpoint_id)) sc(app_id, endpoint_id)
  WHERE sc.app_id IS NOT NULL AND sc.endpoint_id IS NOT NULL AND f.kept & (1 << lv.idx) <> 0`;

/**
 * ROLL_UP — $1 watermark (exclusive), $2 target id (inclusive), $3 bucket lower bounds (BOUNDS), $4 now
 * (NULL = database clock), $5 level widths ms, $6 how long each level is kept, ms, $7 the finest width ms.
 * Reads the timeline by primary key; a row older than a level's keep is not added at that level. The rows
 * are counted once per (finest bucket, application, endpoint, levels that keep them) — `fine` and `cells`
 * — and every level and scope is summed from those few groups, not from the rows again (a coarser bucket
 * holds whole finest buckets: the widths are multiples and share the epoch origin). Upserts one row per
 * (level, scope, bucket), adding counts and histograms into an existing row.
 */
const ROLL_UP = `
WITH lv AS (SELECT l.level_ms, (l.ord - 1)::int AS idx FROM unnest($5::int[]) WITH ORDINALITY AS l(level_ms, ord)),
t AS (SELECT coalesce($4::timestamptz, clock_timestamp()) AS now),
src AS MATERIALIZED (
  SELECT date_bin($7::int * interval '1 millisecond', e.at, timestamptz 'epoch') AS at, e.app_id, e.endpoint_id,
    (${KEPT_BITS}) AS kept,
         e.state, e.reason, e.latency_ms,
         CASE WHEN e.wait_ms IS NOT NULL THEN width_bucket(greatest(e.wait_ms, 0), $3::bigint[]) - 1 END AS w,
         CASE WHEN e.latency_ms IS NOT NULL THEN width_bucket(greatest(e.latency_ms, 0)::bigint,
           $3::bigint[]) - 1 END AS l,
         CASE WHEN e.state = 'succeeded' AND e.latency_ms IS NOT NULL AND e.since_publish_ms IS NOT NULL
           THEN width_bucket(greatest(e.since_publish_ms, 0), $3::bigint[]) - 1 END AS d
  FROM delivery_events e CROSS JOIN t WHERE e.id > $1 AND e.id <= $2
),
fine AS (
  SELECT at, app_id, endpoint_id, kept,
         count(latency_ms) AS attempts, count(latency_ms) FILTER (WHERE state = 'succeeded') AS succeeded,
         count(latency_ms) FILTER (WHERE reason = 'retry_scheduled') AS retries,
         count(*) FILTER (WHERE state = 'dead') AS dead, count(*)
           FILTER (WHERE state = 'leased' AND reason = 'reclaimed') AS reclaims
  FROM src WHERE kept <> 0 GROUP BY 1, 2, 3, 4
),
cells AS (
  SELECT at, app_id, endpoint_id, kept, x.m, x.b, count(*) AS n
  FROM src CROSS JOIN LATERAL (VALUES ('w', w), ('l', l), ('d', d)) x(m, b) WHERE x.b IS NOT NULL AND kept <> 0
  GROUP BY 1, 2, 3, 4, 5, 6
),
counts AS (
  SELECT lv.level_ms, sc.app_id, sc.endpoint_id, date_bin(lv.level_ms * interval '1 millisecond', f.at,
    timestamptz 'epoch') AS bucket_at,
         sum(f.attempts)::int AS attempts, sum(f.succeeded)::int AS succeeded, sum(f.retries)::int AS retries,
         sum(f.dead)::int AS dead, sum(f.reclaims)::int AS reclaims
  FROM fine f CROSS JOIN lv ${SCOPES}
  GROUP BY 1, 2, 3, 4
),
hist AS (
  SELECT level_ms, app_id, endpoint_id, bucket_at, m, jsonb_object_agg(b, n) AS h
  FROM (SELECT lv.level_ms, sc.app_id, sc.endpoint_id,
    date_bin(lv.level_ms * interval '1 millisecond', f.at, timestamptz 'epoch') AS bucket_at,
               f.m, f.b, sum(f.n)::bigint AS n
        FROM cells f CROSS JOIN lv ${SCOPES}
        GROUP BY 1, 2, 3, 4, 5, 6) s
  GROUP BY 1, 2, 3, 4, 5
)
INSERT INTO stats_rollups AS r (level_ms, app_id, endpoint_id, bucket_at, attempts, succeeded, retries, dead, reclaims,
  queue_wait, attempt_latency, time_to_delivered)
SELECT c.level_ms, c.app_id, c.endpoint_id, c.bucket_at, c.attempts, c.succeeded, c.retries, c.dead, c.reclaims,
       coalesce(hw.h, '{}'), coalesce(hl.h, '{}'), coalesce(hd.h, '{}')
FROM counts c
LEFT JOIN hist hw ON (hw.level_ms, hw.app_id, hw.endpoint_id, hw.bucket_at, hw.m) =
  (c.level_ms, c.app_id, c.endpoint_id, c.bucket_at, 'w')
LEFT JOIN hist hl ON (hl.level_ms, hl.app_id, hl.endpoint_id, hl.bucket_at, hl.m) =
  (c.level_ms, c.app_id, c.endpoint_id, c.bucket_at, 'l')
LEFT JOIN hist hd ON (hd.level_ms, hd.app_id, hd.endpoint_id, hd.bucket_at, hd.m) =
  (c.level_ms, c.app_id, c.endpoint_id, c.bucket_at, 'd')
ORDER BY 1, 2, 3, 4
ON CONFLICT (level_ms, app_id, endpoint_id, bucket_at) DO UPDATE SET
  attempts = r.attempts + EXCLUDED.attempts, succeeded = r.succeeded + EXCLUDED.succeeded,
    retries = r.retries + EXCLUDED.retries,
  dead = r.dead + EXCLUDED.dead, reclaims = r.reclaims + EXCLUDED.reclaims,
  queue_wait = tidings_histogram_add(r.queue_wait, EXCLUDED.queue_wait),
  attempt_latency = tidings_histogram_add(r.attempt_latency, EXCLUDED.attempt_latency),
  time_to_delivered = tidings_histogram_add(r.time_to_delivered, EXCLUDED.time_to_delivered)`;

/** $1 watermark, $2 pending id, $3 pending writers. */
const SAVE_STATE = `UPDATE stats_rollup_state SET rolled_id = $1, pending_id = $2, pending_writers = $3`;

/** $1 level width, $2 keep ms, $3 now (NULL = database clock), $4 most rows deleted. Index stats_rollups_age. */
const PRUNE = `
DELETE FROM stats_rollups WHERE ctid IN (
  SELECT ctid FROM stats_rollups
  WHERE level_ms = $1 AND bucket_at < coalesce($3::timestamptz,
    clock_timestamp()) - $2::bigint * interval '1 millisecond' - $1::int * interval '1 millisecond'
  LIMIT $4)`;

/** The PostgreSQL {@link StatsRollup}. */
export function createPgStatsRollup(db: Db): StatsRollup {
  return {
    step(now, maxIds) {
      return db.tx(async (q) => {
        const state = (
          await q.query<{ rolled_id: string; pending_id: string | null; pending_writers: string[] | null }>(LOCK_STATE)
        ).rows[0];
        if (state === undefined) return { ran: false, rolledIds: 0, rolledId: 0, caughtUp: true };
        const rolled = Number(state.rolled_id);
        const seen = (
          await q.query<{ max_id: string; writers: string[]; pending_live: number }>(OBSERVE, [
            state.pending_writers ?? [],
          ])
        ).rows[0]!;
        const maxId = Number(seen.max_id);
        let safe = rolled;
        if (seen.writers.length === 0) safe = maxId;
        else if (state.pending_id !== null && seen.pending_live === 0)
          safe = Math.max(rolled, Number(state.pending_id));
        const target = Math.min(safe, rolled + maxIds);
        if (target > rolled) await q.query(ROLL_UP, [rolled, target, BOUNDS, now, LEVEL_MS, KEEP_MS, FINEST_MS]);
        const pending = seen.writers.length === 0 ? [null, null] : [maxId, seen.writers];
        await q.query(SAVE_STATE, [target, ...pending]);
        for (const l of ROLLUP_LEVELS) await q.query(PRUNE, [l.levelMs, l.keepMs, now, maxIds]);
        return { ran: true, rolledIds: target - rolled, rolledId: target, caughtUp: target >= safe };
      });
    },
  };
}
