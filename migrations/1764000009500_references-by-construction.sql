-- Up Migration
-- The rows of the delivery path no longer carry foreign keys whose check runs once per row
-- (docs/adr/0016-hot-path-cost.md, decision 13). A foreign key's check is a row trigger: one SPI query per
-- inserted row that reads the referenced row and locks it FOR KEY SHARE (a heap write and a WAL record), and
-- the delivery path inserts about eight such rows per message (the delivery's three references, its timeline
-- rows, its attempt). The references hold by construction instead:
-- - a timeline row or an attempt is written by the statement that inserts or updates its delivery, from the
--   rows that statement returns, so the delivery exists and is locked by the writer until it commits;
-- - a delivery is written with its message, by the statement that inserts the message (the publish, an
--   example), or by a statement that locks the message FOR KEY SHARE (a resend, a replay of missing
--   deliveries); its application and endpoint are the message's and one of that application's endpoints,
--   and neither is ever deleted but with the application, whose deletion deletes the message first.
-- messages.app_id keeps its foreign key (one check per message, not per delivery): it is what serializes a
-- publish against the deletion of its application. The ON DELETE CASCADE of the dropped keys becomes one
-- statement-level trigger per referenced table, which deletes the rows of every deleted parent at once.

ALTER TABLE delivery_events DROP CONSTRAINT delivery_events_delivery_id_fkey;
ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_message_id_fkey, DROP CONSTRAINT deliveries_app_id_fkey,
  DROP CONSTRAINT deliveries_endpoint_id_fkey;

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
-- deliveries with it. Index: deliveries_endpoint_message.
CREATE FUNCTION tidings_delete_endpoint_deliveries() RETURNS trigger
LANGUAGE plpgsql AS $cascade$
BEGIN
  DELETE FROM deliveries WHERE endpoint_id IN (SELECT id FROM gone);
  RETURN NULL;
END
$cascade$;
CREATE TRIGGER endpoints_delete_deliveries AFTER DELETE ON endpoints REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION tidings_delete_endpoint_deliveries();

-- Down Migration
DROP TRIGGER endpoints_delete_deliveries ON endpoints;
DROP FUNCTION tidings_delete_endpoint_deliveries();
DROP TRIGGER messages_delete_deliveries ON messages;
DROP FUNCTION tidings_delete_message_deliveries();
DROP TRIGGER deliveries_delete_rows ON deliveries;
DROP FUNCTION tidings_delete_delivery_rows();
ALTER TABLE deliveries
  ADD CONSTRAINT deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES endpoints(id) ON DELETE CASCADE,
  ADD CONSTRAINT deliveries_app_id_fkey FOREIGN KEY (app_id) REFERENCES applications(id) ON DELETE CASCADE,
  ADD CONSTRAINT deliveries_message_id_fkey FOREIGN KEY (message_id) REFERENCES messages(id) ON DELETE CASCADE;
ALTER TABLE attempts ADD CONSTRAINT attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES deliveries(id) ON DELETE CASCADE;
ALTER TABLE delivery_events ADD CONSTRAINT delivery_events_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES deliveries(id) ON DELETE CASCADE;
