/**
 * The container image (deploy/docker/) without a container engine: the Dockerfile read as text (stages, base, init,
 * user, health check, entrypoint; every COPY source exists and is not excluded by .dockerignore; every setting it
 * names is in the configuration schema), then its entrypoint script and health check run as plain processes on
 * this machine's Node.js 24 — `--help`, `migrate` against a fresh database, the api and dispatcher roles started,
 * found healthy and stopped by SIGTERM.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { livezUrls } from '../../deploy/docker/healthcheck.ts';
import { SETTINGS } from '../../src/config/config.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRYPOINT = `${ROOT}deploy/docker/entrypoint.sh`;
const HEALTHCHECK = `${ROOT}deploy/docker/healthcheck.ts`;
const run = promisify(execFile);
const SETTING_NAMES = new Set(Object.values(SETTINGS).map((s) => s.env));
/** The environment of a container: PATH with this Node.js 24 first (the image's `node`), and the settings given. */
const containerEnv = (settings: Record<string, string>): Record<string, string> => ({
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  HOME: process.env.HOME ?? '/tmp',
  ...settings,
});

let database: TestDatabase;
before(async () => {
  database = await freshServerDatabase({ migrate: false });
});
after(async () => {
  await database?.drop();
});

test(
  'the Dockerfile: Node 24 slim, production dependencies built in a stage, ' +
    'tini as PID 1, a non-root user, a /livez health check',
  () => {
    const text = readFileSync(`${ROOT}deploy/docker/Dockerfile`, 'utf8');
    const stages = [...text.matchAll(/^FROM (\S+)(?: AS (\w+))?$/gm)].map((m) => [m[1], m[2]]);
    assert.match(text, /^ARG NODE_IMAGE=node:24-slim$/m);
    assert.deepEqual(stages, [
      ['${NODE_IMAGE}', 'deps'],
      ['${NODE_IMAGE}', 'web'],
      ['${NODE_IMAGE}', undefined],
    ]);
    assert.match(text, /FROM \$\{NODE_IMAGE\} AS deps\n[\s\S]*?RUN npm ci --omit=dev/);
    assert.match(text, /apt-get install -y --no-install-recommends tini/);
    assert.match(text, /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "\/app\/deploy\/docker\/entrypoint.sh"\]$/m);
    assert.match(text, /^CMD \["serve"\]$/m);
    assert.match(text, /^USER 10001:10001$/m);
    assert.match(text, /^HEALTHCHECK .* CMD \["node", "\/app\/deploy\/docker\/healthcheck.ts"\]$/m);
    assert.match(text, /COPY --from=deps \/app\/node_modules/);
    // What the runtime stage copies from the build context exists and is not excluded from it.
    const ignored = readFileSync(`${ROOT}.dockerignore`, 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    const sources = [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    assert.ok(sources.length >= 6);
    for (const source of sources) {
      assert.ok(existsSync(`${ROOT}${source}`), `${source} exists`);
      assert.ok(
        !ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)),
        `${source} is in the build context`,
      );
    }
    for (const [name] of text.matchAll(/\b(TIDINGS_[A-Z_]+|HOST|PORT)(?==)/g))
      assert.ok(SETTING_NAMES.has(name), `${name} is a setting`);
    assert.equal(
      (readFileSync(ENTRYPOINT, 'utf8').match(/^exec node /gm) ?? []).length,
      1,
      'the entrypoint execs Node.js',
    );
  },
);

test(
  'the entrypoint execs node on bin/tidings.ts with the arguments ' +
    'given, serve when none; --help prints the commands',
  async () => {
    // A stand-in `node` first on PATH prints the arguments it was given.
    const bin = await mkdtemp(join(tmpdir(), 'entrypoint-'));
    try {
      await writeFile(join(bin, 'node'), '#!/bin/sh\necho "$@"\n', { mode: 0o755 });
      const argsOf = async (...args: string[]): Promise<string> =>
        (await run(ENTRYPOINT, args, { env: { PATH: `${bin}:/usr/bin:/bin` } })).stdout.trim();
      assert.equal(await argsOf(), `${ROOT}bin/tidings.ts serve`);
      assert.equal(await argsOf('dispatcher'), `${ROOT}bin/tidings.ts dispatcher`);
      assert.equal(await argsOf('keys', 'generate'), `${ROOT}bin/tidings.ts keys generate`);
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
    const help = await run(ENTRYPOINT, ['--help'], { env: containerEnv({}) });
    for (const command of ['serve', 'api', 'dispatcher', 'migrate'])
      assert.match(help.stdout, new RegExp(`^  ${command} `, 'm'));
  },
);

test('the entrypoint runs migrate against a fresh database', async () => {
  const env = containerEnv({ DATABASE_URL: database.url!, TIDINGS_LOG_LEVEL: 'warn' });
  const { stdout } = await run(ENTRYPOINT, ['migrate'], { env, timeout: 120_000 });
  assert.match(stdout, /^applied: /m);
  const { rows } = await database.db.query<{ made: boolean }>(
    `SELECT to_regclass('public.deliveries') IS NOT NULL AS made`,
  );
  assert.deepEqual(rows, [{ made: true }]);
});

test(
  'api and dispatcher containers start from the entrypoint, pass ' +
    'the health check, and stop on SIGTERM with exit 0',
  async () => {
    const [apiPort, adminPort, unused] = await freePorts(3);
    const base = {
      DATABASE_URL: database.url!,
      TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      HOST: '127.0.0.1',
      TIDINGS_LOG_LEVEL: 'info',
    };
    const roles = [
      {
        role: 'api',
        env: { ...base, PORT: String(apiPort), TIDINGS_ADMIN_PORT: String(unused) },
        listening: 'HTTP API listening',
      },
      {
        role: 'dispatcher',
        env: { ...base, PORT: String(unused), TIDINGS_ADMIN_PORT: String(adminPort) },
        listening: 'admin server listening',
      },
    ];
    await Promise.all(
      roles.map(async ({ role, env, listening }) => {
        const child = spawn(ENTRYPOINT, [role], { env: containerEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        try {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`${role} did not listen within 60 s`)), 60_000);
            let text = '';
            child.stdout!.on('data', (chunk: Buffer) => {
              text += chunk.toString();
              if (text.includes(listening)) {
                clearTimeout(timer);
                resolve();
              }
            });
            child.once('exit', (code) => {
              clearTimeout(timer);
              reject(new Error(`${role} exited with ${code}`));
            });
          });
          assert.deepEqual(
            livezUrls(env).map((u) => new URL(u).port),
            [env.PORT, env.TIDINGS_ADMIN_PORT],
          );
          const healthy = await run(process.execPath, [HEALTHCHECK], { env: containerEnv(env) }).then(
            () => 0,
            (e: { code: number }) => e.code,
          );
          assert.equal(healthy, 0, `${role}: the health check passes`);
        } finally {
          child.kill('SIGTERM');
        }
        assert.equal(await exited, 0, `${role}: a graceful stop`);
      }),
    );
    const down = await run(process.execPath, [HEALTHCHECK], {
      env: containerEnv({ PORT: String(apiPort), TIDINGS_ADMIN_PORT: String(adminPort) }),
    }).then(
      () => 0,
      (e: { code: number }) => e.code,
    );
    assert.equal(down, 1, 'the health check fails when nothing answers');
  },
);

/** Ports free on 127.0.0.1 right now. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve) => {
          const server = createServer();
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}
