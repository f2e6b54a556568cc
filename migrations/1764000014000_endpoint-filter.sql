-- Up Migration
-- Payload filters per endpoint (docs/adr/0029-endpoint-payload-filters.md). A filter is a JSON match over the
-- message (src/domain/payload-filter.ts), checked against TIDINGS_FILTER_MAX_* when written through the
-- Tidings-only route …/endpoint/{ep}/filter, and evaluated by the publishing process, once per message and
-- endpoint, before the publish statement runs.
-- - endpoints.filter: the filter as written; NULL = none (every message its event types and channels select);
-- - applications.filter_revision: raised in the statement that changes one of its endpoints' filters. A publish
--   passes the revision of the filters it evaluated, and the publish statement stores nothing when it moved on
--   (the message is then looked up again and evaluated against the filters as they are now), so a message
--   published after a change never meets the filter it replaced;
-- - messages.filtered_out: the endpoints whose filter the message did not match (no delivery was made for them),
--   written with the message in the same INSERT; NULL = none. It is what …/msg/{msg}/filtered-endpoint shows.
-- Nullable columns, and a NOT NULL column with a constant default: adding them rewrites nothing.

ALTER TABLE endpoints ADD COLUMN filter jsonb;
ALTER TABLE applications ADD COLUMN filter_revision bigint NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN filtered_out text[];
