/**
 * The API-client commands as a user runs them (`bin/tidings.ts` in a child process, against a real Tidings with a
 * real receiver): publish from an argument, a file and stdin with its bytes delivered as written; the read
 * commands in tables and in `--json`; pause and resume; and the documented exit code of each kind of refusal.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import { apiEnv, json, runCli } from './cli-harness.ts';

let w: InProcessWorld;
let env: Record<string, string>;
let appId: string;
let endpointId: string;
let dir: string;

before(async () => {
  w = await startInProcessWorld();
  env = apiEnv(w.tidings.apiUrl!, w.token);
  appId = (await w.svix.application.create({ name: 'cli', uid: 'cli-app' })).id;
  endpointId = await w.endpoint(appId, '/cli');
  dir = await mkdtemp(join(tmpdir(), 'tidings-cli-'));
});
after(async () => {
  await w.stop();
});

test('publish delivers the payload exactly as written, from an argument, a file or stdin', async () => {
  // Spacing, key order and an integer beyond 2^53 must reach the receiver untouched.
  const payload = '{"z": 1,  "big": 12345678901234567890123, "a": [ 1,2 ]}';
  await writeFile(join(dir, 'p.json'), '{"from":"file"}\n');
  const [fromArg, fromFile, fromStdin] = await Promise.all([
    runCli(['publish', 'cli-app', 'order.paid', payload, '--json'], { env }),
    runCli(['publish', 'cli-app', 'order.paid', '--file', join(dir, 'p.json'), '--channel', 'eu', '--json'], { env }),
    runCli(['publish', 'cli-app', 'order.paid', '--deliver-at', '100ms'], { env, stdin: '{"from":"stdin"}' }),
  ]);
  assert.equal(fromArg.code, 0, fromArg.stderr);
  const message = json<{ id: string; eventType: string }>(fromArg);
  assert.match(message.id, /^msg_/);
  assert.equal(fromFile.code, 0, fromFile.stderr);
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.match(fromStdin.stdout, /^msg_\S+ {2}order\.paid {2}published .*, first attempt at /);
  const got = await w.receiver.waitForCount(3, 20_000, (r) => r.path === '/cli');
  assert.ok(got.every((r) => r.signatureValid === true));
  assert.equal(got.find((r) => r.webhookId === message.id)?.body, payload);
  assert.ok(got.some((r) => r.body === '{"from":"file"}'));
  assert.ok(got.some((r) => r.body === '{"from":"stdin"}'));
});

test('publish with an idempotency key answers the same message again, and says so', async () => {
  const args = ['publish', appId, 'order.paid', '{"n":1}', '--idempotency-key', 'cli-key-1', '--json'];
  const first = json<{ id: string; idempotentReplayed: boolean }>(await runCli(args, { env }));
  const again = json<{ id: string; idempotentReplayed: boolean }>(await runCli(args, { env }));
  assert.equal(again.id, first.id);
  assert.deepEqual([first.idempotentReplayed, again.idempotentReplayed], [false, true]);
});

test('the read commands print tables, and JSON with --json', async () => {
  const [apps, list, show, health, messages] = await Promise.all([
    runCli(['apps'], { env }),
    runCli(['endpoints', 'list', appId, '--json'], { env }),
    runCli(['endpoints', 'show', appId, endpointId, '--json'], { env }),
    runCli(['endpoints', 'health', appId, endpointId], { env }),
    runCli(['messages', 'list', appId, '--limit', '2', '--json'], { env }),
  ]);
  assert.equal(apps.code, 0, apps.stderr);
  assert.match(apps.stdout, /^ID +UID +NAME +CREATED\n/);
  assert.match(apps.stdout, new RegExp(`${appId} +cli-app +cli `));
  assert.deepEqual(
    json<{ data: { id: string }[] }>(list).data.map((e) => e.id),
    [endpointId],
  );
  assert.equal(json<{ url: string }>(show).url, w.receiver.url('/cli'));
  assert.match(health.stdout, /^status: active\nbreaker: closed, 0 failures in a row/);
  const page = json<{ data: { id: string }[]; iterator: string }>(messages);
  assert.equal(page.data.length, 2);
  assert.match(messages.stderr, /^$/, '--json prints no hint');
  const msgId = page.data[0]!.id;
  const [attempts, timeline, dead, more] = await Promise.all([
    runCli(['attempts', appId, '--msg', msgId, '--json'], { env }),
    runCli(['timeline', appId, msgId, endpointId], { env }),
    runCli(['dead-letters', appId], { env }),
    runCli(['messages', 'list', appId, '--limit', '2'], { env }),
  ]);
  assert.ok(
    json<{ data: { msgId: string; status: number }[] }>(attempts).data.every(
      (a) => a.msgId === msgId && a.status === 0,
    ),
  );
  assert.equal(timeline.code, 0, timeline.stderr);
  assert.match(timeline.stdout, /^state: succeeded, attempts: 1/);
  assert.match(timeline.stdout, /\n\S+ +succeeded /);
  assert.equal(dead.stdout, '(none)\n');
  assert.match(more.stderr, /^more: --iterator msg_\S+\n$/, 'a table names the next page on stderr');
});

test('pause holds the endpoint, resume lets it go', async () => {
  const paused = json<{ status: string }>(await runCli(['endpoints', 'pause', appId, endpointId, '--json'], { env }));
  assert.equal(paused.status, 'paused');
  const resumed = await runCli(['endpoints', 'resume', appId, endpointId], { env });
  assert.equal(resumed.stdout, `${endpointId}: resumed (status active)\n`);
});

test('each kind of refusal ends with its documented exit code and a message on stderr', async () => {
  const cases: [string, readonly string[], Record<string, string>, number, RegExp][] = [
    ['unknown application', ['endpoints', 'list', 'no-such-app'], env, 3, /404 not_found/],
    ['wrong token', ['apps'], { ...env, TIDINGS_TOKEN: 'not-a-token-0000000' }, 3, /401/],
    ['payload not JSON', ['publish', appId, 'e', '{nope'], env, 2, /the payload is not JSON/],
    ['input the API refuses', ['publish', appId, 'bad name!', '{}'], env, 2, /422 .*body\.eventType/],
    ['unknown option', ['apps', '--bogus'], env, 2, /unknown option '--bogus'/],
    ['no token', ['apps'], { TIDINGS_URL: w.tidings.apiUrl! }, 2, /no API token/],
    ['API unreachable', ['apps', '--url', 'http://127.0.0.1:9'], env, 4, /cannot reach the Tidings API/],
  ];
  const runs = await Promise.all(cases.map(([, args, e]) => runCli(args, { env: e })));
  for (const [i, [what, , , code, message]] of cases.entries()) {
    assert.equal(runs[i]!.code, code, `${what}: ${runs[i]!.stderr}`);
    assert.match(runs[i]!.stderr, message, what);
    assert.equal(runs[i]!.stdout, '', what);
  }
  const help = await runCli(['replay', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--dry-run/);
  assert.match(help.stdout, /Exit codes: 0 ok, 1 failure/);
});
