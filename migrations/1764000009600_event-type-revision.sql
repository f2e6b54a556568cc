-- Up Migration
-- Every event type row carries a revision, drawn from one sequence when the row is written and again on every
-- update, so that (name, revision) names one state of the row for ever: a type deleted and registered again
-- gets a revision never seen before. A publish that checked its payload against a type it read earlier (the
-- API's lookup cache, docs/adr/0006-round-trips-and-wake-ups.md) passes the revision it checked, and the
-- publish statement stores nothing when the row's revision has changed since.
CREATE SEQUENCE event_type_revisions;
ALTER TABLE event_types ADD COLUMN revision bigint NOT NULL DEFAULT nextval('event_type_revisions');

CREATE FUNCTION tidings_event_type_revision() RETURNS trigger
LANGUAGE plpgsql AS $revision$
BEGIN
  NEW.revision := nextval('event_type_revisions');
  RETURN NEW;
END
$revision$;
CREATE TRIGGER event_types_revision BEFORE UPDATE ON event_types
  FOR EACH ROW EXECUTE FUNCTION tidings_event_type_revision();

-- Down Migration
DROP TRIGGER event_types_revision ON event_types;
DROP FUNCTION tidings_event_type_revision();
ALTER TABLE event_types DROP COLUMN revision;
DROP SEQUENCE event_type_revisions;
