import type {
  ApplicationListFilters,
  ApplicationRecord,
  ApplicationStore,
  NewApplication,
} from '../../../ports/application-store.ts';
import { keyset, toPage } from '../paging.ts';
import { findOne, nowSql, on, setClause, withConflict } from '../sql.ts';
import { DEFAULT_BATCH_LIMITS, statementBatcher, type BatchLimits } from '../batching.ts';
import { prepared, type Db } from '../db.ts';

interface ApplicationRow {
  id: string;
  uid: string | null;
  name: string;
  rate_limit: number | null;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
  filter_revision: string;
}

const COLUMNS = 'id, uid, name, rate_limit, metadata, created_at, updated_at, filter_revision::text AS filter_revision';
/** An application by id or uid (the id wins); run on every publish. $1 id or uid. */
const FIND_APPLICATION = prepared(
  'tidings_find_application',
  `SELECT ${COLUMNS} FROM applications WHERE id = $1 OR uid = $1 ORDER BY (id = $1) DESC LIMIT 1`,
);
/** Applications by id or uid, for many refs at once (lookups grouped across requests). $1 refs. */
const FIND_APPLICATIONS = prepared(
  'tidings_find_applications',
  `SELECT ${COLUMNS} FROM applications WHERE id = ANY ($1::text[]) OR uid = ANY ($1::text[])`,
);
const FIND_APPLICATION_FOR_UPDATE = prepared(
  'tidings_find_application_for_update',
  `${FIND_APPLICATION.text} FOR UPDATE`,
);
const UID_TAKEN = { applications_uid_key: 'An application with this uid already exists' };

/*
 * INSERT_APPLICATION — $1 id, $2 uid, $3 name, $4 rate limit, $5 metadata (json text), $6 now.
 * `onConflict` is '' or 'ON CONFLICT (uid) DO NOTHING'. Returns the row (none when it did nothing).
 */
const insertApplication = (onConflict: string) => `
INSERT INTO applications (id, uid, name, rate_limit, metadata, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5::jsonb, ${nowSql(6)}, ${nowSql(6)})
${onConflict}
RETURNING ${COLUMNS}`;

function toRecord(row: ApplicationRow): ApplicationRecord {
  return {
    id: row.id,
    uid: row.uid,
    name: row.name,
    rateLimit: row.rate_limit,
    metadata: row.metadata,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    filterRevision: row.filter_revision,
  };
}

/** Endpoints of the application row `applications.id` that count for the list filters (not deleted). */
const LIVE_ENDPOINTS = 'FROM endpoints e WHERE e.app_id = applications.id AND e.deleted_at IS NULL';

/** Svix Play's URL prefix (its hosted request inspector). */
const SVIX_PLAY_URL = `'https://play.svix.com/%'`;

/** The `AND …` conditions of {@link ApplicationListFilters} (constant SQL, no parameters). */
function listFilterSql(filters: ApplicationListFilters): string {
  const parts: string[] = [];
  if (filters.excludeWithNoEndpoints === true) parts.push(`EXISTS (SELECT 1 ${LIVE_ENDPOINTS})`);
  if (filters.excludeWithDisabledEndpoints === true)
    parts.push(
      `(NOT EXISTS (SELECT 1 ${LIVE_ENDPOINTS}) OR EXISTS (SELECT 1 ${LIVE_ENDPOINTS} AND e.status <> 'disabled'))`,
    );
  if (filters.excludeWithSvixPlayEndpoints === true)
    parts.push(
      `(NOT EXISTS (SELECT 1 ${LIVE_ENDPOINTS}) ` +
        `OR EXISTS (SELECT 1 ${LIVE_ENDPOINTS} AND e.url NOT LIKE ${SVIX_PLAY_URL}))`,
    );
  return parts.map((p) => ` AND ${p}`).join('');
}

/** The parameters of {@link insertApplication}. */
const insertParams = (app: NewApplication, now: Date | null): unknown[] => [
  app.id,
  app.uid,
  app.name,
  app.rateLimit,
  JSON.stringify(app.metadata),
  now,
];

/**
 * The PostgreSQL {@link ApplicationStore} (table applications). Lookups outside a transaction (no `tx`, or an
 * autocommit one) from concurrent requests share one statement, within `limits` (ADR 0007). The list runs on
 * `reader` (a read replica while it is fresh enough, docs/adr/0022-poolers-and-read-replicas.md; default `db`).
 */
export function createPgApplicationStore(
  db: Db,
  limits: BatchLimits = DEFAULT_BATCH_LIMITS,
  reader: Db = db,
): ApplicationStore {
  const grouped = statementBatcher<string, ApplicationRecord | null>(limits, async (refs) => {
    const res = await db.query<ApplicationRow>(FIND_APPLICATIONS, [[...new Set(refs)]]);
    // The id wins over a uid that happens to equal it, as in FIND_APPLICATION.
    return refs.map((ref) => {
      const row = res.rows.find((r) => r.id === ref) ?? res.rows.find((r) => r.uid === ref);
      return row === undefined ? null : toRecord(row);
    });
  });
  return {
    async insertApplication(tx, app, now) {
      const res = await withConflict(
        () => on(db, tx).query<ApplicationRow>(insertApplication(''), insertParams(app, now)),
        UID_TAKEN,
      );
      return toRecord(res.rows[0]!);
    },

    async insertApplicationIfAbsent(tx, app, now) {
      const client = on(db, tx);
      const res = await client.query<ApplicationRow>(
        insertApplication('ON CONFLICT (uid) DO NOTHING'),
        insertParams(app, now),
      );
      if (res.rows[0] !== undefined) return { app: toRecord(res.rows[0]), created: true };
      // READ COMMITTED: this statement's snapshot sees the row the conflicting transaction committed.
      const existing = await client.query<ApplicationRow>(`SELECT ${COLUMNS} FROM applications WHERE uid = $1`, [
        app.uid,
      ]);
      return { app: toRecord(existing.rows[0]!), created: false };
    },

    findApplication: (ref, options = {}) =>
      findOne(db, ref, options, grouped, { one: FIND_APPLICATION, forUpdate: FIND_APPLICATION_FOR_UPDATE }, toRecord),

    async listApplications(page, filters = {}) {
      const k = keyset(page, 'id', 2);
      const res = await reader.query<ApplicationRow>(
        `SELECT ${COLUMNS} FROM applications WHERE ${k.where}${listFilterSql(filters)} ORDER BY ${k.orderBy} LIMIT $1`,
        [k.fetch, ...k.params],
      );
      return toPage(res.rows, page, (r) => r.id, toRecord);
    },

    async updateApplication(tx, id, changes, now) {
      const set = setClause(
        changes,
        { uid: 'uid', name: 'name', rateLimit: 'rate_limit', metadata: 'metadata::jsonb' },
        3,
      );
      const res = await withConflict(
        () =>
          on(db, tx).query<ApplicationRow>(
            `UPDATE applications SET ${[...set.sql, `updated_at = ${nowSql(2)}`].join(', ')} ` +
              `WHERE id = $1 RETURNING ${COLUMNS}`,
            [id, now, ...set.params],
          ),
        UID_TAKEN,
      );
      return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
    },

    async deleteApplication(tx, id) {
      const res = await on(db, tx).query('DELETE FROM applications WHERE id = $1', [id]);
      return (res.rowCount ?? 0) > 0;
    },
  };
}
