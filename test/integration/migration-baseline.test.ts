/**
 * A database migrated by the history from before 0.1.0 is recognised and carried on, never half-migrated
 * (docs/adr/0019-migration-baseline.md). The old migrations are the real files, read from the git history at
 * LEGACY_HISTORY_COMMIT and applied by node-pg-migrate as the versions that had them did:
 * - all of them applied: the migrator marks the database as at the baseline, in one transaction, under the
 *   migration advisory lock, applies the migrations that follow the baseline, and the schema is exactly
 *   test/fixtures/schema.txt; its rows are kept;
 * - some of them applied: the migrator refuses with `legacy_migrations_incomplete`, names what to do, and
 *   changes nothing; finished by the old files, the database is then marked and carried on.
 * On both engines; the lock test needs a second session and runs on the PostgreSQL server only.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { PG_MIGRATE_LOCK_ID, runner } from 'node-pg-migrate';
import pg from 'pg';
import type { Db } from '../../src/adapters/postgres/db.ts';
import {
  BASELINE_MIGRATION,
  LEGACY_HISTORY_COMMIT,
  LEGACY_MIGRATIONS,
  LegacyHistoryIncompleteError,
} from '../../src/adapters/postgres/migration-baseline.ts';
import { migrate, MIGRATIONS_DIR } from '../../src/adapters/postgres/migrator.ts';
import { dumpSchema, SNAPSHOT_HEADER } from '../../src/adapters/postgres/schema-dump.ts';
import { freshEmbeddedDatabase, freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { silentLogger } from '../support/logger.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SNAPSHOT = new URL('../fixtures/schema.txt', import.meta.url);
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Writes the old migration files of LEGACY_HISTORY_COMMIT into `dir`. */
async function writeLegacyFiles(dir: string): Promise<void> {
  for (const name of LEGACY_MIGRATIONS) {
    let sql: string;
    try {
      const spec = `${LEGACY_HISTORY_COMMIT}:migrations/${name}.sql`;
      sql = execFileSync('git', ['-C', REPO, 'show', spec], { encoding: 'utf8' });
    } catch (error) {
      const needs = `this test needs a clone that holds commit ${LEGACY_HISTORY_COMMIT}`;
      throw new Error(`the old migrations are read from the git history; ${needs}`, { cause: error });
    }
    await writeFile(join(dir, `${name}.sql`), sql);
  }
}

/** Applies the first `count` old migrations with node-pg-migrate, as a version that had them did. */
async function applyLegacy(db: Db, dir: string, count: number): Promise<void> {
  await db.tx(async (client) => {
    await client.query('COMMIT');
    try {
      await runner({
        dbClient: client as unknown as pg.ClientBase,
        dir,
        direction: 'up',
        migrationsTable: 'pgmigrations',
        count,
        checkOrder: true,
        noLock: true,
        logger: quiet,
      });
    } finally {
      await client.query('BEGIN');
    }
  });
}

/** The names in pgmigrations, in the order node-pg-migrate reads them. */
async function recorded(db: Db): Promise<string[]> {
  const rows = (await db.query<{ name: string }>('SELECT name FROM pgmigrations ORDER BY run_on, id')).rows;
  return rows.map((r) => r.name);
}

/** The migrations that follow the baseline in migrations/, in order. */
async function afterBaseline(): Promise<string[]> {
  const names = (await readdir(MIGRATIONS_DIR))
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -4))
    .sort();
  assert.equal(names[0], BASELINE_MIGRATION, 'the baseline is the first migration');
  return names.slice(1);
}

const ENGINES = [
  { name: 'server', empty: () => freshServerDatabase({ migrate: false }) },
  { name: 'embedded', empty: () => freshEmbeddedDatabase({ migrate: false }) },
] as const;

let legacyDir: string;
before(async () => {
  legacyDir = await mkdtemp(join(tmpdir(), 'tidings-legacy-'));
  await writeLegacyFiles(legacyDir);
});
after(async () => rm(legacyDir, { recursive: true, force: true }));

for (const engine of ENGINES) {
  describe(`a database migrated by the history from before 0.1.0, on ${engine.name}`, () => {
    const opened: TestDatabase[] = [];
    const legacyDatabase = async (count: number): Promise<TestDatabase> => {
      const t = await engine.empty();
      opened.push(t);
      await applyLegacy(t.db, legacyDir, count);
      assert.deepEqual(await recorded(t.db), LEGACY_MIGRATIONS.slice(0, count));
      return t;
    };
    after(async () => {
      for (const t of opened) await t.drop();
    });

    test(
      'with all of them applied, it is marked as at the baseline, carried on with its rows, ' +
        'and has the schema of test/fixtures/schema.txt',
      async () => {
        const t = await legacyDatabase(LEGACY_MIGRATIONS.length);
        await t.db.query(`INSERT INTO applications (id, name) VALUES ('app_kept', 'kept')`);
        const run = await migrate(t.db, silentLogger);
        assert.equal(run.baselined, true);
        const later = await afterBaseline();
        assert.deepEqual(run.migrations, later, 'every migration after the baseline is applied on top of it');
        assert.deepEqual(await recorded(t.db), [BASELINE_MIGRATION, ...later]);
        assert.equal(
          SNAPSHOT_HEADER + (await dumpSchema(t.db)) === (await readFile(SNAPSHOT, 'utf8')),
          true,
          'the schema is exactly test/fixtures/schema.txt',
        );
        assert.deepEqual((await t.db.query('SELECT id FROM applications')).rows, [{ id: 'app_kept' }]);
        assert.deepEqual(
          await migrate(t.db, silentLogger),
          { baselined: false, migrations: [], routines: [] },
          'a second start changes nothing',
        );
      },
    );

    test(
      'with only some of them applied, it is refused with legacy_migrations_incomplete naming what to do, ' +
        'and nothing changes; finished by the old files, it is carried on',
      async () => {
        const t = await legacyDatabase(5);
        const schemaBefore = await dumpSchema(t.db);
        const refusal = await migrate(t.db, silentLogger).then(
          () => assert.fail('expected a refusal'),
          (e: unknown) => e,
        );
        assert.ok(refusal instanceof LegacyHistoryIncompleteError, String(refusal));
        assert.equal(refusal.code, 'legacy_migrations_incomplete');
        assert.match(
          refusal.message,
          /5 of its 19 migrations are applied, 14 are not \(from 1764000005000_raw-and-scheduled-messages\)/,
        );
        const commit = LEGACY_HISTORY_COMMIT.slice(0, 7);
        assert.match(refusal.message, new RegExp(`git checkout ${commit} && npm ci && npm run migrate`));
        assert.deepEqual(await recorded(t.db), LEGACY_MIGRATIONS.slice(0, 5), 'the migration table is unchanged');
        assert.equal(await dumpSchema(t.db), schemaBefore, 'the schema is unchanged');

        await applyLegacy(t.db, legacyDir, Number.POSITIVE_INFINITY);
        const run = await migrate(t.db, silentLogger);
        assert.equal(run.baselined, true);
        assert.deepEqual(await recorded(t.db), [BASELINE_MIGRATION, ...(await afterBaseline())]);
      },
    );

    test(
      'a failure while it is marked leaves every old row in place (one transaction), ' + 'and the next start marks it',
      async () => {
        const t = await legacyDatabase(LEGACY_MIGRATIONS.length);
        // A real fault inside the marking: the rename of the last row fails after the others were deleted.
        await t.db.query(`CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
        await t.db.query(`CREATE TRIGGER test_refuse BEFORE UPDATE ON pgmigrations
        FOR EACH ROW EXECUTE FUNCTION test_refuse()`);
        await assert.rejects(migrate(t.db, silentLogger), /refused by the test/);
        assert.deepEqual(await recorded(t.db), LEGACY_MIGRATIONS, 'no old row was deleted');
        await t.db.query('DROP TRIGGER test_refuse ON pgmigrations');
        await t.db.query('DROP FUNCTION test_refuse()');
        assert.equal((await migrate(t.db, silentLogger)).baselined, true);
        assert.equal((await recorded(t.db))[0], BASELINE_MIGRATION);
      },
    );

    if (engine.name === 'server') {
      test('it is marked under the migration lock: a start waits while another process holds it', async () => {
        const t = await legacyDatabase(LEGACY_MIGRATIONS.length);
        assert.ok(t.url !== undefined);
        const holder = new pg.Client({ connectionString: t.url });
        await holder.connect();
        try {
          await holder.query(`SELECT pg_advisory_lock(${PG_MIGRATE_LOCK_ID})`);
          let settled = false;
          const run = migrate(t.db, silentLogger).finally(() => {
            settled = true;
          });
          const waiting = `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
          for (let i = 0; i < 200 && (await holder.query(waiting)).rowCount === 0; i += 1) {
            await new Promise((resolve) => setImmediate(resolve));
          }
          assert.equal((await holder.query(waiting)).rowCount, 1, 'the migrator waits for the lock');
          assert.equal(settled, false);
          assert.deepEqual(
            await recorded(t.db),
            LEGACY_MIGRATIONS,
            'nothing was marked while the lock was held elsewhere',
          );
          await holder.query(`SELECT pg_advisory_unlock(${PG_MIGRATE_LOCK_ID})`);
          assert.equal((await run).baselined, true);
          assert.equal((await recorded(t.db))[0], BASELINE_MIGRATION);
        } finally {
          await holder.end();
        }
      });
    }
  });
}
