/**
 * A wrong or missing encryption key fails start-up clearly (docs/guides/security.md): startTidings throws a coded error
 * before serving anything, and the CLI exits non-zero with the message — on the PostgreSQL server (no key,
 * a key with a known id but other bytes, a ring without the key the data needs, encryption turned off) and
 * on the embedded engine (a lost key file).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KEY_FILE } from '../../src/main/encryption.ts';
import { startTidings } from '../../src/main/compose.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';

const CLI = fileURLToPath(new URL('../../src/main/cli.ts', import.meta.url));
const K1 = `k1:${randomBytes(32).toString('base64')}`;
const K1_OTHER_BYTES = `k1:${randomBytes(32).toString('base64')}`;
const K2 = `k2:${randomBytes(32).toString('base64')}`;
const TOKEN = 'startup_keys_admin_token_0123456789';

/**
 * Runs the CLI with `env` (and nothing of this process's environment but PATH); resolves with its exit code and output.
 */
function cli(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const coded =
  (code: string) =>
  (error: unknown): boolean => {
    assert.equal((error as { code?: string }).code, code, (error as Error).message);
    return true;
  };

describe('start-up with a wrong or missing key (server)', () => {
  let database: TestDatabase;
  const env = (extra: Record<string, string>) => ({
    DATABASE_URL: database.url!,
    TIDINGS_API_TOKEN: TOKEN,
    HOST: '127.0.0.1',
    PORT: '0',
    TIDINGS_LOG_LEVEL: 'silent',
    ...extra,
  });
  before(async () => {
    database = await freshServerDatabase();
    const first = await startTidings({
      roles: { api: true, dispatcher: false },
      env: env({ TIDINGS_ENCRYPTION_KEYS: K1 }),
    });
    await first.stop();
  });
  after(async () => database?.drop());

  test(
    'no key ring with a server: startTidings throws ' + 'encryption_keys_required; the CLI exits 1 saying what to set',
    async () => {
      await assert.rejects(
        startTidings({ roles: { api: true, dispatcher: true }, env: env({}) }),
        coded('encryption_keys_required'),
      );
      const run = await cli(['api'], env({}));
      assert.equal(run.code, 1);
      assert.match(run.stderr, /TIDINGS_ENCRYPTION_KEYS is not.*\(encryption_keys_required\)/s);
    },
  );

  test(
    'a key with the right id but other bytes: ' +
      'encryption_key_mismatch, from startTidings, the CLI and keys ' +
      'rotate',
    async () => {
      await assert.rejects(
        startTidings({ roles: { api: true, dispatcher: true }, env: env({ TIDINGS_ENCRYPTION_KEYS: K1_OTHER_BYTES }) }),
        coded('encryption_key_mismatch'),
      );
      const run = await cli(['serve'], env({ TIDINGS_ENCRYPTION_KEYS: K1_OTHER_BYTES }));
      assert.equal(run.code, 1);
      assert.match(run.stderr, /key "k1" is not the key that encrypted the stored data.*\(encryption_key_mismatch\)/s);
      const rotate = await cli(['keys', 'rotate'], env({ TIDINGS_ENCRYPTION_KEYS: `${K2},${K1_OTHER_BYTES}` }));
      assert.equal(rotate.code, 1);
      assert.match(rotate.stderr, /encryption_key_mismatch/);
    },
  );

  test('a ring without the key stored data uses, or encryption turned off: encryption_key_missing', async () => {
    await assert.rejects(
      startTidings({ roles: { api: false, dispatcher: true }, env: env({ TIDINGS_ENCRYPTION_KEYS: K2 }) }),
      coded('encryption_key_missing'),
    );
    await assert.rejects(
      startTidings({
        roles: { api: true, dispatcher: false },
        env: env({ TIDINGS_INSECURE_PLAINTEXT_STORAGE: 'true' }),
      }),
      coded('encryption_key_missing'),
    );
    const run = await cli(['dispatcher'], env({ TIDINGS_ENCRYPTION_KEYS: K2 }));
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /stored data is encrypted under key "k1", which is not in the key ring.*\(encryption_key_missing\)/s,
    );
    // Nothing was registered by the refused starts: the original ring still starts.
    const ok = await startTidings({
      roles: { api: true, dispatcher: false },
      env: env({ TIDINGS_ENCRYPTION_KEYS: K1 }),
    });
    await ok.stop();
  });
});

describe('start-up with a lost key file (embedded)', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tidings-keys-'));
  });
  after(async () => rm(dataDir, { recursive: true, force: true }));

  test(
    'the embedded engine generates its key on first start; when the key file is lost, start-up refuses instead ' +
      'of using a new key',
    async () => {
      const env = {
        TIDINGS_DATA_DIR: dataDir,
        TIDINGS_API_TOKEN: TOKEN,
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_LOG_LEVEL: 'silent',
      };
      const first = await startTidings({ roles: { api: true, dispatcher: false }, env });
      await first.stop();
      await unlink(join(dataDir, KEY_FILE));
      await assert.rejects(
        startTidings({ roles: { api: true, dispatcher: false }, env }),
        coded('encryption_key_mismatch'),
      );
    },
  );
});
