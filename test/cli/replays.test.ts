/**
 * `tidings recover`, `replay-missing` and `replay` against a real Tidings: a dry run counts exactly what the task
 * then queues and changes nothing; the task is followed to its end with plain lines on a pipe, with a progress bar
 * on a terminal, and as one JSON object with --json; the messages reach the receiver again with their webhook-id.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import type { ReceivedRequest } from '../support/test-receiver.ts';
import { apiEnv, json, runCli, runCliInTerminal } from './cli-harness.ts';

const WAIT_MS = 30_000;

let w: InProcessWorld;
let env: Record<string, string>;
let appId: string;

before(async () => {
  w = await startInProcessWorld({
    // Two attempts in all, 10 ms apart: a message whose receiver fails is a dead letter at once.
    TIDINGS_RETRY_SCHEDULE: '10ms',
    TIDINGS_RETRY_JITTER: '0',
    TIDINGS_BREAKER_THRESHOLD: '1000000',
    TIDINGS_REPLAY_RATE: '1000',
    TIDINGS_TASK_BATCH: '2',
  });
  env = apiEnv(w.tidings.apiUrl!, w.token);
  appId = (await w.svix.application.create({ name: 'replays' })).id;
});
after(async () => {
  await w.stop();
});

/** Publishes `n` messages of `eventType`; returns their ids. */
async function publish(n: number, eventType: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await w.svix.message.create(appId, { eventType, payload: { i } })).id);
  return ids;
}

/** Makes `n` dead letters on a new endpoint at `path` (its receiver answers 503, then 200 again). */
async function deadLetters(path: string, n: number): Promise<{ endpointId: string; ids: string[] }> {
  const endpointId = await w.endpoint(appId, path);
  await w.receiver.script(path, [], { status: 503 });
  const ids = await publish(n, `dead${path.replaceAll('/', '.')}`);
  const set = new Set(ids);
  await w.logs.waitForCount(
    (l) => l.event === 'delivery.attempted' && l.next === 'dead' && set.has(String(l.messageId)),
    n,
    WAIT_MS,
    'dead letters',
  );
  await w.receiver.script(path, [], { status: 200 });
  return { endpointId, ids };
}

const onPath =
  (path: string, ids: readonly string[]) =>
  (r: ReceivedRequest): boolean =>
    r.path === path && ids.includes(r.webhookId ?? '') && r.answer.status === 200;

test('recover: a dry run counts dead letters, changing nothing; a run sends them, plain lines on a pipe', async () => {
  const { endpointId, ids } = await deadLetters('/recover', 3);
  const dry = await runCli(['recover', appId, endpointId, '--since', '1h', '--dry-run', '--json'], { env });
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(json(dry), { dryRun: true, wouldQueue: 3, atLeast: false, detail: { deadLetters: 3 } });
  assert.equal(
    (
      (await (await w.api('GET', `/api/v1/app/${appId}/endpoint/${endpointId}/dead-letter`)).json()) as {
        data: unknown[];
      }
    ).data.length,
    3,
    'nothing changed',
  );

  const run = await runCli(['recover', appId, endpointId, '--since', '1h'], { env });
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trimEnd().split('\n');
  assert.ok(
    lines.every((l) => !l.includes('\r') && !l.includes('\u001b')),
    `plain lines only: ${JSON.stringify(run.stdout)}`,
  );
  assert.match(
    lines.at(-1)!,
    /^qtask_\S+ finished: 3 queued to be sent again \(paced by TIDINGS_REPLAY_RATE\); 0 already queued/,
  );
  assert.match(run.stderr, /^qtask_\S+ started \(endpoint\.recover\)/);
  await w.receiver.waitForCount(3, WAIT_MS, onPath('/recover', ids));
});

test('replay-missing on a terminal: the bar is drawn, and the dry run counted what it sent', async () => {
  await publish(2, 'kept');
  await publish(1, 'other');
  // An endpoint made after those messages, subscribed to one of the two event types: it never had them. A third
  // message of that type reaches it while it is disabled: a skipped delivery.
  const endpointId = await w.endpoint(appId, '/late');
  await w.api('PATCH', `/api/v1/app/${appId}/endpoint/${endpointId}`, { filterTypes: ['kept'], disabled: true });
  await publish(1, 'kept');
  await w.api('PATCH', `/api/v1/app/${appId}/endpoint/${endpointId}`, { disabled: false });
  const dry = await runCli(['replay-missing', appId, endpointId, '--since', '1h', '--dry-run'], { env });
  assert.equal(dry.stdout, 'dry run: would queue 3 deliveries (skipped 1, neverDelivered 2); nothing was changed\n');

  const run = await runCliInTerminal(['replay-missing', appId, endpointId, '--since', '1h'], { env });
  assert.equal(run.code, 0, run.stdout);
  assert.match(run.stdout, /endpoint\.replay [█░]+ 3\/3 queued \| \d+ examined \| finished/, 'the bar, at its end');
  assert.match(run.stdout, /\u001b\[\?25l/, 'the cursor is hidden while the bar draws');
  assert.match(run.stdout, /qtask_\S+ finished: 3 queued to be sent again/);
  await w.receiver.waitForCount(3, WAIT_MS, (r) => r.path === '/late');
});

test("replay of dead letters with --json prints the finished task, its count equal to the dry run's", async () => {
  const { endpointId, ids } = await deadLetters('/replay', 4);
  const dry = json<{ wouldQueue: number }>(
    await runCli(['replay', appId, '--endpoint', endpointId, '--since', '1h', '--dry-run', '--json'], { env }),
  );
  const run = await runCli(['replay', appId, '--endpoint', endpointId, '--since', '1h', '--json'], { env });
  assert.equal(run.code, 0, run.stderr);
  const task = json<{ status: string; task: string; data: { messagesSent: number } }>(run);
  assert.deepEqual(
    [task.status, task.task, task.data.messagesSent],
    ['finished', 'dead-letter.replay', dry.wouldQueue],
  );
  assert.equal(dry.wouldQueue, 4);
  await w.receiver.waitForCount(4, WAIT_MS, onPath('/replay', ids));
});

test('a replay to a disabled endpoint is refused with exit code 3, dry run or not', async () => {
  const endpointId = await w.endpoint(appId, '/disabled');
  await w.api('PATCH', `/api/v1/app/${appId}/endpoint/${endpointId}`, { disabled: true });
  const [dry, real] = await Promise.all([
    runCli(['recover', appId, endpointId, '--since', '1h', '--dry-run'], { env }),
    runCli(['recover', appId, endpointId, '--since', '1h', '--no-wait'], { env }),
  ]);
  assert.deepEqual([dry.code, real.code], [3, 3]);
  assert.match(dry.stderr, /is disabled/);
  assert.match(real.stderr, /409 conflict/);
});
