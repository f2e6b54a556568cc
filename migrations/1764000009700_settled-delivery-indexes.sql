-- Up Migration
-- Two indexes of deliveries take no entry at the claim (docs/adr/0016-hot-path-cost.md, decision 17). No
-- update of a delivery is a HOT update (its state is indexed), so a full index of deliveries takes an entry
-- at the insert, at the claim and at the record. A partial index takes one only when the new row version
-- matches its predicate.
-- - deliveries_app_state keeps settled deliveries only (succeeded, dead, skipped, canceled): the reads it
--   serves (dead letters, replays, an application's counts by state) ask for settled states; an
--   application's pending and leased deliveries are read through its endpoints (endpoints_app_including_deleted,
--   then deliveries_endpoint_due and deliveries_endpoint_leased).
-- - deliveries_endpoint_message keeps every delivery but the leased ones: an endpoint's messages and counts
--   read its leased deliveries, at most what the dispatchers' windows hold, from deliveries_endpoint_leased.

DROP INDEX deliveries_app_state;
CREATE INDEX deliveries_app_state ON deliveries (app_id, state, id) WHERE state NOT IN ('pending', 'leased');
DROP INDEX deliveries_endpoint_message;
CREATE INDEX deliveries_endpoint_message ON deliveries (endpoint_id, message_id) WHERE state <> 'leased';

-- An application's endpoints, deleted ones included (a soft-deleted endpoint's leased deliveries are still
-- counted until their outcome is recorded): endpoints_app holds the live ones only.
CREATE INDEX endpoints_app_including_deleted ON endpoints (app_id, id);

-- A deleted endpoint takes its deliveries with it: the leased ones through deliveries_endpoint_leased, the
-- others through deliveries_endpoint_message.
CREATE OR REPLACE FUNCTION tidings_delete_endpoint_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $cascade$
BEGIN
  DELETE FROM deliveries WHERE endpoint_id IN (SELECT id FROM gone) AND state <> 'leased';
  DELETE FROM deliveries WHERE endpoint_id IN (SELECT id FROM gone) AND state = 'leased';
  RETURN NULL;
END
$cascade$;

-- Down Migration
DROP INDEX endpoints_app_including_deleted;
CREATE OR REPLACE FUNCTION tidings_delete_endpoint_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $cascade$
BEGIN
  DELETE FROM deliveries WHERE endpoint_id IN (SELECT id FROM gone);
  RETURN NULL;
END
$cascade$;
DROP INDEX deliveries_endpoint_message;
CREATE INDEX deliveries_endpoint_message ON deliveries (endpoint_id, message_id);
DROP INDEX deliveries_app_state;
CREATE INDEX deliveries_app_state ON deliveries (app_id, state, id);
