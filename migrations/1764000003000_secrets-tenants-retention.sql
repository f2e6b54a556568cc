-- Up Migration
-- Secrets, tenants and retention (docs/adr/0005-secrets-tenants-retention.md).

-- Registry of the encryption keys that wrote stored values. `canary` is a fixed text encrypted under the key
-- (context 'tidings-key-check:<id>'): start-up decrypts it, so a wrong key with a known id, or a key that is
-- still in use but missing from the ring, fails start-up instead of failing deliveries. `retired_at` is set
-- by `tidings keys rotate` once no stored value is under the key any more (then it may leave the ring).
CREATE TABLE encryption_keys (
  id          text PRIMARY KEY,
  canary      bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  retired_at  timestamptz
);

-- Credentials: application-portal tokens expire; a read-only key may only read.
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
ALTER TABLE api_keys ADD COLUMN read_only boolean NOT NULL DEFAULT false;
CREATE INDEX api_keys_app ON api_keys (app_id) WHERE revoked_at IS NULL;

-- Retention. When the retention job removes succeeded deliveries it keeps, on their message, the latest
-- instant one of them reached its final state, so the payload's retention still counts from the last
-- terminal transition of all the message's deliveries.
ALTER TABLE messages ADD COLUMN pruned_settled_at timestamptz;
-- Payloads still held, by retention class (-1 = the deployment default) and age: each class is one range
-- scan of rows old enough to expire.
CREATE INDEX messages_payload_held ON messages ((coalesce(retention_hours, -1)), created_at, id) WHERE payload_expunged_at IS NULL;
-- Succeeded deliveries by the time they succeeded: what the pruning reads, oldest first. A row enters this
-- index once, at its final transition.
CREATE INDEX deliveries_succeeded ON deliveries (updated_at, id) WHERE state = 'succeeded';

-- Down Migration
DROP INDEX deliveries_succeeded;
DROP INDEX messages_payload_held;
ALTER TABLE messages DROP COLUMN pruned_settled_at;
DROP INDEX api_keys_app;
ALTER TABLE api_keys DROP COLUMN read_only;
ALTER TABLE api_keys DROP COLUMN expires_at;
DROP TABLE encryption_keys;
