-- Up Migration
-- The rest of the Svix-compatible API (docs/adr/0003-svix-compatibility.md).

-- Event types carry the remaining fields of Svix `EventTypeOut`.
ALTER TABLE event_types ADD COLUMN deprecated boolean NOT NULL DEFAULT false;
ALTER TABLE event_types ADD COLUMN group_name text;
ALTER TABLE event_types ADD COLUMN feature_flags text[];

-- The messages of one endpoint in message order (Svix `GET …/endpoint/{ep}/msg`, keyset on the message id).
CREATE INDEX deliveries_endpoint_message ON deliveries (endpoint_id, message_id);

-- Background tasks: the runner picks the running task it touched least recently; lists read by id.
CREATE INDEX background_tasks_running ON background_tasks (updated_at, id) WHERE status = 'running';
CREATE INDEX background_tasks_app ON background_tasks (app_id, id);

-- Down Migration
DROP INDEX background_tasks_app;
DROP INDEX background_tasks_running;
DROP INDEX deliveries_endpoint_message;
ALTER TABLE event_types DROP COLUMN feature_flags;
ALTER TABLE event_types DROP COLUMN group_name;
ALTER TABLE event_types DROP COLUMN deprecated;
