import type { Queryable } from './db.ts';

/**
 * The migration that starts the history: the schema of 0.1.0 in one file
 * (migrations/1764000000000_baseline.sql, docs/adr/0019-migration-baseline.md).
 */
export const BASELINE_MIGRATION = '1764000000000_baseline';

/**
 * The migrations that the baseline replaces, as node-pg-migrate recorded them in `pgmigrations`, in the order
 * they ran. A database holding all of them has exactly the baseline's schema (test/fixtures/schema.txt was
 * generated from them and did not change when they were squashed).
 */
export const LEGACY_MIGRATIONS: readonly string[] = Object.freeze([
  '1764000000000_init',
  '1764000001000_endpoint-flow-control',
  '1764000002000_svix-api',
  '1764000003000_secrets-tenants-retention',
  '1764000004000_claim-function',
  '1764000005000_raw-and-scheduled-messages',
  '1764000006000_claim-window-share',
  '1764000006100_attempt-record',
  '1764000007000_credential-capabilities',
  '1764000008000_time-in-state',
  '1764000009000_trace-context',
  '1764000009100_time-in-state-rollups',
  '1764000009200_dispatcher-id',
  '1764000009300_hot-path-indexes',
  '1764000009400_stamp-in-the-hot-statements',
  '1764000009500_references-by-construction',
  '1764000009600_event-type-revision',
  '1764000009700_settled-delivery-indexes',
  '1764000009800_counted-timeline-indexes',
]);

/** A commit of Tidings whose migrations/ folder still holds {@link LEGACY_MIGRATIONS}, the last to change them. */
export const LEGACY_HISTORY_COMMIT = '1f5b077780b79a4cd3e2ec3311b9e18e5d0c255e';

/** Thrown when a database is part-way through {@link LEGACY_MIGRATIONS}: the baseline cannot finish it. */
export class LegacyHistoryIncompleteError extends Error {
  readonly code = 'legacy_migrations_incomplete';
}

/**
 * Marks a database migrated by the whole history from before 0.1.0 as at the baseline: in one transaction,
 * the rows of {@link LEGACY_MIGRATIONS} in `pgmigrations` become one row of {@link BASELINE_MIGRATION}, which
 * keeps the id and run_on of the last of them, so that migrations run after it still sort after it. Nothing
 * else is written: the schema is already the baseline's. The caller holds the migration advisory lock and no
 * open transaction.
 * @returns true when the database was marked; false when it holds none of the old migrations (a new database,
 *   or one already marked)
 * @throws LegacyHistoryIncompleteError, before changing anything, when the database holds only some of them
 *   (it must first be finished by a version that has them: see the message) or holds them and the baseline too
 */
export async function adoptLegacyHistory(client: Queryable): Promise<boolean> {
  const table = await client.query<{ found: boolean }>(`SELECT to_regclass('pgmigrations') IS NOT NULL AS found`);
  if (table.rows[0]?.found !== true) return false;
  await client.query('BEGIN');
  try {
    const rows = (
      await client.query<{ id: number; name: string }>(
        'SELECT id, name FROM pgmigrations ORDER BY run_on, id FOR UPDATE',
      )
    ).rows;
    const legacy = rows.filter((row) => LEGACY_MIGRATIONS.includes(row.name));
    const last = legacy.at(-1);
    if (last === undefined) {
      await client.query('COMMIT');
      return false;
    }
    const applied = new Set(legacy.map((row) => row.name));
    const hasBaseline = rows.some((row) => row.name === BASELINE_MIGRATION);
    if (applied.size !== LEGACY_MIGRATIONS.length || hasBaseline) {
      throw new LegacyHistoryIncompleteError(incompleteMessage(applied, hasBaseline));
    }
    await client.query('DELETE FROM pgmigrations WHERE name = ANY ($1::text[]) AND id <> $2', [
      LEGACY_MIGRATIONS,
      last.id,
    ]);
    await client.query('UPDATE pgmigrations SET name = $1 WHERE id = $2', [BASELINE_MIGRATION, last.id]);
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

/** What a database part-way through the old history must do before this version can start on it. */
function incompleteMessage(applied: ReadonlySet<string>, hasBaseline: boolean): string {
  const short = LEGACY_HISTORY_COMMIT.slice(0, 7);
  if (hasBaseline) {
    return (
      `pgmigrations holds both the baseline ${BASELINE_MIGRATION} and migrations it replaces ` +
      `(${[...applied].join(', ')}); the migration history was changed by hand and is not applied — restore it ` +
      '(docs/adr/0019-migration-baseline.md)'
    );
  }
  const missing = LEGACY_MIGRATIONS.filter((name) => !applied.has(name));
  return (
    `the database is part-way through the migration history from before 0.1.0: ${applied.size} of its ` +
    `${LEGACY_MIGRATIONS.length} migrations are applied, ${missing.length} are not (from ${missing[0]}). This ` +
    'version starts from a baseline that replaces that history and cannot finish it; nothing was changed. ' +
    `Finish it first with Tidings at commit ${short}, the last with that history (\`git checkout ${short} && ` +
    'npm ci && npm run migrate`, with the same DATABASE_URL or TIDINGS_DATA_DIR), then start this version, ' +
    'which marks the database as at the baseline (docs/adr/0019-migration-baseline.md)'
  );
}
