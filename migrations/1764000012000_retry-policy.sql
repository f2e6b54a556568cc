-- Up Migration
-- Retry policies per endpoint and per event type (docs/adr/0025-retry-policy-snapshot.md). Each `retry_policy` is
-- a JSON object holding only the fields that are set, in the names of src/domain/retry-policy.ts:
-- {"scheduleMs": [ms, …], "attemptTimeoutMs": ms, "maxAttempts": n}; NULL = nothing set (fall back).
-- - endpoints.retry_policy, event_types.retry_policy: set through the API's retry-policy routes, checked there
--   against the installation's limits;
-- - deliveries.retry_policy: the snapshot, taken by every statement that creates a delivery (publish, example,
--   resend, replay-missing) with tidings_retry_policy below, and returned by the claim; the dispatcher fills what it
--   leaves unset from the installation's settings at each attempt. A delivery keeps the policy it was created with.
-- Adding nullable columns without a default rewrites nothing (PostgreSQL 15+, PGlite); deliveries without a
-- policy store nothing but a null bit.
--
-- The claim functions (src/adapters/postgres/delivery/claim.sql, claim-ids.sql) return the snapshot: CREATE OR
-- REPLACE cannot change a function's result columns, so they are dropped here and the migrator re-creates them
-- from their routine files.

ALTER TABLE endpoints ADD COLUMN retry_policy jsonb;
ALTER TABLE event_types ADD COLUMN retry_policy jsonb;
ALTER TABLE deliveries ADD COLUMN retry_policy jsonb;

-- The policy a new delivery stores: the event type's fields overlaid by the endpoint's (the endpoint's win, field
-- by field); NULL when neither sets any. The rule of mergeRetryPolicy (src/domain/retry-policy.ts), written once
-- for every statement that creates deliveries; one IMMUTABLE expression, so the planner inlines it.
CREATE FUNCTION tidings_retry_policy(endpoint_policy jsonb, event_type_policy jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $policy$
  SELECT nullif(coalesce(event_type_policy, '{}'::jsonb) || coalesce(endpoint_policy, '{}'::jsonb), '{}'::jsonb)
$policy$;

DROP FUNCTION IF EXISTS tidings_claim(text, integer, integer, timestamptz, integer, text[], integer, text[], integer[],
                                      text[], text[], integer);
DROP FUNCTION IF EXISTS tidings_claim_ids(text, bigint[], integer, timestamptz, integer, text[], integer, text[],
                                          integer[], text[], text[], integer);
-- Their recorded checksums go too, so that the migrator re-creates them whatever their files hold.
DO $routines$
BEGIN
  IF to_regclass('tidings_routines') IS NOT NULL THEN
    DELETE FROM tidings_routines WHERE name IN ('tidings_claim', 'tidings_claim_ids');
  END IF;
END
$routines$;
