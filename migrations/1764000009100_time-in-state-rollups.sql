-- Up Migration
-- Time-in-state rollups (docs/adr/0015-time-in-state-rollups.md). A maintenance task of the API processes
-- folds timeline rows into per-bucket rollups, from a watermark over timeline ids; the delivery statements
-- and the stamp trigger are unchanged. A read sums the rollup buckets inside its window, and reads raw
-- timeline rows for the partial buckets at its two edges and for the rows above the watermark.

-- One row per (bucket width, scope, bucket start). Scope: app_id = '' and endpoint_id = '' is the whole
-- installation, endpoint_id = '' one application, both set one endpoint. Histograms are sparse jsonb
-- objects {bucket index: count} over the fixed log-scale buckets of src/domain/duration-histogram.ts.
CREATE TABLE stats_rollups (
  level_ms          integer NOT NULL,
  app_id            text NOT NULL,
  endpoint_id       text NOT NULL,
  bucket_at         timestamptz NOT NULL,
  attempts          integer NOT NULL,
  succeeded         integer NOT NULL,
  retries           integer NOT NULL,
  dead              integer NOT NULL,
  reclaims          integer NOT NULL,
  queue_wait        jsonb NOT NULL,
  attempt_latency   jsonb NOT NULL,
  time_to_delivered jsonb NOT NULL,
  PRIMARY KEY (level_ms, app_id, endpoint_id, bucket_at)
);
-- Pruning by age, per bucket width.
CREATE INDEX stats_rollups_age ON stats_rollups (level_ms, bucket_at);

-- The watermark. Every timeline row with id <= rolled_id is counted in stats_rollups, none above it.
-- pending_id / pending_writers: the highest timeline id seen by the last run and the transactions that then
-- held a write lock on delivery_events (pg_locks virtualtransaction); once none of them is running, every
-- row with an id up to pending_id is committed or gone, so the watermark may move there.
CREATE TABLE stats_rollup_state (
  singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  rolled_id       bigint NOT NULL,
  pending_id      bigint,
  pending_writers text[]
);
INSERT INTO stats_rollup_state (rolled_id) VALUES (0);

-- Sum of two sparse histograms (used when a run adds rows into a bucket that already has a rollup row).
CREATE FUNCTION tidings_histogram_add(a jsonb, b jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $add$
  SELECT coalesce(jsonb_object_agg(k, n), '{}'::jsonb)
  FROM (SELECT k, sum(v::bigint) AS n
        FROM (SELECT key, value FROM jsonb_each_text(a) UNION ALL SELECT key, value FROM jsonb_each_text(b)) e(k, v)
        GROUP BY k) s
$add$;

-- Down Migration
DROP FUNCTION tidings_histogram_add(jsonb, jsonb);
DROP TABLE stats_rollup_state;
DROP TABLE stats_rollups;
