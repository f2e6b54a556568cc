-- Up Migration
-- The stamp trigger of 1764000008000 runs only for a timeline row that arrives unstamped
-- (docs/adr/0016-hot-path-cost.md, decision 10). The publish, claim and record statements write app_id,
-- endpoint_id, since_publish_ms and (claimed rows) wait_ms themselves, from the delivery row they already
-- hold, with the trigger's formulas; the trigger's function call and its primary-key read per row were 5.6 %
-- of PostgreSQL's time on the delivery path. Every other writer of delivery_events (replay, resend, disable,
-- the sweep, the release at a graceful stop, an endpoint's deletion, examples) leaves those columns NULL and is
-- stamped by the trigger as before. A row is unstamped when app_id, endpoint_id or since_publish_ms is NULL;
-- the trigger's function is unchanged.

DROP TRIGGER delivery_events_stamp ON delivery_events;
CREATE TRIGGER delivery_events_stamp BEFORE INSERT ON delivery_events
  FOR EACH ROW WHEN (NEW.app_id IS NULL OR NEW.endpoint_id IS NULL OR NEW.since_publish_ms IS NULL)
  EXECUTE FUNCTION tidings_stamp_delivery_event();

-- Down Migration
DROP TRIGGER delivery_events_stamp ON delivery_events;
CREATE TRIGGER delivery_events_stamp BEFORE INSERT ON delivery_events
  FOR EACH ROW EXECUTE FUNCTION tidings_stamp_delivery_event();
