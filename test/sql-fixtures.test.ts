/**
 * The hot statements composed from named pieces read, in test/fixtures/sql/, exactly as they are sent: each
 * committed file equals its statement's rendered text, and the folder holds no other statement. After a change
 * to a piece, `npm run sql-fixtures` rewrites them and the diff shows every variant it touched.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { FIXTURE_STATEMENTS, fixtureFile, fixtureText } from '../src/adapters/postgres/statement-fixtures.ts';

const dir = new URL('fixtures/sql/', import.meta.url);

test('each rendered hot statement equals its committed file in test/fixtures/sql/ (npm run sql-fixtures)', async () => {
  for (const statement of FIXTURE_STATEMENTS) {
    const committed = await readFile(new URL(fixtureFile(statement), dir), 'utf8');
    const file = fixtureFile(statement);
    assert.equal(fixtureText(statement), committed, `${file} differs from ${statement.name}: npm run sql-fixtures`);
  }
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  assert.deepEqual(files, FIXTURE_STATEMENTS.map(fixtureFile).sort());
});

test('every parameter of a hot statement is numbered once, in order of first appearance, and documented', () => {
  for (const statement of FIXTURE_STATEMENTS) {
    const used = [...new Set([...statement.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))];
    const expected = statement.names.map((_, i) => i + 1);
    assert.deepEqual(used, expected, `${statement.name}: $1…$${statement.names.length} in order`);
    for (const [i, name] of statement.names.entries()) {
      const line = new RegExp(`\\$${i + 1} +${name} `);
      assert.match(statement.header, line, `${statement.name}: $${i + 1} ${name} in the header`);
    }
  }
});
