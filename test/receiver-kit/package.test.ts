/**
 * packages/receiver-kit is publishable: its build (the `prepack` script's tsc) emits every file its `exports` name,
 * and the built package, installed under a node_modules folder (where Node.js does not strip types), loads by
 * its name and verifies a request signed by the public `standardwebhooks` signer.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, test } from 'node:test';

const KIT = fileURLToPath(new URL('../../packages/receiver-kit/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const scratch = await mkdtemp(join(tmpdir(), 'receiver-kit-'));
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

interface Manifest {
  name: string;
  license: string;
  type: string;
  files: string[];
  exports: Record<string, string | Record<string, string>>;
  dependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional: boolean }>;
  scripts: Record<string, string>;
}

test('the build emits every file the exports name, and the built package works from node_modules', async () => {
  const manifest = JSON.parse(await readFile(join(KIT, 'package.json'), 'utf8')) as Manifest;
  const rootManifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  assert.equal(manifest.type, 'module');
  assert.equal(manifest.license, 'Apache-2.0');
  assert.deepEqual(manifest.files, ['dist', 'README.md', 'LICENSE']);
  assert.ok(existsSync(join(KIT, 'LICENSE')) && existsSync(join(KIT, 'README.md')));
  assert.equal(
    manifest.dependencies.standardwebhooks,
    rootManifest.devDependencies.standardwebhooks,
    'the verifier the tests use',
  );
  assert.deepEqual(Object.keys(manifest.peerDependenciesMeta).sort(), ['fastify', 'ioredis', 'pg']);
  assert.match(manifest.scripts.prepack!, /npm run build/);

  const installed = join(scratch, 'node_modules', '@tidings', 'receiver');
  await mkdir(installed, { recursive: true });
  await run(
    process.execPath,
    [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(KIT, 'tsconfig.build.json'),
      '--outDir',
      join(installed, 'dist'),
    ],
    { cwd: KIT, timeout: 120_000 },
  );
  const targets = Object.values(manifest.exports).flatMap((entry) =>
    typeof entry === 'string' ? [entry] : Object.values(entry),
  );
  for (const target of targets.filter((t) => t.startsWith('./dist/')))
    assert.ok(existsSync(join(installed, target)), `${target} is built`);

  await cp(join(KIT, 'package.json'), join(installed, 'package.json'));
  await symlink(
    join(ROOT, 'node_modules', 'standardwebhooks'),
    join(scratch, 'node_modules', 'standardwebhooks'),
    'dir',
  );
  const script = join(scratch, 'check.mjs');
  await writeFile(
    script,
    `
import { Webhook } from 'standardwebhooks';
import { createReceiver, memoryStore } from '@tidings/receiver';
import { nodeHandler } from '@tidings/receiver/node';
import { postgresStore } from '@tidings/receiver/postgres';
import { redisStore } from '@tidings/receiver/redis';
const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
const body = '{"a":1}';
const ts = new Date(Math.floor(Date.now() / 1000) * 1000);
const headers = {
  'webhook-id': 'msg_1',
  'webhook-timestamp': String(ts.getTime() / 1000),
  'webhook-signature': new Webhook(secret).sign('msg_1', ts, body),
};
const receiver = createReceiver({ secret, store: memoryStore(), handler: () => undefined });
const first = await receiver.handle({ headers, body: Buffer.from(body) });
const again = await receiver.handle({ headers, body: Buffer.from(body) });
console.log(JSON.stringify([first.status, JSON.parse(first.body).code, JSON.parse(again.body).code,
  typeof nodeHandler, typeof postgresStore, typeof redisStore]));
`,
  );
  const { stdout } = await run(process.execPath, [script], { cwd: scratch, timeout: 30_000 });
  assert.deepEqual(JSON.parse(stdout), [200, 'processed', 'duplicate', 'function', 'function', 'function']);
});
