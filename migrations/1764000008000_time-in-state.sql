-- Up Migration
-- Time-in-state figures derived from the timeline (docs/adr/0013-observability.md). Every timeline row is
-- stamped, when it is written, with what the read side needs so that a window of a million rows is one
-- index range scan with no join:
-- - app_id, endpoint_id: the delivery's, to filter by application or endpoint;
-- - wait_ms: on a 'leased' row with reason 'claimed', the time the delivery waited in the queue
--   (claim instant − its due time, next_attempt_at), ms;
-- - since_publish_ms: the row's instant − the delivery's creation (= the message's publish instant), ms.
-- A BEFORE INSERT trigger fills them from the delivery row (one primary-key read per timeline row), so the
-- statements that write the timeline are unchanged. Rows written before this migration keep NULLs.

ALTER TABLE delivery_events
  ADD COLUMN app_id text,
  ADD COLUMN endpoint_id text,
  ADD COLUMN wait_ms bigint,
  ADD COLUMN since_publish_ms bigint;

CREATE FUNCTION tidings_stamp_delivery_event() RETURNS trigger
LANGUAGE plpgsql AS $stamp$
DECLARE
  d record;
BEGIN
  SELECT app_id, endpoint_id, created_at, next_attempt_at INTO d FROM deliveries WHERE id = NEW.delivery_id;
  IF FOUND THEN
    NEW.app_id := d.app_id;
    NEW.endpoint_id := d.endpoint_id;
    NEW.since_publish_ms := greatest(0, round(extract(epoch FROM NEW.at - d.created_at) * 1000))::bigint;
    IF NEW.state = 'leased' AND NEW.reason = 'claimed' AND d.next_attempt_at <> 'infinity' THEN
      NEW.wait_ms := greatest(0, round(extract(epoch FROM NEW.at - d.next_attempt_at) * 1000))::bigint;
    END IF;
  END IF;
  RETURN NEW;
END
$stamp$;

CREATE TRIGGER delivery_events_stamp BEFORE INSERT ON delivery_events
  FOR EACH ROW EXECUTE FUNCTION tidings_stamp_delivery_event();

-- Window reads: the whole installation by instant, an application or an endpoint by instant. The included
-- columns make each an index-only range scan.
CREATE INDEX delivery_events_at ON delivery_events (at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms);
CREATE INDEX delivery_events_app_at ON delivery_events (app_id, at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms);
CREATE INDEX delivery_events_endpoint_at ON delivery_events (endpoint_id, at) INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms);

-- Dead-letter inflow of the last 24 h (overview): the few 'dead' rows only.
CREATE INDEX delivery_events_dead_at ON delivery_events (at) WHERE state = 'dead';
CREATE INDEX delivery_events_dead_app_at ON delivery_events (app_id, at) WHERE state = 'dead';

-- Down Migration
DROP INDEX delivery_events_dead_app_at, delivery_events_dead_at, delivery_events_endpoint_at, delivery_events_app_at, delivery_events_at;
DROP TRIGGER delivery_events_stamp ON delivery_events;
DROP FUNCTION tidings_stamp_delivery_event();
ALTER TABLE delivery_events DROP COLUMN since_publish_ms, DROP COLUMN wait_ms, DROP COLUMN endpoint_id, DROP COLUMN app_id;
