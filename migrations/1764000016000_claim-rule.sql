-- Up Migration
-- The gate and rank steps shared by the two claims, written once as SQL functions beside the endpoint's gate rule
-- of migration 1764000010000: the claim (src/adapters/postgres/delivery/claim.sql) and the claim by id of the broker
-- transports (claim-ids.sql) read them all, so that a cap, a bucket, a probe or the reserve cannot mean one thing
-- to one transport and another to the other.
-- - tidings_endpoint_claimable: the endpoint may be claimed from at `at`: accepting, and no breaker cool-down
--   running (an open breaker whose cool-down ended lets its probe out);
-- - tidings_endpoint_gate_lock: the gate's try-only, transaction-scoped advisory lock of one endpoint (step 1 of
--   both claims): the same key for every claim, so that two dispatchers never claim from one gated endpoint at once;
-- - tidings_endpoint_tokens: the endpoint's token bucket refilled up to `at` (NULL: no rate limit);
-- - tidings_endpoint_room: how many of `upto` deliveries its breaker (one probe when nothing is in flight), in-flight
--   cap (less its live leases) and bucket (whole tokens) let it take now;
-- - tidings_window_allowance: what an endpoint takes of the caller's window reserve (ADR 0009): all of its
--   part when known to be answering; else its part within the budget left after the endpoints before it in turn,
--   and past it one delivery for an endpoint that holds nothing and is not known to be unresponsive;
-- - tidings_endpoint_reclaimable: an expired lease of the endpoint may be taken over: active, not deleted, breaker
--   closed.
-- Each is one SQL expression, so the planner inlines it into the claim that calls it (IMMUTABLE where it reads only
-- its arguments; the lock is VOLATILE): the plans are those of the expressions written out
-- (test/integration/gate-rule-plan.test.ts). Runs unchanged on PostgreSQL 15+ and on the embedded engine (PGlite).

CREATE FUNCTION tidings_endpoint_claimable(ep endpoints, at timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $rule$
  SELECT tidings_endpoint_accepting(ep, at) AND ((ep).breaker_state <> 'open' OR (ep).breaker_open_until <= at)
$rule$;

CREATE FUNCTION tidings_endpoint_gate_lock(endpoint_id text) RETURNS boolean
LANGUAGE sql VOLATILE AS $rule$
  SELECT pg_try_advisory_xact_lock(1953064039, hashtext(endpoint_id))
$rule$;

CREATE FUNCTION tidings_endpoint_tokens(ep endpoints, at timestamptz) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $rule$
  SELECT CASE WHEN (ep).rate_limit_per_s IS NULL THEN NULL
              ELSE least(coalesce((ep).rate_burst, (ep).rate_limit_per_s)::float8,
                         coalesce((ep).rate_tokens, coalesce((ep).rate_burst, (ep).rate_limit_per_s)::float8)
                         + extract(epoch FROM at - coalesce((ep).rate_refilled_at, at)) * (ep).rate_limit_per_s) END
$rule$;

CREATE FUNCTION tidings_endpoint_room(breaker text, cap integer, tokens float8, live integer, upto integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $rule$
  SELECT least(upto,
               CASE WHEN breaker = 'closed' THEN upto WHEN live = 0 THEN 1 ELSE 0 END,
               CASE WHEN cap IS NULL THEN upto ELSE greatest(0, cap - live) END,
               CASE WHEN tokens IS NULL THEN upto ELSE greatest(0, floor(tokens))::int END)
$rule$;

CREATE FUNCTION tidings_window_allowance(part integer, answering boolean, held integer, unresponsive boolean,
                                         budget integer, taken_before bigint) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $rule$
  SELECT CASE WHEN answering THEN part
              ELSE greatest(least(part, greatest(0, budget - coalesce(taken_before, 0)))::int,
                            CASE WHEN held = 0 AND NOT unresponsive THEN least(part, 1) ELSE 0 END) END
$rule$;

CREATE FUNCTION tidings_endpoint_reclaimable(ep endpoints) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $rule$
  SELECT (ep).status = 'active' AND (ep).deleted_at IS NULL AND (ep).breaker_state = 'closed'
$rule$;
