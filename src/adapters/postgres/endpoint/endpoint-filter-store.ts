import type { PayloadFilter } from '../../../domain/payload-filter.ts';
import type { AppFilters, EndpointFilterStore, FilteredEndpoint } from '../../../ports/endpoint-filter-store.ts';
import type { Db } from '../db.ts';
import { nowSql, on } from '../sql.ts';

/*
 * WRITE_FILTER — $1 app id, $2 endpoint id, $3 the filter (jsonb text, NULL = none), $4 now.
 * Raises the application's filter revision, then sets the live endpoint's filter and updated_at; returns the filter
 * after (no row: no such endpoint, and the revision is left as it was). The application row is locked first, as an
 * application's deletion locks it before its endpoints. Indexes applications_pkey, endpoints_pkey.
 * A publish that evaluated the filters at the old revision stores nothing and evaluates again
 * (the publish statement's filter_revision: docs/adr/0029-endpoint-payload-filters.md).
 */
const WRITE_FILTER = `
WITH app AS (
  UPDATE applications SET filter_revision = filter_revision + 1
  WHERE id = $1 AND EXISTS (SELECT 1 FROM endpoints WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL)
  RETURNING id
)
UPDATE endpoints e SET filter = $3::jsonb, updated_at = ${nowSql(4)}
FROM app
WHERE e.app_id = app.id AND e.id = $2 AND e.deleted_at IS NULL
RETURNING e.filter`;

/** READ_FILTER — $1 app id, $2 endpoint id: a live endpoint's filter (endpoints_pkey). */
const READ_FILTER = 'SELECT filter FROM endpoints WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL';

/*
 * APP_FILTERS — $1 app id: the application's filter revision and its live endpoints' filters, read in one snapshot
 * (applications_pkey, endpoints_app). No row: no such application.
 */
const APP_FILTERS = `
SELECT a.filter_revision::text AS revision, e.id AS endpoint_id, e.filter
FROM applications a
LEFT JOIN endpoints e ON e.app_id = a.id AND e.filter IS NOT NULL AND e.deleted_at IS NULL
WHERE a.id = $1
ORDER BY e.id`;

/*
 * FILTERED_OUT — $1 app id, $2 message id or eventId: the endpoints the message skipped because of their payload
 * filter (messages.filtered_out, written by the publish statement), each as it is now (messages_pkey,
 * messages_app_event_id, endpoints_pkey). No row: no such message.
 */
const FILTERED_OUT = `
WITH m AS (
  SELECT filtered_out FROM messages WHERE app_id = $1 AND (id = $2 OR event_id = $2) ORDER BY (id = $2) DESC LIMIT 1
)
SELECT true AS found, f.id AS endpoint_id, e.url, e.description
FROM m LEFT JOIN LATERAL unnest(m.filtered_out) WITH ORDINALITY AS f (id, n) ON true
LEFT JOIN endpoints e ON e.id = f.id AND e.app_id = $1 AND e.deleted_at IS NULL
ORDER BY f.n`;

interface FilterRow {
  filter: PayloadFilter | null;
}

/** The PostgreSQL endpoint payload filters (endpoints.filter, applications.filter_revision, messages.filtered_out). */
export function createPgEndpointFilterStore(db: Db): EndpointFilterStore {
  return {
    async read(key) {
      const res = await db.query<FilterRow>(READ_FILTER, [key.appId, key.endpointId]);
      return res.rows[0] === undefined ? undefined : res.rows[0].filter;
    },
    async write(key, filter, now) {
      const text = filter === null ? null : JSON.stringify(filter);
      const res = await db.query<FilterRow>(WRITE_FILTER, [key.appId, key.endpointId, text, now]);
      return res.rows[0] === undefined ? undefined : res.rows[0].filter;
    },
    async forApp(appId, tx): Promise<AppFilters | null> {
      const res = await on(db, tx).query<{ revision: string; endpoint_id: string | null; filter: PayloadFilter }>(
        APP_FILTERS,
        [appId],
      );
      if (res.rows[0] === undefined) return null;
      const filters = res.rows.flatMap((r) =>
        r.endpoint_id === null ? [] : [{ endpointId: r.endpoint_id, filter: r.filter }],
      );
      return { revision: res.rows[0].revision, filters };
    },
    async filteredOut(appId, messageRef): Promise<readonly FilteredEndpoint[] | undefined> {
      const res = await db.query<{ endpoint_id: string | null; url: string | null; description: string | null }>(
        FILTERED_OUT,
        [appId, messageRef],
      );
      if (res.rows.length === 0) return undefined;
      return res.rows.flatMap((r) =>
        r.endpoint_id === null ? [] : [{ endpointId: r.endpoint_id, url: r.url, description: r.description }],
      );
    },
  };
}
