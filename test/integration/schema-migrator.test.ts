/**
 * A freshly migrated database, on each engine, has exactly the committed schema snapshot
 * (test/fixtures/schema.txt), so every schema change shows in review as a diff of that file; after a new
 * migration or a changed routine, regenerate it with `npm run schema` and review the diff.
 *
 * The migrator keeps routines in step (src/adapters/postgres/routines.ts): after the migrations, under the
 * same advisory lock, it runs every routine file whose SHA-256 differs from the one recorded in
 * `tidings_routines`, and leaves the others alone. On both engines; the lock test needs a second session
 * and runs on the PostgreSQL server only.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PG_MIGRATE_LOCK_ID } from 'node-pg-migrate';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../../src/adapters/postgres/migrator.ts';
import { dumpSchema, SNAPSHOT_HEADER } from '../../src/adapters/postgres/schema-dump.ts';
import { ROUTINES, type Routine } from '../../src/adapters/postgres/routines.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { silentLogger } from '../support/logger.ts';

/** Sessions of this database waiting for an advisory lock. */
const WAITING = `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/** The lines that differ, "-" only in `before`, "+" only in `after`, by a longest common subsequence. */
function lineDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i += 1;
      j += 1;
    } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push(`+ ${b[j]}`);
      j += 1;
    } else {
      out.push(`- ${a[i]}`);
      i += 1;
    }
  }
  return out.join('\n');
}

const SNAPSHOT = new URL('../fixtures/schema.txt', import.meta.url);

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A routine file defining `tidings_test_routine()`, which returns `value`. */
const routineSql = (value: number): string =>
  `CREATE OR REPLACE FUNCTION tidings_test_routine() RETURNS integer LANGUAGE sql AS $$ SELECT ${value} $$;\n`;

for (const engine of ENGINES) {
  describe(`schema and routines on ${engine.name}`, () => {
    let t: TestDatabase;
    let dir: string;
    let routine: Routine;
    before(async () => {
      t = await engine.fresh();
      dir = await mkdtemp(join(tmpdir(), 'tidings-routine-'));
      routine = { name: 'tidings_test_routine', path: join(dir, 'test-routine.sql') };
    });
    after(async () => {
      await t.drop();
      await rm(dir, { recursive: true, force: true });
    });

    // First, before the tests below add a function of their own.
    test('a freshly migrated database has exactly the schema of test/fixtures/schema.txt', async () => {
      const actual = SNAPSHOT_HEADER + (await dumpSchema(t.db));
      const expected = await readFile(SNAPSHOT, 'utf8');
      assert.ok(
        actual === expected,
        `the ${engine.name} schema differs from test/fixtures/schema.txt (+ this database, - the snapshot); if ` +
          `the change is intended, run \`npm run schema\` and commit the file:\n${lineDiff(expected, actual)}`,
      );
    });

    const callRoutine = async (): Promise<number> =>
      (await t.db.query<{ v: number }>('SELECT tidings_test_routine() AS v')).rows[0]!.v;

    test(
      'a freshly migrated database has the claim of delivery/claim.sql, with no gate parameter, and its checksum ' +
        'recorded',
      async () => {
        const [claim] = ROUTINES;
        assert.ok(claim !== undefined && claim.name === 'tidings_claim');
        const file = await readFile(claim.path, 'utf8');
        const body = /\$claim\$([\s\S]*)\$claim\$/.exec(file)?.[1];
        const fns = (
          await t.db.query<{ args: string; src: string }>(
            'SELECT pg_get_function_identity_arguments(oid) AS args, prosrc AS src FROM pg_proc WHERE proname = ' +
              `'tidings_claim'`,
          )
        ).rows;
        const current = fns.find((f) => f.src === body);
        assert.ok(current !== undefined, 'a tidings_claim function has the body of delivery/claim.sql');
        assert.equal(current.args.split(',').length, 12);
        assert.doesNotMatch(current.args, /p_gated/);
        const recorded = (
          await t.db.query<{ checksum: string }>(`SELECT checksum FROM tidings_routines WHERE name = 'tidings_claim'`)
        ).rows;
        assert.deepEqual(recorded, [{ checksum: sha256(file) }]);
        assert.deepEqual(
          await migrate(t.db, silentLogger),
          { baselined: false, migrations: [], routines: [] },
          'a second start applies nothing',
        );
      },
    );

    test(
      'a new routine is applied; unchanged, it is not run ' + 'again; its file changed, it is applied again',
      async () => {
        await writeFile(routine.path, routineSql(1));
        assert.deepEqual(await migrate(t.db, silentLogger, { routines: [routine] }), {
          baselined: false,
          migrations: [],
          routines: ['tidings_test_routine'],
        });
        assert.equal(await callRoutine(), 1);

        // Changed behind the migrator's back: an unchanged file must not overwrite it, so the change stays.
        await t.db.query(routineSql(99));
        assert.deepEqual(await migrate(t.db, silentLogger, { routines: [routine] }), {
          baselined: false,
          migrations: [],
          routines: [],
        });
        assert.equal(await callRoutine(), 99, 'the unchanged routine was not run again');

        await writeFile(routine.path, routineSql(2));
        assert.deepEqual(await migrate(t.db, silentLogger, { routines: [routine] }), {
          baselined: false,
          migrations: [],
          routines: ['tidings_test_routine'],
        });
        assert.equal(await callRoutine(), 2);
        const recorded = (
          await t.db.query<{ checksum: string }>(
            `SELECT checksum FROM tidings_routines WHERE name = 'tidings_test_routine'`,
          )
        ).rows;
        assert.deepEqual(recorded, [{ checksum: sha256(routineSql(2)) }]);
      },
    );

    test(
      'a routine that fails leaves its function and its checksum as they were, and is applied at the next start ' +
        'once fixed',
      async () => {
        await writeFile(routine.path, `${routineSql(3)}SELECT no_such_column FROM tidings_routines;\n`);
        await assert.rejects(migrate(t.db, silentLogger, { routines: [routine] }), /routine tidings_test_routine/);
        assert.equal(await callRoutine(), 2, 'the failed file changed nothing');
        await writeFile(routine.path, routineSql(3));
        assert.deepEqual((await migrate(t.db, silentLogger, { routines: [routine] })).routines, [
          'tidings_test_routine',
        ]);
        assert.equal(await callRoutine(), 3);
      },
    );

    if (engine.name === 'server') {
      test('routines are applied under the migration lock: a start waits while another process holds it', async () => {
        assert.ok(t.url !== undefined);
        await writeFile(routine.path, routineSql(4));
        const holder = new pg.Client({ connectionString: t.url });
        await holder.connect();
        try {
          await holder.query(`SELECT pg_advisory_lock(${PG_MIGRATE_LOCK_ID})`);
          let settled = false;
          const run = migrate(t.db, silentLogger, { routines: [routine] }).finally(() => {
            settled = true;
          });
          // Wait (bounded) until the migrator's session is seen waiting for the lock.
          for (let i = 0; i < 200; i += 1) {
            const waiting = await holder.query(WAITING);
            if (waiting.rowCount !== 0) break;
            await new Promise((resolve) => setImmediate(resolve));
          }
          assert.equal((await holder.query(WAITING)).rowCount, 1, 'the migrator waits for the lock');
          assert.equal(settled, false);
          assert.equal(await callRoutine(), 3, 'nothing was applied while the lock was held elsewhere');
          await holder.query(`SELECT pg_advisory_unlock(${PG_MIGRATE_LOCK_ID})`);
          assert.deepEqual((await run).routines, ['tidings_test_routine']);
          assert.equal(await callRoutine(), 4);
        } finally {
          await holder.end();
        }
      });
    }
  });
}
