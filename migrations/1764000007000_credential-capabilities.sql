-- Up Migration
-- What a credential scoped to one application may do (docs/adr/0011-credential-capabilities.md).

-- `portal`: an app-portal token (Svix `appPortalAccess`) rather than an application key.
-- `capabilities`: the capabilities the token was issued with; NULL = those its kind and read_only give
-- (a key issued before this column: read-only → ViewBase; portal → every Svix capability; an application
-- key → every capability).
-- `session_id`: Svix `sessionId`, so that `expire-all` with `sessionIds` ends only those sessions' tokens.
-- `feature_flags`: Svix `featureFlags`, returned to the portal by GET /api/v1/auth/me.
ALTER TABLE api_keys ADD COLUMN portal boolean NOT NULL DEFAULT false;
ALTER TABLE api_keys ADD COLUMN capabilities text[];
ALTER TABLE api_keys ADD COLUMN session_id text;
ALTER TABLE api_keys ADD COLUMN feature_flags text[];
-- Portal tokens issued before this migration carry the name the portal route gave them.
UPDATE api_keys SET portal = true WHERE role = 'app' AND name = 'app portal';

-- Down Migration
ALTER TABLE api_keys DROP COLUMN feature_flags;
ALTER TABLE api_keys DROP COLUMN session_id;
ALTER TABLE api_keys DROP COLUMN capabilities;
ALTER TABLE api_keys DROP COLUMN portal;
