/**
 * The committed schema snapshot (test/fixtures/schema.txt) is what the migrations and routines produce, on
 * both engines, so every schema change shows in review as a diff of that file. After a new migration or a
 * changed routine, regenerate it with `npm run schema` and review the diff.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { dumpSchema, SNAPSHOT_HEADER } from '../../src/adapters/postgres/schema-dump.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';

/** The lines that differ, "-" only in `before`, "+" only in `after`, by a longest common subsequence. */
function lineDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) { i += 1; j += 1; } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) { out.push(`+ ${b[j]}`); j += 1; } else { out.push(`- ${a[i]}`); i += 1; }
  }
  return out.join('\n');
}

const SNAPSHOT = new URL('../fixtures/schema.txt', import.meta.url);

for (const engine of ENGINES) {
  describe(`schema snapshot on ${engine.name}`, () => {
    let t: TestDatabase;
    before(async () => { t = await engine.fresh(); });
    after(async () => { await t.drop(); });

    test('a freshly migrated database has exactly the schema of test/fixtures/schema.txt', async () => {
      const actual = SNAPSHOT_HEADER + await dumpSchema(t.db);
      const expected = await readFile(SNAPSHOT, 'utf8');
      assert.ok(actual === expected, `the ${engine.name} schema differs from test/fixtures/schema.txt (+ this database, - the snapshot); if the change is intended, run \`npm run schema\` and commit the file:\n${lineDiff(expected, actual)}`);
    });
  });
}
