import type { EventTypeRecord, EventTypeStore } from '../../../ports/event-type-store.ts';
import { keyset, toPage } from '../paging.ts';
import { findOne, nowSql, on, setClause } from '../sql.ts';
import { DEFAULT_BATCH_LIMITS, statementBatcher, type BatchLimits } from '../batching.ts';
import { prepared, type Db } from '../db.ts';

interface EventTypeRow {
  name: string;
  description: string;
  archived: boolean;
  deprecated: boolean;
  schemas: Record<string, unknown> | null;
  group_name: string | null;
  feature_flags: string[] | null;
  created_at: Date;
  updated_at: Date;
  revision: string;
}

const COLUMNS =
  'name, description, archived, deprecated, schemas, group_name, feature_flags, created_at, updated_at, revision';
/** An event type by name; run on every publish (schema check). $1 name. */
const FIND_EVENT_TYPE = prepared('tidings_find_event_type', `SELECT ${COLUMNS} FROM event_types WHERE name = $1`);
/** Event types by name, for many names at once (lookups grouped across requests). $1 names. */
const FIND_EVENT_TYPES = prepared(
  'tidings_find_event_types',
  `SELECT ${COLUMNS} FROM event_types WHERE name = ANY ($1::text[])`,
);
const FIND_EVENT_TYPE_FOR_UPDATE = prepared('tidings_find_event_type_for_update', `${FIND_EVENT_TYPE.text} FOR UPDATE`);

/*
 * WRITE_EVENT_TYPE — inserts an event type; on a name that exists, `onConflict` decides. $1 name,
 * $2 description, $3 archived, $4 deprecated, $5 schemas (json text or NULL), $6 group name,
 * $7 feature flags, $8 now. Returns the row and whether it was inserted (xmax = 0 only for a new row).
 */
const writeEventType = (onConflict: string) => `
INSERT INTO event_types (name, description, archived, deprecated, schemas, group_name, feature_flags, created_at,
  updated_at)
VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, ${nowSql(8)}, ${nowSql(8)})
ON CONFLICT (name) DO UPDATE
SET description = EXCLUDED.description, archived = EXCLUDED.archived, deprecated = EXCLUDED.deprecated,
    schemas = EXCLUDED.schemas, group_name = EXCLUDED.group_name, feature_flags = EXCLUDED.feature_flags,
    updated_at = EXCLUDED.updated_at
${onConflict}
RETURNING ${COLUMNS}, (xmax = 0) AS inserted`;

function toRecord(row: EventTypeRow): EventTypeRecord {
  return {
    name: row.name,
    description: row.description,
    archived: row.archived,
    deprecated: row.deprecated,
    schemas: row.schemas,
    groupName: row.group_name,
    featureFlags: row.feature_flags,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    revision: row.revision,
  };
}

/**
 * The PostgreSQL {@link EventTypeStore} (table event_types). Lookups outside a transaction (no `tx`, or an
 * autocommit one) from concurrent requests share one statement, within `limits` (ADR 0007).
 */
export function createPgEventTypeStore(db: Db, limits: BatchLimits = DEFAULT_BATCH_LIMITS): EventTypeStore {
  const grouped = statementBatcher<string, EventTypeRecord | null>(limits, async (names) => {
    const res = await db.query<EventTypeRow>(FIND_EVENT_TYPES, [[...new Set(names)]]);
    const byName = new Map(res.rows.map((row) => [row.name, toRecord(row)]));
    return names.map((name) => byName.get(name) ?? null);
  });
  const params = (name: string, f: Parameters<EventTypeStore['createEventType']>[2], now: Date | null) => [
    name,
    f.description,
    f.archived,
    f.deprecated,
    f.schemas === null ? null : JSON.stringify(f.schemas),
    f.groupName,
    f.featureFlags,
    now,
  ];
  return {
    async createEventType(tx, name, fields, now) {
      // Only an archived row is overwritten (Svix: create unarchives); a live one makes the WHERE false.
      const res = await on(db, tx).query<EventTypeRow & { inserted: boolean }>(
        writeEventType('WHERE event_types.archived'),
        params(name, fields, now),
      );
      return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
    },

    async upsertEventType(tx, name, fields, now) {
      const res = await on(db, tx).query<EventTypeRow & { inserted: boolean }>(
        writeEventType(''),
        params(name, fields, now),
      );
      const row = res.rows[0]!;
      return { eventType: toRecord(row), created: row.inserted };
    },

    findEventType: (name, options = {}) =>
      findOne(db, name, options, grouped, { one: FIND_EVENT_TYPE, forUpdate: FIND_EVENT_TYPE_FOR_UPDATE }, toRecord),

    async listEventTypes(query) {
      const k = keyset(query, 'name', 2);
      const res = await db.query<EventTypeRow>(
        `SELECT ${COLUMNS} FROM event_types WHERE ${query.includeArchived ? 'TRUE' : 'NOT archived'} AND ${k.where}
         ORDER BY ${k.orderBy} LIMIT $1`,
        [k.fetch, ...k.params],
      );
      return toPage(res.rows, query, (r) => r.name, toRecord);
    },

    async updateEventType(tx, name, changes, now) {
      const set = setClause(
        changes,
        {
          description: 'description',
          archived: 'archived',
          deprecated: 'deprecated',
          schemas: 'schemas::jsonb',
          groupName: 'group_name',
          featureFlags: 'feature_flags',
        },
        3,
      );
      // setClause serialises jsonb values; a null schema must stay SQL NULL, not the JSON text "null".
      const values = set.params.map((v, i) => (set.sql[i]?.startsWith('schemas') === true && v === 'null' ? null : v));
      const res = await on(db, tx).query<EventTypeRow>(
        `UPDATE event_types SET ${[...set.sql, `updated_at = ${nowSql(2)}`].join(', ')} WHERE name = $1 ` +
          `RETURNING ${COLUMNS}`,
        [name, now, ...values],
      );
      return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
    },

    async deleteEventType(tx, name) {
      const res = await on(db, tx).query('DELETE FROM event_types WHERE name = $1', [name]);
      return (res.rowCount ?? 0) > 0;
    },

    async unknownEventTypes(names, tx) {
      if (names.length === 0) return [];
      const res = await on(db, tx).query<{ name: string }>(
        'SELECT name FROM event_types WHERE name = ANY ($1::text[]) AND NOT archived',
        [names],
      );
      const known = new Set(res.rows.map((r) => r.name));
      return names.filter((n) => !known.has(n));
    },
  };
}
