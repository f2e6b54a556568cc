// Rewrites test/fixtures/schema.txt, the committed schema snapshot (`npm run schema`): migrates a fresh
// embedded database in a temporary folder and writes the text of src/adapters/postgres/schema-dump.ts.
// test/integration/schema-migrator.test.ts fails when a freshly migrated database, on either engine,
// differs from it; run this after adding a migration or changing a routine, and review the diff.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../src/adapters/postgres/db.ts';
import { migrate } from '../src/adapters/postgres/migrator.ts';
import { dumpSchema, SNAPSHOT_HEADER } from '../src/adapters/postgres/schema-dump.ts';

const quiet = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => quiet,
};
const dataDir = await mkdtemp(join(tmpdir(), 'tidings-schema-'));
try {
  const db = await openDb({ databaseUrl: undefined, dataDir, poolSize: 1 });
  try {
    await migrate(db, quiet);
    const target = new URL('../test/fixtures/schema.txt', import.meta.url);
    await writeFile(target, SNAPSHOT_HEADER + (await dumpSchema(db)));
    console.log('schema snapshot written to test/fixtures/schema.txt');
  } finally {
    await db.close();
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
