-- Up Migration
-- Whether an endpoint may take a delivery without the claim's flow control, written once as two SQL functions
-- of the endpoint aggregate (docs/adr/0004-endpoint-flow-control.md, docs/adr/0018-publish-hands-off-leases.md):
-- - tidings_endpoint_ungated: the endpoint needs no gate of the claim: no in-flight cap, no rate limit and a
--   closed breaker. A gated endpoint's deliveries are claimed only under its advisory lock (the claim's step 1);
-- - tidings_endpoint_accepting: the endpoint takes work at `at`: active, not deleted, not throttled.
-- The claim (src/adapters/postgres/delivery/claim.sql) reads both to pick the endpoints it claims from and the
-- ones it gates; the publish statement's hand-off (src/adapters/postgres/message/publish-sql.ts) leases a new
-- delivery at once only to an endpoint that is accepting and ungated.
-- Each is one SQL expression, IMMUTABLE (it reads only its arguments), so the planner inlines it into the query
-- that calls it: the plans are those of the expressions written out (test/integration/gate-rule-plan.test.ts).
-- Runs unchanged on PostgreSQL 15+ and on the embedded engine (PGlite).

CREATE FUNCTION tidings_endpoint_ungated(ep endpoints) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $gate$
  SELECT (ep).max_in_flight IS NULL AND (ep).rate_limit_per_s IS NULL AND (ep).breaker_state = 'closed'
$gate$;

CREATE FUNCTION tidings_endpoint_accepting(ep endpoints, at timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $gate$
  SELECT (ep).status = 'active' AND (ep).deleted_at IS NULL
         AND ((ep).throttled_until IS NULL OR (ep).throttled_until <= at)
$gate$;
