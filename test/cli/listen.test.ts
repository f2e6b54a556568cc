/**
 * `tidings listen` against a real Tidings: the messages published after it started reach a local receiver (a real
 * HTTP server on 127.0.0.1 that verifies with the public `standardwebhooks` package) with their exact payload
 * bytes, signed with the endpoint's secret and carrying their message id; one line per message with the local
 * answer; earlier messages are not forwarded; a refused local URL is a line, not the end; Ctrl-C stops it.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import { apiEnv, runCli, type CliRun } from './cli-harness.ts';

const WAIT_MS = 30_000;

let w: InProcessWorld;
let env: Record<string, string>;
let appId: string;
let endpointId: string;

before(async () => {
  w = await startInProcessWorld();
  env = apiEnv(w.tidings.apiUrl!, w.token);
  appId = (await w.svix.application.create({ name: 'listen' })).id;
  // The endpoint is paused: Tidings holds its deliveries, and listen forwards its messages to this machine.
  endpointId = await w.endpoint(appId, '/remote');
  await w.api('POST', `/api/v1/app/${appId}/endpoint/${endpointId}/pause`);
  const secret = (await w.svix.endpoint.getSecret(appId, endpointId)).key;
  await w.receiver.setSecret('/local', secret);
});
after(async () => {
  await w.stop();
});

/**
 * Runs `tidings listen …` to its end: `whenReady` runs once it says it is forwarding (its cursor is set), and
 * `onStdout` sees each line it prints.
 */
function listen(
  args: readonly string[],
  whenReady: () => Promise<void>,
  onStdout?: (chunk: string, signal: (s: NodeJS.Signals) => void) => void,
): Promise<CliRun> {
  let ready = false;
  return runCli(['listen', appId, endpointId, '--interval', '100ms', ...args], {
    env,
    timeoutMs: WAIT_MS,
    ...(onStdout === undefined ? {} : { onStdout }),
    onStderr: (chunk) => {
      if (!ready && chunk.includes('forwarding the messages of')) {
        ready = true;
        void whenReady();
      }
    },
  });
}

test('listen forwards new messages, signed, byte for byte, a JSON line each; stops at --max-messages', async () => {
  const before = await w.svix.message.create(appId, { eventType: 'old', payload: { old: true } });
  const payload = '{"amount":  12345678901234567890, "nested": {"b":1,"a":2}}';
  const published: string[] = [];
  const run = await listen(['--forward-to', w.receiver.url('/local'), '--max-messages', '2', '--json'], async () => {
    for (const body of [payload, '{"second":true}']) {
      const raw = await fetch(`${w.tidings.apiUrl}/api/v1/app/${appId}/msg`, {
        method: 'POST',
        headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
        body: `{"eventType":"order.paid","payload":${body}}`,
      });
      published.push(((await raw.json()) as { id: string }).id);
    }
  });
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { msgId: string; status: number; eventType: string });
  assert.deepEqual(
    lines.map((l) => [l.msgId, l.status, l.eventType]),
    published.map((id) => [id, 200, 'order.paid']),
  );
  assert.match(run.stderr, /stopped: 2 messages forwarded/);
  const got = await w.receiver.waitForCount(2, WAIT_MS, (r) => r.path === '/local');
  assert.deepEqual(
    got.map((r) => r.webhookId),
    published,
    'each message once, in order, with its id; the earlier one not at all',
  );
  assert.ok(!got.some((r) => r.webhookId === before.id));
  assert.ok(
    got.every((r) => r.signatureValid === true),
    got.map((r) => r.verifyError).join('; '),
  );
  assert.equal(got[0]!.body, payload, 'the payload bytes as published');
});

test("a refused local URL is reported on the message's line, and Ctrl-C stops listen with exit code 0", async () => {
  // A port nothing listens on: a server's, closed.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  let published = '';
  const run = await listen(
    ['--forward-to', `http://127.0.0.1:${port}/hook`],
    async () => {
      published = (await w.svix.message.create(appId, { eventType: 'refused', payload: {} })).id;
    },
    (chunk, signal) => {
      // Interrupt once the line is out: the first SIGINT asks listen to stop.
      if (chunk.includes('-> error:')) signal('SIGINT');
    },
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, new RegExp(`^\\S+ {2}${published} {2}refused {2}-> error: ECONNREFUSED\\n$`));
  assert.match(run.stderr, /stopped: 1 message forwarded/);
});
