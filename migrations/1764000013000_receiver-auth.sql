-- Up Migration
-- Receiver authentication per endpoint (docs/adr/0028-receiver-authentication.md): HTTP basic credentials or an
-- OAuth2 client-credentials grant, and a TLS client certificate, set through the Tidings-only route
-- …/endpoint/{ep}/auth.
-- - receiver_auth: the whole configuration as JSON (src/domain/receiver-auth.ts), encrypted like the signing secret
--   (AES-256-GCM, context = the endpoint id; receiver_auth_key_id names the key, and `tidings keys rotate`
--   re-encrypts it); NULL = none;
-- - receiver_auth_summary: what the API shows of it (user names, token URL, client id, certificate subjects and
--   fingerprints, secrets masked to a hint); no secret;
-- - receiver_auth_version: from a sequence, new at every write, so a dispatcher's caches (the configuration, the
--   OAuth2 token, the TLS client's connections) keyed by it never serve a replaced configuration.
-- Nullable columns without a default: adding them rewrites nothing.

CREATE SEQUENCE endpoint_receiver_auth_version;

ALTER TABLE endpoints ADD COLUMN receiver_auth bytea;
ALTER TABLE endpoints ADD COLUMN receiver_auth_key_id text;
ALTER TABLE endpoints ADD COLUMN receiver_auth_summary jsonb;
ALTER TABLE endpoints ADD COLUMN receiver_auth_version bigint;
