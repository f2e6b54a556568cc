import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Agent, request } from 'undici';
import { decodeSecret, encodeSecret, signatureHeaders } from '../../src/domain/signing.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

// Self-test of the TestReceiver used by the end-to-end suites: a real child process on 127.0.0.1.

const SECRET = encodeSecret(Buffer.alloc(32, 7));
const OTHER_SECRET = encodeSecret(Buffer.alloc(32, 9));
const KEY = decodeSecret(SECRET);

let receiver: TestReceiver;
const agent = new Agent({ connections: 64, pipelining: 1 });

before(async () => {
  receiver = await startTestReceiver({ secrets: { '/signed': SECRET } });
});
after(async () => {
  await receiver.stop();
  await agent.close();
});

/** Posts a body signed with our signing code, as the dispatcher would. */
async function post(
  path: string,
  msgId: string,
  body: string,
  options: { key?: Uint8Array; timestampS?: number; signal?: AbortSignal } = {},
) {
  const bytes = Buffer.from(body, 'utf8');
  const headers = signatureHeaders(
    [options.key ?? KEY],
    msgId,
    options.timestampS ?? Math.floor(Date.now() / 1000),
    bytes,
  );
  const response = await request(receiver.url(path), {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', ...headers },
    body: bytes,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text };
}

test(
  'a request signed with our signing code is recorded with a ' + 'valid signature, its headers and its body',
  async () => {
    await receiver.reset();
    const body = '{"type":"invoice.paid","data":{"amount":1000,"big":12345678901234567890}}';
    const answer = await post('/signed?x=1', 'msg_valid_1', body);
    assert.equal(answer.status, 200);
    const [record] = await receiver.requests();
    assert.ok(record !== undefined);
    assert.equal(record.seq, 1);
    assert.equal(record.method, 'POST');
    assert.equal(record.path, '/signed');
    assert.equal(record.target, '/signed?x=1');
    assert.equal(record.webhookId, 'msg_valid_1');
    assert.match(record.webhookTimestamp ?? '', /^\d{10}$/);
    assert.equal(record.signatureValid, true);
    assert.equal(record.signatureMatches, true);
    assert.equal(record.verifyError, null);
    assert.equal(record.body, body);
    assert.equal(record.bodyBytes, Buffer.byteLength(body));
    assert.equal(record.bodySha256, createHash('sha256').update(body).digest('hex'));
    assert.equal(record.headers['content-type'], 'application/json');
    assert.ok(Math.abs(record.receivedAtMs - Date.now()) < 60_000);
  },
);

test('a bad signature, a wrong secret, an old timestamp and an unsigned path are told apart', async () => {
  await receiver.reset();
  await post('/signed', 'msg_wrong_key', '{}', { key: decodeSecret(OTHER_SECRET) });
  const tampered = Buffer.from('{"a":1}');
  const headers = signatureHeaders([KEY], 'msg_tampered', Math.floor(Date.now() / 1000), tampered);
  await request(receiver.url('/signed'), {
    method: 'POST',
    dispatcher: agent,
    headers: { ...headers },
    body: '{"a":2}',
  }).then((r) => r.body.dump());
  await post('/signed', 'msg_old', '{}', { timestampS: Math.floor(Date.now() / 1000) - 3_600 });
  await post('/unsigned', 'msg_no_secret', '{}');
  await request(receiver.url('/signed'), { method: 'POST', dispatcher: agent, body: '{}' }).then((r) => r.body.dump());
  const records = await receiver.requests();
  assert.deepEqual(
    records.map((r) => [r.webhookId, r.signatureValid, r.signatureMatches]),
    [
      ['msg_wrong_key', false, false],
      ['msg_tampered', false, false],
      ['msg_old', false, true],
      ['msg_no_secret', null, null],
      [null, false, false],
    ],
  );
  assert.match(records[0]?.verifyError ?? '', /No matching signature/);
  assert.match(records[2]?.verifyError ?? '', /too old/);
  assert.match(records[4]?.verifyError ?? '', /Missing required headers/);
});

test('secret rotation: a request verifies when any of the path secrets accepts it', async () => {
  await receiver.reset();
  await receiver.setSecret('/rotating', [OTHER_SECRET, SECRET]);
  await post('/rotating', 'msg_rotated', '{}');
  const [record] = await receiver.requests();
  assert.equal(record?.signatureValid, true);
  await assert.rejects(receiver.setSecret('/broken', 'whsec_not-base64!'), /secret refused by standardwebhooks/);
});

test('script 500, 500, then the default 200: three answers in order, and waitFor sees the third request', async () => {
  await receiver.reset();
  await receiver.script('/flaky', [{ status: 500, body: 'boom' }, { status: 500 }]);
  const statuses: number[] = [];
  for (let i = 0; i < 3; i += 1) statuses.push((await post('/flaky', 'msg_flaky', '{"n":1}')).status);
  assert.deepEqual(statuses, [500, 500, 200]);
  const records = await receiver.waitFor(
    (rs) => rs.filter((r) => r.path === '/flaky').length === 3,
    5_000,
    'three attempts on /flaky',
  );
  assert.deepEqual(
    records.map((r) => r.answer.status ?? 200),
    [500, 500, 200],
  );
  assert.deepEqual(new Set(records.map((r) => r.webhookId)), new Set(['msg_flaky']));
});

test('a fallback step answers after the script runs out; headers and bodies are sent as scripted', async () => {
  await receiver.reset();
  await receiver.script('/limited', [{ status: 429, headers: { 'retry-after': '1' } }], { status: 503, body: 'down' });
  const first = await post('/limited', 'msg_1', '{}');
  assert.equal(first.status, 429);
  assert.equal(first.headers['retry-after'], '1');
  for (let i = 0; i < 2; i += 1) {
    const next = await post('/limited', 'msg_1', '{}');
    assert.deepEqual([next.status, next.text], [503, 'down']);
  }
  await receiver.script('/moved', [
    { status: 302, headers: { location: 'https://elsewhere.example/' } },
    { status: 200, bodyBytes: 300_000 },
  ]);
  const moved = await post('/moved', 'msg_2', '{}');
  assert.deepEqual([moved.status, moved.headers.location], [302, 'https://elsewhere.example/']);
  const huge = await post('/moved', 'msg_2', '{}');
  assert.equal(huge.text.length, 300_000);
});

test('delayMs delays the answer; stall never answers until the client gives up', async () => {
  await receiver.reset();
  await receiver.script('/slow', [{ delayMs: 150 }]);
  const started = performance.now();
  assert.equal((await post('/slow', 'msg_slow', '{}')).status, 200);
  assert.ok(performance.now() - started >= 140, 'answered after the delay');

  await receiver.script('/stall', [{ stall: true }]);
  const abort = new AbortController();
  const pending = post('/stall', 'msg_stall', '{}', { signal: abort.signal });
  await receiver.waitForCount(1, 5_000, (r) => r.path === '/stall');
  abort.abort();
  await assert.rejects(pending, (error: Error) => error.name === 'AbortError' || /aborted/i.test(error.message));
});

test('destroy closes the connection without an answer', async () => {
  await receiver.reset();
  await receiver.script('/reset', [{ destroy: true }]);
  await assert.rejects(post('/reset', 'msg_reset', '{}'), /other side closed|socket|reset/i);
  const records = await receiver.requests();
  assert.deepEqual(
    records.map((r) => [r.path, r.answer.destroy]),
    [['/reset', true]],
  );
});

test('waitFor rejects after its bound with what it waited for and what arrived', async () => {
  await receiver.reset();
  await post('/signed', 'msg_only', '{}');
  await assert.rejects(
    receiver.waitFor((rs) => rs.length >= 2, 100, 'two requests'),
    (error: Error) => {
      assert.match(
        error.message,
        /waitFor\(two requests\): not met within 100 ms; 1 requests received; last: #1 POST \/signed id=msg_only/,
      );
      return true;
    },
  );
});

test('3,000 signed requests over 3 paths are all recorded, valid and distinct, within a few seconds', async () => {
  await receiver.reset();
  const paths = ['/load-a', '/load-b', '/load-c'];
  for (const path of paths) await receiver.setSecret(path, SECRET);
  const total = 3_000;
  const started = performance.now();
  const all = receiver.waitForCount(total, 30_000, (r) => r.path.startsWith('/load-'));
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next;
      next += 1;
      const answer = await post(paths[i % 3] ?? '/load-a', `msg_load_${Math.floor(i / 3)}`, `{"i":${i}}`);
      assert.equal(answer.status, 200);
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
  const records = await all;
  const elapsedMs = performance.now() - started;
  assert.equal(records.length, total);
  assert.ok(
    records.every((r) => r.signatureValid === true),
    'every signature valid',
  );
  assert.equal(new Set(records.map((r) => `${r.path} ${r.webhookId}`)).size, total, 'each (endpoint, message) once');
  assert.ok(elapsedMs < 20_000, `3,000 requests took ${Math.round(elapsedMs)} ms`);
  process.stdout.write(`# test receiver: 3,000 requests recorded in ${Math.round(elapsedMs)} ms\n`);
});

test('stop ends the child; later calls fail clearly and a second stop is harmless', async () => {
  const own = await startTestReceiver();
  const pid = own.pid;
  assert.ok(pid > 0);
  await own.script('/s', [{ stall: true }]);
  const pending = request(own.url('/s'), { method: 'POST', body: '{}' }).catch((error: Error) => error);
  await own.waitForCount(1, 5_000);
  await own.stop();
  assert.ok((await pending) instanceof Error, 'the stalled request was cut');
  await own.stop();
  await assert.rejects(own.requests(), /test receiver process exited/);
  assert.throws(() => process.kill(pid, 0), /ESRCH/);
});
