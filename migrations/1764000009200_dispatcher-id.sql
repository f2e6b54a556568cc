-- Up Migration
-- One name for the process that claims and attempts deliveries: the dispatcher (docs/design.md#the-protocol).
-- The columns that hold its id were named lease_owner (deliveries) and worker_id (timeline and attempt rows);
-- they become dispatcher_id, as in the code, the API (`dispatcherId`) and TIDINGS_DISPATCHER_ID.
--
-- The claim function names the id p_dispatcher. PostgreSQL cannot rename a parameter through CREATE OR
-- REPLACE, so the current function is dropped here; the migrator creates it again from
-- src/adapters/postgres/delivery/claim.sql right after the migrations, under the same lock. The two earlier
-- claim signatures, kept so that dispatchers of an earlier version could claim during a rolling upgrade,
-- are dropped too: their bodies name the old columns. Upgrading across this migration therefore needs the
-- dispatchers of the earlier version stopped first (their statements name the old columns).

ALTER TABLE deliveries RENAME COLUMN lease_owner TO dispatcher_id;
ALTER TABLE delivery_events RENAME COLUMN worker_id TO dispatcher_id;
ALTER TABLE attempts RENAME COLUMN worker_id TO dispatcher_id;
ALTER TABLE fenced_attempts RENAME COLUMN worker_id TO dispatcher_id;
DROP FUNCTION IF EXISTS tidings_claim(text, integer, integer, timestamptz, integer, text[], integer, text[], integer[], text[], text[], integer);
DROP FUNCTION IF EXISTS tidings_claim(text, integer, integer, timestamptz, integer, text[], text[]);
DROP FUNCTION IF EXISTS tidings_claim(text, integer, integer, timestamptz, integer, text[], text[], integer, text[], integer[], text[], text[], integer);
-- Forget the recorded checksums, so that the migrator applies every routine again whatever it recorded.
DO $$ BEGIN
  IF to_regclass('tidings_routines') IS NOT NULL THEN DELETE FROM tidings_routines; END IF;
END $$;

-- Down Migration
ALTER TABLE fenced_attempts RENAME COLUMN dispatcher_id TO worker_id;
ALTER TABLE attempts RENAME COLUMN dispatcher_id TO worker_id;
ALTER TABLE delivery_events RENAME COLUMN dispatcher_id TO worker_id;
ALTER TABLE deliveries RENAME COLUMN dispatcher_id TO lease_owner;
