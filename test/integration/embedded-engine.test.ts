/**
 * The embedded engine's data folder (issue 2 / review): one process at a time — a second opener is refused
 * with a coded error while the first lives, the folder reopens after a clean close, and a socket left by a
 * crashed process does not block the next start.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openDb, DataDirInUseError } from '../../src/adapters/postgres/db.ts';

let dataDir: string;
before(async () => { dataDir = await mkdtemp(join(tmpdir(), 'tidings-lock-')); });
after(async () => { await rm(dataDir, { recursive: true, force: true }); });

test('a second process opening a data folder in use is refused with data_dir_in_use; after a clean close it opens', async () => {
  const first = await openDb({ databaseUrl: undefined, dataDir, poolSize: 1 });
  try {
    await assert.rejects(openDb({ databaseUrl: undefined, dataDir, poolSize: 1, lockRetries: 0 }), (e: unknown) => e instanceof DataDirInUseError && e.code === 'data_dir_in_use');
    assert.deepEqual((await first.query('SELECT 1 AS ok')).rows, [{ ok: 1 }], 'the holder is unharmed');
  } finally {
    await first.close();
  }
  const again = await openDb({ databaseUrl: undefined, dataDir, poolSize: 1, lockRetries: 0 });
  await again.close();
});

test('a socket file left by a crashed process does not block the next start', async () => {
  await mkdir(join(dataDir, 'sock'), { recursive: true });
  await writeFile(join(dataDir, 'sock', '.s.PGSQL.5432'), '');
  const db = await openDb({ databaseUrl: undefined, dataDir, poolSize: 1, lockRetries: 0 });
  try {
    assert.deepEqual((await db.query('SELECT 2 AS ok')).rows, [{ ok: 2 }]);
  } finally {
    await db.close();
  }
});
