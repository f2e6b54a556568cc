/**
 * The embedded engine's data folder (docs/design.md#storage-and-the-embedded-engine): one process at a time — a second
 * opener is refused with a coded error while the first lives, the folder reopens after a clean close, and a socket left
 * by a crashed process does not block the next start; a holder killed with SIGKILL is seen dead by its pid and
 * its folder taken over at once, not after its lock goes stale. What a killed process committed is there at the
 * next start, and every commit was flushed to the disk before it returned (the machine-crash half, which a
 * test cannot cut the power for, is checked as the flush itself).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { openDb, DataDirInUseError } from '../../src/adapters/postgres/db.ts';
import { FLUSH_FAILED_EXIT_CODE, openDurablePGlite } from '../../src/adapters/postgres/pglite-durable.ts';

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tidings-lock-'));
});
after(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

test(
  'a second process opening a data folder in use is refused with ' + 'data_dir_in_use; after a clean close it opens',
  async () => {
    const first = await openDb({ databaseUrl: undefined, dataDir, poolSize: 1 });
    try {
      await assert.rejects(
        openDb({ databaseUrl: undefined, dataDir, poolSize: 1, lockRetries: 0 }),
        (e: unknown) => e instanceof DataDirInUseError && e.code === 'data_dir_in_use',
      );
      assert.deepEqual((await first.query('SELECT 1 AS ok')).rows, [{ ok: 1 }], 'the holder is unharmed');
    } finally {
      await first.close();
    }
    const again = await openDb({ databaseUrl: undefined, dataDir, poolSize: 1, lockRetries: 0 });
    await again.close();
  },
);

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

test(
  'a holder killed with SIGKILL is seen dead by its pid: its data folder is taken over at once, without waiting ' +
    'for the lock to go stale',
  async () => {
    const dir = join(dataDir, 'killed');
    const dbModule = pathToFileURL(join(import.meta.dirname, '../../src/adapters/postgres/db.ts')).href;
    const script =
      `const { openDb } = await import(${JSON.stringify(dbModule)}); await openDb({ databaseUrl: undefined, ` +
      `dataDir: ${JSON.stringify(dir)}, poolSize: 1, lockRetries: 0 }); process.stdout.write('ready\\n'); ` +
      'setInterval(() => {}, 1000);';
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('ready')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`holder exited early (${code})`)));
      });
      await assert.rejects(
        openDb({ databaseUrl: undefined, dataDir: dir, poolSize: 1, lockRetries: 0 }),
        (e: unknown) => e instanceof DataDirInUseError,
        'a live holder in another process is refused',
      );
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
  },
);

test(
  'a commit survives the death of its process (SIGKILL): both commits are read back at the next start; the ' +
    'engine runs with fsync on',
  async () => {
    const dir = join(dataDir, 'committed');
    const dbModule = pathToFileURL(join(import.meta.dirname, '../../src/adapters/postgres/db.ts')).href;
    const script = `const { openDb } = await import(${JSON.stringify(dbModule)});
const db = await openDb({ databaseUrl: undefined, dataDir: ${JSON.stringify(dir)}, poolSize: 1, lockRetries: 0 });
await db.query('CREATE TABLE kept (id int PRIMARY KEY)');
await db.query('INSERT INTO kept VALUES (1)');
await db.tx(async (q) => { await q.query('INSERT INTO kept VALUES (2)'); });
const sql = "SELECT current_setting('fsync') AS fsync, " + "current_setting('wal_sync_method') AS method";
const settings = (await db.query(sql)).rows[0];
process.stdout.write('committed ' + JSON.stringify(settings) + '\\n');
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
        });
        child.once('exit', (code) => reject(new Error(`holder exited early (${code})`)));
      });
      assert.deepEqual(
        JSON.parse(line.replace(/^committed /, '')),
        { fsync: 'on', method: 'fsync' },
        'openDb opens the embedded engine with its commits flushed',
      );
      child.kill('SIGKILL');
      await once(child, 'exit');
      const db = await openDb({ databaseUrl: undefined, dataDir: dir, poolSize: 1, lockRetries: 0 });
      try {
        assert.deepEqual(
          (await db.query('SELECT id FROM kept ORDER BY id')).rows,
          [{ id: 1 }, { id: 2 }],
          'both commits are there after the kill',
        );
      } finally {
        await db.close();
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  },
);

test(
  'a new data folder is flushed whole, and a commit is flushed to the disk before it returns (fsync on, through ' +
    "the file system's own fsync); a read flushes nothing",
  async () => {
    let flushes = 0;
    await mkdir(join(dataDir, 'flushed'), { recursive: true });
    const lite = await openDurablePGlite(join(dataDir, 'flushed', 'pgdata'), {
      onFlush: () => {
        flushes += 1;
      },
    });
    try {
      const files = (await readdir(join(dataDir, 'flushed', 'pgdata'), { recursive: true })).length;
      assert.ok(
        flushes >= files,
        `a new data folder is flushed whole: ${flushes} flushes for ${files} files and folders`,
      );
      assert.deepEqual((await lite.query('SHOW fsync')).rows, [{ fsync: 'on' }]);
      assert.deepEqual((await lite.query('SHOW wal_sync_method')).rows, [{ wal_sync_method: 'fsync' }]);
      await lite.exec('CREATE TABLE flushed (id int PRIMARY KEY)');
      let before = flushes;
      await lite.query('INSERT INTO flushed VALUES (1)');
      assert.ok(flushes > before, `an autocommit insert flushed ${flushes - before} times`);
      before = flushes;
      await lite.transaction(async (tx) => {
        await tx.query('INSERT INTO flushed VALUES (2)');
        await tx.query('INSERT INTO flushed VALUES (3)');
      });
      assert.ok(flushes > before, 'a transaction flushes at its commit');
      before = flushes;
      assert.deepEqual((await lite.query('SELECT count(*)::int AS n FROM flushed')).rows, [{ n: 3 }]);
      assert.equal(flushes, before, 'a read flushes nothing');
    } finally {
      await lite.close();
    }
  },
);

test(
  'a flush that fails ends the process with FLUSH_FAILED_EXIT_CODE and one line on stderr, before the commit ' +
    'returns',
  async () => {
    const dir = join(dataDir, 'failing');
    await mkdir(dir, { recursive: true });
    const durable = pathToFileURL(join(import.meta.dirname, '../../src/adapters/postgres/pglite-durable.ts')).href;
    const script = `import { fsyncSync } from 'node:fs';
const { openDurablePGlite } = await import(${JSON.stringify(durable)});
let failing = false;
const lite = await openDurablePGlite(${JSON.stringify(join(dir, 'pgdata'))},
  { flush: (fd) => { if (failing) throw new Error('injected I/O error'); fsyncSync(fd); } });
await lite.exec('CREATE TABLE lost (id int)');
failing = true;
await lite.query('INSERT INTO lost VALUES (1)');
process.stdout.write('the commit returned\\n');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    assert.equal(code, FLUSH_FAILED_EXIT_CODE, `exit code (stderr: ${err.slice(-500)})`);
    assert.equal(out, '', 'the commit never returned');
    assert.match(err, /could not flush \/.*pgdata\/.* to the disk \(injected I\/O error\)/);
  },
);
