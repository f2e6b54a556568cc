/**
 * The embedded engine's data folder (docs/design.md#storage-and-the-embedded-engine): one process at a time — a second opener is refused
 * with a coded error while the first lives, the folder reopens after a clean close, and a socket left by a
 * crashed process does not block the next start; a holder killed with SIGKILL is seen dead by its pid and
 * its folder taken over at once, not after its lock goes stale. What a killed process committed is there at the
 * next start; what a machine crash would lose is the limit README's failure table states (PGlite flushes nothing).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
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

test('a holder killed with SIGKILL is seen dead by its pid: its data folder is taken over at once, without waiting for the lock to go stale', async () => {
  const dir = join(dataDir, 'killed');
  const dbModule = pathToFileURL(join(import.meta.dirname, '../../src/adapters/postgres/db.ts')).href;
  const script = `const { openDb } = await import(${JSON.stringify(dbModule)}); await openDb({ databaseUrl: undefined, dataDir: ${JSON.stringify(dir)}, poolSize: 1, lockRetries: 0 }); process.stdout.write('ready\\n'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); if (out.includes('ready')) resolve(); });
      child.once('exit', (code) => reject(new Error(`holder exited early (${code})`)));
    });
    await assert.rejects(openDb({ databaseUrl: undefined, dataDir: dir, poolSize: 1, lockRetries: 0 }), (e: unknown) => e instanceof DataDirInUseError, 'a live holder in another process is refused');
    child.kill('SIGKILL');
    await once(child, 'exit');
    // No retries: only a take-over at once can succeed (the lock was refreshed moments ago, far from stale).
    const startedAt = Date.now();
    const db = await openDb({ databaseUrl: undefined, dataDir: dir, poolSize: 1, lockRetries: 0 });
    const tookMs = Date.now() - startedAt;
    try {
      assert.deepEqual((await db.query('SELECT 3 AS ok')).rows, [{ ok: 3 }]);
    } finally {
      await db.close();
    }
    assert.ok(tookMs < 10_000, `open after the kill took ${tookMs} ms (the lock's staleness is 10 s)`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

test('a commit survives the death of its process (SIGKILL), not of the machine: PGlite runs with fsync off and flushes nothing to the disk', async () => {
  const dir = join(dataDir, 'committed');
  const dbModule = pathToFileURL(join(import.meta.dirname, '../../src/adapters/postgres/db.ts')).href;
  const script = `const { openDb } = await import(${JSON.stringify(dbModule)});
const db = await openDb({ databaseUrl: undefined, dataDir: ${JSON.stringify(dir)}, poolSize: 1, lockRetries: 0 });
await db.query('CREATE TABLE kept (id int PRIMARY KEY)');
await db.query('INSERT INTO kept VALUES (1)');
await db.tx(async (q) => { await q.query('INSERT INTO kept VALUES (2)'); });
process.stdout.write(JSON.stringify((await db.query('SHOW fsync')).rows[0]) + '\\n');
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n'))); });
      child.once('exit', (code) => reject(new Error(`holder exited early (${code})`)));
    });
    // The machine-crash limit of the embedded engine (README, failure table): when this changes, so does the table.
    assert.deepEqual(JSON.parse(line), { fsync: 'off' }, 'the embedded engine flushes no commit to the disk');
    child.kill('SIGKILL');
    await once(child, 'exit');
    const db = await openDb({ databaseUrl: undefined, dataDir: dir, poolSize: 1, lockRetries: 0 });
    try {
      assert.deepEqual((await db.query('SELECT id FROM kept ORDER BY id')).rows, [{ id: 1 }, { id: 2 }], 'both commits are there after the kill');
    } finally {
      await db.close();
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
