-- Up Migration
-- History in time partitions (docs/adr/0030-history-partitions.md): the attempts and the timeline (delivery_events)
-- become tables partitioned by range of their instant (attempts.created_at, delivery_events.at). Their primary keys
-- now hold that instant, (id, created_at) and (id, at): a partitioned table's unique constraints must include its
-- partition key. No foreign key points at either table and no statement writes them with ON CONFLICT.
--
-- - A DEFAULT partition (<table>_default) takes every row whose instant has no partition yet, so a write never
--   fails for want of one. Tidings creates partitions ahead of time (src/adapters/postgres/history-partitions.ts,
--   TIDINGS_HISTORY_PARTITION_WIDTH and TIDINGS_HISTORY_PARTITIONS_AHEAD) and moves any row the default holds for
--   a range into the partition it creates for it.
-- - The rows written before this migration stay where they are: the old table becomes the partition
--   <table>_legacy, FROM (MINVALUE) TO (the next UTC midnight after the newest row and after now). Nothing is
--   copied; attaching it builds the index of the new primary key and reads the table once to check its range
--   (ACCESS EXCLUSIVE on the two tables while this migration runs, as any start-up migration holds its tables). An
--   empty old table is dropped instead. Retention drops the legacy partition like any other once its range has
--   aged out and no live delivery holds rows in it.
-- - Partition indexes are named after the parent's index with the partition's suffix (attempts_message_default,
--   attempts_message_p20261207t0000), so that a plan names the index it reads.
-- - delivery_events.id keeps counting from where it was: the roll-up's watermark is an id
--   (docs/adr/0015-time-in-state-rollups.md).

-- attempts ------------------------------------------------------------------------------------------------------
ALTER TABLE attempts RENAME TO attempts_legacy;
ALTER TABLE attempts_legacy RENAME CONSTRAINT attempts_pkey TO attempts_legacy_old_pkey;
ALTER INDEX attempts_message RENAME TO attempts_message_legacy;
ALTER INDEX attempts_endpoint RENAME TO attempts_endpoint_legacy;
ALTER INDEX attempts_delivery RENAME TO attempts_delivery_legacy;

CREATE TABLE attempts (LIKE attempts_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE (created_at);
ALTER TABLE attempts ADD CONSTRAINT attempts_pkey PRIMARY KEY (id, created_at);
CREATE INDEX attempts_message ON attempts (message_id, id);
CREATE INDEX attempts_endpoint ON attempts (endpoint_id, id);
CREATE INDEX attempts_delivery ON attempts (delivery_id, id);
CREATE TABLE attempts_default PARTITION OF attempts DEFAULT;

-- delivery_events ----------------------------------------------------------------------------------------------
DROP TRIGGER delivery_events_stamp ON delivery_events;
ALTER TABLE delivery_events RENAME TO delivery_events_legacy;
ALTER SEQUENCE delivery_events_id_seq RENAME TO delivery_events_legacy_id_seq;
ALTER TABLE delivery_events_legacy RENAME CONSTRAINT delivery_events_pkey TO delivery_events_legacy_old_pkey;
ALTER INDEX delivery_events_delivery RENAME TO delivery_events_delivery_legacy;
ALTER INDEX delivery_events_at RENAME TO delivery_events_at_legacy;
ALTER INDEX delivery_events_app_at RENAME TO delivery_events_app_at_legacy;
ALTER INDEX delivery_events_endpoint_at RENAME TO delivery_events_endpoint_at_legacy;
ALTER INDEX delivery_events_dead_at RENAME TO delivery_events_dead_at_legacy;
ALTER INDEX delivery_events_dead_app_at RENAME TO delivery_events_dead_app_at_legacy;

CREATE TABLE delivery_events (LIKE delivery_events_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY)
  PARTITION BY RANGE (at);
ALTER TABLE delivery_events ADD CONSTRAINT delivery_events_pkey PRIMARY KEY (id, at);
SELECT setval(pg_get_serial_sequence('delivery_events', 'id'), s.last_value, s.is_called)
FROM delivery_events_legacy_id_seq s;
ALTER TABLE delivery_events_legacy ALTER COLUMN id DROP IDENTITY;
CREATE INDEX delivery_events_delivery ON delivery_events (delivery_id, id);
CREATE INDEX delivery_events_at ON delivery_events (at)
  INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');
CREATE INDEX delivery_events_app_at ON delivery_events (app_id, at)
  INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');
CREATE INDEX delivery_events_endpoint_at ON delivery_events (endpoint_id, at)
  INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');
CREATE INDEX delivery_events_dead_at ON delivery_events (at) WHERE state = 'dead';
CREATE INDEX delivery_events_dead_app_at ON delivery_events (app_id, at) WHERE state = 'dead';
CREATE TABLE delivery_events_default PARTITION OF delivery_events DEFAULT;
CREATE TRIGGER delivery_events_stamp BEFORE INSERT ON delivery_events
  FOR EACH ROW WHEN (NEW.app_id IS NULL OR NEW.endpoint_id IS NULL OR NEW.since_publish_ms IS NULL)
  EXECUTE FUNCTION tidings_stamp_delivery_event();

-- The old rows: attached as <table>_legacy, or dropped when there are none ----------------------------------------
DO $legacy$
DECLARE
  cut timestamptz := date_trunc('day', greatest(now(), (SELECT max(created_at) FROM attempts_legacy),
                                                (SELECT max(at) FROM delivery_events_legacy)), 'UTC')
                     + interval '1 day';
  r record;
BEGIN
  IF EXISTS (SELECT 1 FROM attempts_legacy) THEN
    ALTER TABLE attempts_legacy DROP CONSTRAINT attempts_legacy_old_pkey;
    EXECUTE format('ALTER TABLE attempts ATTACH PARTITION attempts_legacy FOR VALUES FROM (MINVALUE) TO (%L)', cut);
  ELSE
    DROP TABLE attempts_legacy;
  END IF;
  IF EXISTS (SELECT 1 FROM delivery_events_legacy) THEN
    ALTER TABLE delivery_events_legacy DROP CONSTRAINT delivery_events_legacy_old_pkey;
    EXECUTE format('ALTER TABLE delivery_events ATTACH PARTITION delivery_events_legacy '
                   'FOR VALUES FROM (MINVALUE) TO (%L)', cut);
  ELSE
    DROP TABLE delivery_events_legacy;
  END IF;
  -- Each partition's index is named after its parent's, with the partition's suffix.
  FOR r IN
    SELECT ci.relname AS child, pi.relname AS parent, substr(t.relname, length(pt.relname) + 2) AS suffix
    FROM pg_inherits i
    JOIN pg_class ci ON ci.oid = i.inhrelid JOIN pg_class pi ON pi.oid = i.inhparent
    JOIN pg_index x ON x.indexrelid = ci.oid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_index px ON px.indexrelid = pi.oid JOIN pg_class pt ON pt.oid = px.indrelid
    WHERE pt.relname IN ('attempts', 'delivery_events')
      AND ci.relname <> pi.relname || '_' || substr(t.relname, length(pt.relname) + 2)
  LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', r.child, r.parent || '_' || r.suffix);
  END LOOP;
END
$legacy$;

-- Retention prunes a succeeded delivery by deleting its row (deliveries is not partitioned). Its history rows in a
-- dated partition are then left to go with that partition, at most one partition width later (retention drops a
-- partition once its range is older than TIDINGS_RETENTION_SUCCEEDED_AGE); only the rows in the default and legacy
-- partitions are deleted with it. Retention's prune says so by setting tidings.history_by_partition in its
-- transaction. Every other delete of a delivery (its message or endpoint deleted) still takes all its rows.
CREATE OR REPLACE FUNCTION tidings_delete_delivery_rows() RETURNS trigger
LANGUAGE plpgsql AS $cascade$
BEGIN
  IF coalesce(current_setting('tidings.history_by_partition', true), '') = 'on' THEN
    DELETE FROM delivery_events_default WHERE delivery_id IN (SELECT id FROM gone);
    DELETE FROM attempts_default WHERE delivery_id IN (SELECT id FROM gone);
    IF to_regclass('delivery_events_legacy') IS NOT NULL THEN
      EXECUTE 'DELETE FROM delivery_events_legacy WHERE delivery_id IN (SELECT id FROM gone)';
    END IF;
    IF to_regclass('attempts_legacy') IS NOT NULL THEN
      EXECUTE 'DELETE FROM attempts_legacy WHERE delivery_id IN (SELECT id FROM gone)';
    END IF;
  ELSE
    DELETE FROM delivery_events WHERE delivery_id IN (SELECT id FROM gone);
    DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM gone);
  END IF;
  RETURN NULL;
END
$cascade$;
