-- Up Migration
-- The timeline's three covering indexes hold only the rows the statistics count (docs/adr/0016-hot-path-cost.md,
-- decision 18): an attempt's outcome (latency_ms), a claim (wait_ms; a reclaim is a leased row), a dead
-- letter. A delivery's first row (published, scheduled, endpoint_disabled) and the rows of pauses, replays
-- and cancellations count in no figure of the statistics, so they take no entry there; the statistics reads
-- say so with the same predicate (COUNTED in src/adapters/postgres/delivery/stats-store.ts). A delivery's
-- timeline reads delivery_events_delivery, which keeps every row.

DROP INDEX delivery_events_at;
CREATE INDEX delivery_events_at ON delivery_events (at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');
DROP INDEX delivery_events_app_at;
CREATE INDEX delivery_events_app_at ON delivery_events (app_id, at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');
DROP INDEX delivery_events_endpoint_at;
CREATE INDEX delivery_events_endpoint_at ON delivery_events (endpoint_id, at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');

-- Down Migration
DROP INDEX delivery_events_endpoint_at;
CREATE INDEX delivery_events_endpoint_at ON delivery_events (endpoint_id, at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms);
DROP INDEX delivery_events_app_at;
CREATE INDEX delivery_events_app_at ON delivery_events (app_id, at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms);
DROP INDEX delivery_events_at;
CREATE INDEX delivery_events_at ON delivery_events (at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms);
