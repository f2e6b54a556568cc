-- Up Migration
-- Tidings schema, version 1. The decisions behind every table and index are in docs/adr/0002-schema-and-claim.md.
-- Runs unchanged on PostgreSQL 15+ and on the embedded engine (PGlite).

-- Credentials. The admin token and API keys are stored as SHA-256 hashes; app_id NULL = operator scope.
CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  role          text NOT NULL CHECK (role IN ('admin', 'app')),
  app_id        text,
  token_hash    bytea NOT NULL UNIQUE,
  token_prefix  text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at    timestamptz
);

CREATE TABLE applications (
  id              text PRIMARY KEY,
  uid             text UNIQUE,
  name            text NOT NULL,
  rate_limit      integer,
  metadata        jsonb NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE event_types (
  name          text PRIMARY KEY,
  description   text NOT NULL DEFAULT '',
  schemas       jsonb,
  feature_flag  text,
  archived      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- An endpoint: URL, secrets (encrypted, each names its key id), subscription (filter_types, channels),
-- operator status and the health columns that the breaker, throttle and rate limiter change by atomic
-- single-statement updates (never locked by the claim).
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
  updated_at              timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX endpoints_app_uid ON endpoints (app_id, uid) WHERE uid IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX endpoints_app ON endpoints (app_id, id) WHERE deleted_at IS NULL;

-- A published event. payload holds the exact bytes of the request's payload value, encrypted under
-- payload_key_id (NULL = stored in plain text); payload_expunged_at is set when content was erased.
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
  created_at           timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX messages_app_event_id ON messages (app_id, event_id) WHERE event_id IS NOT NULL;
CREATE INDEX messages_app_created ON messages (app_id, id);

-- One message to one endpoint: the row that carries the state machine, the lease and the fencing token.
-- attempt_count counts recorded attempts only (a claim never charges one); reclaim_count counts claims of
-- an expired lease since the last recorded outcome.
CREATE TABLE deliveries (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  app_id            text NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  message_id        text NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  endpoint_id       text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  state             text NOT NULL CHECK (state IN ('pending', 'leased', 'succeeded', 'dead', 'skipped', 'canceled')),
  next_attempt_at   timestamptz NOT NULL,
  attempt_count     integer NOT NULL DEFAULT 0,
  manual            boolean NOT NULL DEFAULT false,
  manual_return     text,
  lease_owner       text,
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
-- The claim's two branches read these partial indexes in the order of their ORDER BY, so the cost of a
-- claim does not grow with the backlog.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX deliveries_lease_expiry ON deliveries (lease_expires_at, id) WHERE state = 'leased';
-- Per-endpoint reads: in-flight counts (leased), replay and recover by endpoint, dead-letter listing.
CREATE INDEX deliveries_endpoint_state ON deliveries (endpoint_id, state, id);
CREATE INDEX deliveries_app_state ON deliveries (app_id, state, id);

-- One HTTP try. response_body is a bounded prefix.
CREATE TABLE attempts (
  id                    text PRIMARY KEY,
  delivery_id           bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  app_id                text NOT NULL,
  message_id            text NOT NULL,
  endpoint_id           text NOT NULL,
  attempt_number        integer NOT NULL,
  trigger               text NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
  succeeded             boolean NOT NULL,
  response_status_code  integer,
  response_body         text,
  response_location     text,
  error_kind            text,
  error_detail          text,
  url                   text NOT NULL,
  duration_ms           integer NOT NULL,
  worker_id             text NOT NULL,
  fencing_token         bigint NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX attempts_message ON attempts (message_id, id);
CREATE INDEX attempts_endpoint ON attempts (endpoint_id, id);
CREATE INDEX attempts_delivery ON attempts (delivery_id, id);

-- Append-only timeline: one row per state transition of a delivery, stamped with the database clock.
CREATE TABLE delivery_events (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id    bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  state          text NOT NULL,
  worker_id      text,
  fencing_token  bigint,
  status_code    integer,
  latency_ms     integer,
  error_kind     text,
  reason         text,
  at             timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX delivery_events_delivery ON delivery_events (delivery_id, id);

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

-- Background tasks (recover, bulk replay, erasure) with readable progress.
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

-- Endpoint health history (breaker transitions, disable, pause/resume), read through the API.
CREATE TABLE endpoint_events (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id  text NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  kind         text NOT NULL,
  reason       text,
  at           timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX endpoint_events_endpoint ON endpoint_events (endpoint_id, id);

-- Down Migration
DROP TABLE endpoint_events, background_tasks, idempotency_keys, delivery_events, attempts, deliveries,
  messages, endpoints, event_types, applications, api_keys;
