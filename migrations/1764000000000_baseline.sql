-- Up Migration
-- Tidings schema at 0.1.0: the baseline (docs/adr/0019-migration-baseline.md). It replaces the nineteen
-- migrations 1764000000000_init … 1764000009800_counted-timeline-indexes and makes the schema they made, to
-- the column order: a column that a later migration added stands after the ones it was added to, so a database
-- made here and one migrated through that history are the same (test/fixtures/schema.txt, on both engines).
-- A database whose pgmigrations table holds those nineteen names is marked as at this baseline by the migrator
-- (src/adapters/postgres/migrator.ts). Comments and ADRs that cite one of those migrations by number find its
-- part here under the same number. From 0.1.0 on, migrations are forward-only and never edited.
--
-- Not here: the claim (tidings_claim), a routine kept in src/adapters/postgres/delivery/claim.sql and applied
-- by the migrator after the migrations (src/adapters/postgres/routines.ts); 1764000004000, 1764000005000 and
-- 1764000006000 defined it, 1764000009200 dropped those versions. The decisions behind the tables
-- and indexes are in docs/adr/0002-schema-and-claim.md and the ADRs named below.
-- Runs unchanged on PostgreSQL 15+ and on the embedded engine (PGlite).

-- Credentials. The admin token and API keys are stored as SHA-256 hashes; app_id NULL = operator scope.
-- Application-portal tokens expire; a read-only key may only read (1764000003000). What a credential scoped to
-- one application may do (1764000007000, docs/adr/0011-credential-capabilities.md):
-- - portal: an app-portal token (Svix `appPortalAccess`) rather than an application key;
-- - capabilities: those the token was issued with; NULL = those its kind and read_only give (read-only →
--   ViewBase; portal → every Svix capability; an application key → every capability);
-- - session_id: Svix `sessionId`, so that `expire-all` with `sessionIds` ends only those sessions' tokens;
-- - feature_flags: Svix `featureFlags`, returned to the portal by GET /api/v1/auth/me.
CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  role          text NOT NULL CHECK (role IN ('admin', 'app')),
  app_id        text,
  token_hash    bytea NOT NULL UNIQUE,
  token_prefix  text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at    timestamptz,
  expires_at    timestamptz,
  read_only     boolean NOT NULL DEFAULT false,
  portal        boolean NOT NULL DEFAULT false,
  capabilities  text[],
  session_id    text,
  feature_flags text[]
);
CREATE INDEX api_keys_app ON api_keys (app_id) WHERE revoked_at IS NULL;

CREATE TABLE applications (
  id              text PRIMARY KEY,
  uid             text UNIQUE,
  name            text NOT NULL,
  rate_limit      integer,
  metadata        jsonb NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Event types, with the fields of Svix `EventTypeOut` (1764000002000, docs/adr/0003-svix-compatibility.md).
-- Every row carries a revision, drawn from one sequence when the row is written and again on every update
-- (trigger event_types_revision below), so that (name, revision) names one state of the row for ever: a type
-- deleted and registered again gets a revision never seen before. A publish that checked its payload against a
-- type it read earlier (the API's lookup cache, docs/adr/0006-round-trips-and-wake-ups.md) passes the revision it
-- checked, and the publish statement stores nothing when the row's revision has changed since (1764000009600).
CREATE SEQUENCE event_type_revisions;
CREATE TABLE event_types (
  name          text PRIMARY KEY,
  description   text NOT NULL DEFAULT '',
  schemas       jsonb,
  feature_flag  text,
  archived      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  deprecated    boolean NOT NULL DEFAULT false,
  group_name    text,
  feature_flags text[],
  revision      bigint NOT NULL DEFAULT nextval('event_type_revisions')
);

-- An endpoint: URL, secrets (encrypted, each names its key id), subscription (filter_types, channels),
-- operator status and the health columns that the breaker, throttle and rate limiter change by atomic
-- single-statement updates (never locked by the claim); breaker_changed_at is when the breaker last changed
-- state (1764000001000, docs/adr/0004-endpoint-flow-control.md).
CREATE TABLE endpoints (
  id                      text PRIMARY KEY,
  app_id                  text NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  uid                     text,
  url                     text NOT NULL,
  description             text NOT NULL DEFAULT '',
  version                 integer NOT NULL DEFAULT 1,
  filter_types            text[],
  channels                text[],
  metadata                jsonb NOT NULL DEFAULT '{}',
  headers                 jsonb NOT NULL DEFAULT '{}',
  sensitive_headers       bytea,
  sensitive_headers_key   text,
  secret                  bytea NOT NULL,
  secret_key_id           text NOT NULL,
  previous_secret         bytea,
  previous_secret_key_id  text,
  previous_secret_until   timestamptz,
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'disabled')),
  status_reason           text,
  status_changed_at       timestamptz,
  max_in_flight           integer,
  rate_limit_per_s        integer,
  rate_burst              integer,
  rate_tokens             double precision,
  rate_refilled_at        timestamptz,
  throttled_until         timestamptz,
  breaker_state           text NOT NULL DEFAULT 'closed' CHECK (breaker_state IN ('closed', 'open', 'half_open')),
  breaker_open_until      timestamptz,
  breaker_opened_count    integer NOT NULL DEFAULT 0,
  consecutive_failures    integer NOT NULL DEFAULT 0,
  failing_since           timestamptz,
  last_success_at         timestamptz,
  deleted_at              timestamptz,
  created_at              timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at              timestamptz NOT NULL DEFAULT clock_timestamp(),
  breaker_changed_at      timestamptz
);
CREATE UNIQUE INDEX endpoints_app_uid ON endpoints (app_id, uid) WHERE uid IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX endpoints_app ON endpoints (app_id, id) WHERE deleted_at IS NULL;
-- An application's endpoints, deleted ones included (a soft-deleted endpoint's leased deliveries are still
-- counted until their outcome is recorded): endpoints_app holds the live ones only (1764000009700).
CREATE INDEX endpoints_app_including_deleted ON endpoints (app_id, id);

-- A published event. payload holds the exact bytes of the request's payload value, encrypted under
-- payload_key_id (NULL = stored in plain text); payload_expunged_at is set when content was erased.
-- - pruned_settled_at: when the retention job removes succeeded deliveries it keeps here the latest instant
--   one of them reached its final state, so the payload's retention still counts from the last terminal
--   transition of all the message's deliveries (docs/adr/0005-secrets-tenants-retention.md).
-- - content_type: NULL for a JSON payload (delivered as application/json), else the content type a raw message
--   is delivered with (payload then holds the raw body). deliver_at: the instant the publisher asked for the
--   first attempt (Svix `deliverAt`), NULL = at once; the deliveries' next_attempt_at carries it, this column
--   only echoes it (1764000005000, docs/guides/coming-from-svix.md, "Raw messages" and "Scheduled messages").
-- - trace_context: the W3C trace context of the publishing request, {"traceparent": "00-…", "tracestate": "…"},
--   written only when tracing is on, NULL otherwise (1764000009000, docs/adr/0014-traces.md).
CREATE TABLE messages (
  id                   text PRIMARY KEY,
  app_id               text NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  event_id             text,
  event_type           text NOT NULL,
  channels             text[],
  tags                 text[],
  payload              bytea,
  payload_key_id       text,
  payload_expunged_at  timestamptz,
  retention_hours      integer,
  created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  pruned_settled_at    timestamptz,
  content_type         text,
  deliver_at           timestamptz,
  trace_context        jsonb
);
CREATE UNIQUE INDEX messages_app_event_id ON messages (app_id, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX messages_app_created ON messages (app_id, id);
-- Payloads still held, by retention class (-1 = the deployment default) and age: each class is one range scan
-- of rows old enough to expire.
CREATE INDEX messages_payload_held ON messages ((coalesce(retention_hours, -1)), created_at, id)
  WHERE payload_expunged_at IS NULL;

-- One message to one endpoint: the row that carries the state machine, the lease and the fencing token.
-- attempt_count counts recorded attempts only (a claim never charges one); reclaim_count counts claims of an
-- expired lease since the last recorded outcome; dispatcher_id is the lease's owner (named lease_owner until
-- 1764000009200, as the timeline's and attempts' dispatcher_id were named worker_id).
-- Its references (message, application, endpoint) hold by construction, not by foreign keys whose check runs
-- once per row (1764000009500, docs/adr/0016-hot-path-cost.md, decision 13): a delivery is written with its
-- message, by the statement that inserts the message, or by a statement that locks the message FOR KEY SHARE;
-- its application and endpoint are the message's and one of that application's endpoints, and neither is ever
-- deleted but with the application, whose deletion deletes the message first. The statement triggers below
-- take the place of ON DELETE CASCADE.
CREATE TABLE deliveries (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  app_id            text NOT NULL,
  message_id        text NOT NULL,
  endpoint_id       text NOT NULL,
  state             text NOT NULL CHECK (state IN ('pending', 'leased', 'succeeded', 'dead', 'skipped', 'canceled')),
  next_attempt_at   timestamptz NOT NULL,
  attempt_count     integer NOT NULL DEFAULT 0,
  manual            boolean NOT NULL DEFAULT false,
  manual_return     text,
  dispatcher_id     text,
  lease_expires_at  timestamptz,
  fencing_token     bigint NOT NULL DEFAULT 0,
  reclaim_count     integer NOT NULL DEFAULT 0,
  last_status_code  integer,
  last_error_kind   text,
  last_attempt_at   timestamptz,
  dead_reason       text,
  created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (message_id, endpoint_id)
);
-- No update of a delivery is a HOT update (its state is indexed), so a full index of deliveries takes an entry
-- at the insert, at the claim and at the record; a partial index only when the new row version matches its
-- predicate (docs/adr/0016-hot-path-cost.md, decisions 5 and 17; 1764000009300 dropped
-- deliveries_endpoint_state, whose reads the indexes below serve).
-- The claim's two branches read these in the order of their ORDER BY, so its cost does not grow with the backlog.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX deliveries_lease_expiry ON deliveries (lease_expires_at, id) WHERE state = 'leased';
-- Per-endpoint claims read one endpoint's due deliveries in due order, and count its live leases
-- (1764000001000, docs/adr/0004-endpoint-flow-control.md).
CREATE INDEX deliveries_endpoint_due ON deliveries (endpoint_id, next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX deliveries_endpoint_leased ON deliveries (endpoint_id, lease_expires_at) WHERE state = 'leased';
-- Settled deliveries only (succeeded, dead, skipped, canceled): dead letters, replays, an application's counts
-- by state; its pending and leased ones are read through its endpoints (1764000009700).
CREATE INDEX deliveries_app_state ON deliveries (app_id, state, id) WHERE state NOT IN ('pending', 'leased');
-- The messages of one endpoint in message order (Svix `GET …/endpoint/{ep}/msg`), every delivery but the leased
-- ones, which are read from deliveries_endpoint_leased (1764000009700).
CREATE INDEX deliveries_endpoint_message ON deliveries (endpoint_id, message_id) WHERE state <> 'leased';
-- Succeeded deliveries by the time they succeeded: what retention prunes, oldest first. A row enters this index
-- once, at its final transition.
CREATE INDEX deliveries_succeeded ON deliveries (updated_at, id) WHERE state = 'succeeded';

-- One HTTP try. response_body is a bounded prefix of the receiver's response, encrypted like the payload under
-- response_body_key_id (AES-256-GCM, context = the attempt id; NULL = plain bytes, which `tidings keys rotate`
-- encrypts). operator_detail holds what only the operator sees: the addresses the endpoint's name resolved to and
-- the one connected to, a refusal's full reason and the setting that decided it, the ids of the signing secrets,
-- the Retry-After received and whether it was applied (1764000006100, docs/adr/0009-window-share-within-a-claim.md).
-- delivery_id holds by construction (see deliveries): an attempt is written by the statement that updates its
-- delivery, from the rows that statement returns.
CREATE TABLE attempts (
  id                    text PRIMARY KEY,
  delivery_id           bigint NOT NULL,
  app_id                text NOT NULL,
  message_id            text NOT NULL,
  endpoint_id           text NOT NULL,
  attempt_number        integer NOT NULL,
  trigger               text NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
  succeeded             boolean NOT NULL,
  response_status_code  integer,
  response_body         bytea,
  response_location     text,
  error_kind            text,
  error_detail          text,
  url                   text NOT NULL,
  duration_ms           integer NOT NULL,
  dispatcher_id         text NOT NULL,
  fencing_token         bigint NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
  response_body_key_id  text,
  operator_detail       jsonb
);
CREATE INDEX attempts_message ON attempts (message_id, id);
CREATE INDEX attempts_endpoint ON attempts (endpoint_id, id);
CREATE INDEX attempts_delivery ON attempts (delivery_id, id);

-- An attempt whose outcome was fenced out (a newer lease holds the delivery): the request may have reached the
-- receiver, so it is recorded here, marked, and never written into the delivery's own history (1764000006100).
CREATE TABLE fenced_attempts (
  id                    text PRIMARY KEY,
  delivery_id           bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  endpoint_id           text NOT NULL,
  attempt_number        integer NOT NULL,
  dispatcher_id         text NOT NULL,
  fencing_token         bigint NOT NULL,
  response_status_code  integer,
  error_kind            text,
  duration_ms           integer NOT NULL,
  operator_detail       jsonb,
  created_at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX fenced_attempts_delivery ON fenced_attempts (delivery_id, id);

-- Append-only timeline: one row per state transition of a delivery, stamped with the database clock, and with
-- what the time-in-state reads need so that a window of a million rows is one index range scan with no join
-- (1764000008000, docs/adr/0013-observability.md):
-- - app_id, endpoint_id: the delivery's, to filter by application or endpoint;
-- - wait_ms: on a 'leased' row with reason 'claimed', the time the delivery waited in the queue (claim instant −
--   its due time, next_attempt_at), ms;
-- - since_publish_ms: the row's instant − the delivery's creation (= the message's publish instant), ms.
-- The publish, claim and record statements write them from the delivery row they hold; every other writer
-- leaves them NULL and the trigger delivery_events_stamp fills them (1764000009400, docs/adr/0016-hot-path-cost.md,
-- decision 10). delivery_id holds by construction, as in attempts.
CREATE TABLE delivery_events (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id       bigint NOT NULL,
  state             text NOT NULL,
  dispatcher_id     text,
  fencing_token     bigint,
  status_code       integer,
  latency_ms        integer,
  error_kind        text,
  reason            text,
  at                timestamptz NOT NULL DEFAULT clock_timestamp(),
  app_id            text,
  endpoint_id       text,
  wait_ms           bigint,
  since_publish_ms  bigint
);
CREATE INDEX delivery_events_delivery ON delivery_events (delivery_id, id);
-- Window reads: the whole installation, an application or an endpoint by instant, each an index-only range
-- scan. They hold only the rows the statistics count: an attempt's outcome (latency_ms), a claim (wait_ms; a
-- reclaim is a leased row), a dead letter; the statistics reads say so with the same predicate (COUNTED in
-- src/adapters/postgres/delivery/stats-store.ts; 1764000009800, docs/adr/0016-hot-path-cost.md, decision 18).
CREATE INDEX delivery_events_at ON delivery_events (at)
  INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');
CREATE INDEX delivery_events_app_at ON delivery_events (app_id, at)
  INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');
CREATE INDEX delivery_events_endpoint_at ON delivery_events (endpoint_id, at)
  INCLUDE (state, reason, latency_ms, wait_ms, since_publish_ms)
  WHERE latency_ms IS NOT NULL OR wait_ms IS NOT NULL OR state IN ('leased', 'dead');
-- Dead-letter inflow of the last 24 h (overview): the few 'dead' rows only.
CREATE INDEX delivery_events_dead_at ON delivery_events (at) WHERE state = 'dead';
CREATE INDEX delivery_events_dead_app_at ON delivery_events (app_id, at) WHERE state = 'dead';

-- Idempotency keys, scoped to (credential owner, route, key). The stored answer commits in the same
-- transaction as the work it describes; a racing duplicate waits on the primary key.
CREATE TABLE idempotency_keys (
  owner            text NOT NULL,
  route            text NOT NULL,
  key              text NOT NULL,
  fingerprint      text NOT NULL,
  response_status  integer,
  response_body    jsonb,
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (owner, route, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Background tasks (recover, bulk replay, erasure) with readable progress. The runner picks the running task it
-- touched least recently; lists read by id.
CREATE TABLE background_tasks (
  id          text PRIMARY KEY,
  app_id      text,
  kind        text NOT NULL,
  status      text NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
  params      jsonb NOT NULL DEFAULT '{}',
  progress    jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX background_tasks_running ON background_tasks (updated_at, id) WHERE status = 'running';
CREATE INDEX background_tasks_app ON background_tasks (app_id, id);

-- Endpoint health history (breaker transitions, disable, pause/resume), read through the API.
CREATE TABLE endpoint_events (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id  text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  kind         text NOT NULL,
  reason       text,
  at           timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX endpoint_events_endpoint ON endpoint_events (endpoint_id, id);

-- Registry of the encryption keys that wrote stored values (docs/adr/0005-secrets-tenants-retention.md).
-- `canary` is a fixed text encrypted under the key (context 'tidings-key-check:<id>'): start-up decrypts it, so a
-- wrong key with a known id, or a key still in use but missing from the ring, fails start-up instead of failing
-- deliveries. `retired_at` is set by `tidings keys rotate` once no stored value is under the key any more.
CREATE TABLE encryption_keys (
  id          text PRIMARY KEY,
  canary      bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  retired_at  timestamptz
);

-- Time-in-state rollups (1764000009100, docs/adr/0015-time-in-state-rollups.md). A maintenance task of the API
-- processes folds timeline rows into per-bucket rollups, from a watermark over timeline ids. One row per (bucket
-- width, scope, bucket start). Scope: app_id = '' and endpoint_id = '' is the whole installation, endpoint_id =
-- '' one application, both set one endpoint. Histograms are sparse jsonb objects {bucket index: count} over the
-- fixed log-scale buckets of src/domain/duration-histogram.ts.
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
-- pending_id / pending_writers: the highest timeline id seen by the last run and the transactions that then held
-- a write lock on delivery_events (pg_locks virtualtransaction); once none of them is running, every row with an
-- id up to pending_id is committed or gone, so the watermark may move there.
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

-- The revision of an updated event type (see event_types).
CREATE FUNCTION tidings_event_type_revision() RETURNS trigger
LANGUAGE plpgsql AS $revision$
BEGIN
  NEW.revision := nextval('event_type_revisions');
  RETURN NEW;
END
$revision$;
CREATE TRIGGER event_types_revision BEFORE UPDATE ON event_types
  FOR EACH ROW EXECUTE FUNCTION tidings_event_type_revision();

-- The stamp of a timeline row that arrives unstamped (app_id, endpoint_id or since_publish_ms NULL), from its
-- delivery row: one primary-key read per row (1764000008000; run only for such rows since 1764000009400).
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
  FOR EACH ROW WHEN (NEW.app_id IS NULL OR NEW.endpoint_id IS NULL OR NEW.since_publish_ms IS NULL)
  EXECUTE FUNCTION tidings_stamp_delivery_event();

-- The cascades of the rows of the delivery path (1764000009500): one statement-level trigger per referenced
-- table, which deletes the rows of every deleted parent at once.
-- A deleted delivery takes its timeline and attempts with it (retention's prune of succeeded deliveries, and
-- every delivery of a deleted message or endpoint). Index: delivery_events_delivery, attempts_delivery.
CREATE FUNCTION tidings_delete_delivery_rows() RETURNS trigger
LANGUAGE plpgsql AS $cascade$
BEGIN
  DELETE FROM delivery_events WHERE delivery_id IN (SELECT id FROM gone);
  DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM gone);
  RETURN NULL;
END
$cascade$;
CREATE TRIGGER deliveries_delete_rows AFTER DELETE ON deliveries REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION tidings_delete_delivery_rows();

-- A deleted message (its application's deletion cascades to it) takes its deliveries with it.
-- Index: deliveries_message_id_endpoint_id_key.
CREATE FUNCTION tidings_delete_message_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $cascade$
BEGIN
  DELETE FROM deliveries WHERE message_id IN (SELECT id FROM gone);
  RETURN NULL;
END
$cascade$;
CREATE TRIGGER messages_delete_deliveries AFTER DELETE ON messages REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION tidings_delete_message_deliveries();

-- A deleted endpoint (only its application's deletion deletes one; the API marks deleted_at) takes its
-- deliveries with it: the leased ones through deliveries_endpoint_leased, the others through
-- deliveries_endpoint_message (1764000009700).
CREATE FUNCTION tidings_delete_endpoint_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $cascade$
BEGIN
  DELETE FROM deliveries WHERE endpoint_id IN (SELECT id FROM gone) AND state <> 'leased';
  DELETE FROM deliveries WHERE endpoint_id IN (SELECT id FROM gone) AND state = 'leased';
  RETURN NULL;
END
$cascade$;
CREATE TRIGGER endpoints_delete_deliveries AFTER DELETE ON endpoints REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION tidings_delete_endpoint_deliveries();
