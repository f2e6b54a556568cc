// Rewrites test/fixtures/sql/, the rendered texts of the hot statements composed from named pieces
// (`npm run sql-fixtures`; src/adapters/postgres/statement-fixtures.ts). test/sql-fixtures.test.ts fails when
// one differs from the code; run this after changing a piece of those statements, and review the diff.
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { FIXTURE_STATEMENTS, fixtureFile, fixtureText } from '../src/adapters/postgres/statement-fixtures.ts';

const dir = new URL('../test/fixtures/sql/', import.meta.url);
await mkdir(dir, { recursive: true });
const files = new Set(FIXTURE_STATEMENTS.map(fixtureFile));
for (const old of await readdir(dir)) if (old.endsWith('.sql') && !files.has(old)) await rm(new URL(old, dir));
for (const statement of FIXTURE_STATEMENTS) {
  await writeFile(new URL(fixtureFile(statement), dir), fixtureText(statement));
}
console.log(`${FIXTURE_STATEMENTS.length} statements written to test/fixtures/sql/`);
