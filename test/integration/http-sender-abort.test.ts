import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import type { SendResult } from '../../src/domain/attempt-outcome.ts';
import { createHttpSender, type HttpSenderOptions } from '../../src/adapters/http-sender/http-sender.ts';
import type { LookupFunction } from '../../src/adapters/http-sender/guarded-connect.ts';
import type { Sender } from '../../src/ports/sender.ts';
import * as receivers from '../support/hostile-receivers.ts';
import type { Behaviour, Receiver } from '../support/hostile-receivers.ts';

// The Sender port's abort contract (src/ports/sender.ts, docs/design.md#the-protocol, step 2): an abort before the
// request is written ends the attempt as `deadline` / `aborted` with nothing written; the per-origin socket cap
// queues attempts, and a queued attempt still ends by its deadline. Receivers on 127.0.0.1 only.

const OPTIONS: HttpSenderOptions = {
  connectTimeoutMs: 300,
  headersTimeoutMs: 300,
  bodyTimeoutMs: 300,
  deadlineMs: 2000,
  maxResponseBytes: 64 * 1024,
  responsePrefixBytes: 1024,
  maxSocketsPerOrigin: 8,
  egressAllowlist: ['127.0.0.1/32'],
  userAgent: 'Tidings/test',
};
const BODY = Buffer.from('{"type":"invoice.paid"}');

const started: Receiver[] = [];
const senders: Sender[] = [];
const sender = newSender();

async function receiver(behaviour: Behaviour): Promise<Receiver> {
  const r = await receivers.startReceiver(behaviour);
  started.push(r);
  return r;
}

function newSender(extra: Partial<HttpSenderOptions> = {}): Sender {
  const s = createHttpSender({ ...OPTIONS, ...extra });
  senders.push(s);
  return s;
}

async function timedSend(
  s: Sender,
  url: string,
  signal?: AbortSignal,
): Promise<{ result: SendResult; wallMs: number }> {
  const t0 = performance.now();
  const result = await s.send({ url, headers: { 'content-type': 'application/json' }, body: BODY }, signal);
  return { result, wallMs: performance.now() - t0 };
}

after(async () => {
  await Promise.all(senders.map((s) => s.close()));
  await Promise.all(started.map((r) => r.close()));
});

test('an already aborted signal sends nothing', async () => {
  const r = await receiver(receivers.healthy);
  const { result } = await timedSend(sender, r.url, AbortSignal.abort());
  assert.deepEqual(result, { type: 'error', errorKind: 'deadline', detail: 'aborted', durationMs: 0 });
  assert.equal(r.connections(), 0);
});

test('an abort while connecting ends the attempt as deadline/aborted and the request is never written', async () => {
  const r = await receiver(receivers.healthy);
  const gate = Promise.withResolvers<void>();
  const gated: LookupFunction = (_hostname, _options, callback) => {
    void gate.promise.then(() => callback(null, [{ address: '127.0.0.1', family: isIP('127.0.0.1') }]));
  };
  // One connection per origin: both requests queue on it, in order.
  const s = newSender({ lookup: gated, connectTimeoutMs: 5000, deadlineMs: 10_000, maxSocketsPerOrigin: 1 });
  const controller = new AbortController();
  const url = `http://gated.test:${r.port}/`;
  const first = s.send({ url, headers: {}, body: Buffer.from('first') }, controller.signal);
  controller.abort();
  const { network: _network, ...aborted } = await first; // the operator's network detail is not compared here
  assert.deepEqual(
    { ...aborted, durationMs: 0 },
    { type: 'error', errorKind: 'deadline', detail: 'aborted', durationMs: 0 },
  );
  // Let the connection complete: undici drops the aborted request when the socket is ready (and closes
  // that socket); the request queued after it is written on a fresh connection.
  const second = s.send({ url, headers: {}, body: Buffer.from('second') });
  gate.resolve();
  const secondResult = await second;
  assert.equal(secondResult.type === 'response' && secondResult.statusCode, 200, JSON.stringify(secondResult));
  assert.deepEqual(
    r.requests().map((q) => q.body.toString()),
    ['second'],
  );
});

test('an abort after the request was written says so', async () => {
  const r = await receiver(receivers.headersNeverSent);
  const controller = new AbortController();
  const pending = sender.send({ url: r.url, headers: {}, body: BODY }, controller.signal);
  await r.whenRequests(1);
  controller.abort();
  const result = await pending;
  assert.equal(result.type === 'error' && result.errorKind, 'deadline');
  assert.equal(result.type === 'error' && result.detail, 'aborted after the request was sent');
});

test('connections per origin are capped: four attempts share two connections, the others wait their turn', async () => {
  const held: (() => void)[] = [];
  const r = await receiver((socket, request, context) => {
    held.push(() => receivers.healthy(socket, request, context));
  });
  const s = newSender({ maxSocketsPerOrigin: 2, headersTimeoutMs: 10_000, deadlineMs: 10_000 });
  const all = Promise.all([0, 1, 2, 3].map(() => timedSend(s, r.url)));
  // Answer one request at a time; each answer frees a connection for the next queued attempt.
  for (let answered = 0; answered < 4; answered += 1) {
    await r.whenRequests(answered + 1);
    held.shift()?.();
  }
  for (const { result } of await all)
    assert.equal(result.type === 'response' && result.statusCode, 200, JSON.stringify(result));
  assert.equal(r.requests().length, 4);
  assert.equal(r.connections(), 2, 'a third connection was opened to the origin');
});

test('an attempt queued behind the per-origin cap still ends by its deadline', async () => {
  const r = await receiver(receivers.headersNeverSent);
  const s = newSender({ maxSocketsPerOrigin: 1, headersTimeoutMs: 10_000, deadlineMs: 1000 });
  const outcomes = await Promise.all([0, 1].map(() => timedSend(s, r.url)));
  for (const { result, wallMs } of outcomes) {
    assert.equal(result.type === 'error' && result.errorKind, 'deadline', JSON.stringify(result));
    assert.ok(wallMs <= 2000, `${Math.round(wallMs)} ms`);
  }
});
