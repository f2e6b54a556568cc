import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { SendResult } from '../../src/domain/attempt-outcome.ts';
import type { ErrorKind } from '../../src/domain/error-kinds.ts';
import { createHttpSender, type HttpSenderOptions } from '../../src/adapters/http-sender/http-sender.ts';
import type { LookupFunction } from '../../src/adapters/http-sender/guarded-connect.ts';
import type { Sender } from '../../src/ports/sender.ts';
import * as receivers from '../support/hostile-receivers.ts';
import type { Behaviour, Receiver } from '../support/hostile-receivers.ts';

// Hostile receivers (docs/design.md#security): every attempt ends within its deadline + 1 s with the expected
// classification, memory stays bounded (RSS growth < 50 MB over the whole set), and a healthy receiver
// served at the same time gets every request. All receivers listen on 127.0.0.1 (allow-listed here).
// Short timeouts keep the file fast. undici runs its headers/body timers on a coarse clock (they may fire
// up to ~1 s late), so they are set well below the deadline to keep each classification deterministic.

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
const BOUND_MS = OPTIONS.deadlineMs + 1000;
const RSS_LIMIT_BYTES = 50 * 1024 * 1024;

const started: Receiver[] = [];
const senders: Sender[] = [];
let sender: Sender;

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

const BODY = Buffer.from('{"type":"invoice.paid","data":{"id":"in_1","amount":12345678901234567890}}');

/** Sends one webhook and measures the wall time around it (independent of the result's own durationMs). */
async function timedSend(
  s: Sender,
  url: string,
  signal?: AbortSignal,
): Promise<{ result: SendResult; wallMs: number }> {
  const t0 = performance.now();
  const result = await s.send(
    { url, headers: { 'content-type': 'application/json', 'webhook-id': 'msg_test' }, body: BODY },
    signal,
  );
  return { result, wallMs: performance.now() - t0 };
}

/** `global.gc`, exposed at run time when the process was not started with --expose-gc. */
function collector(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing !== undefined) return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

before(() => {
  sender = newSender();
});

after(async () => {
  await Promise.all(senders.map((s) => s.close()));
  await Promise.all(started.map((r) => r.close()));
});

type Expected =
  | { readonly type: 'error'; readonly errorKind: ErrorKind }
  | { readonly type: 'response'; readonly statusCode: number; readonly bodyError: ErrorKind | null };

interface HostileCase {
  readonly name: string;
  readonly behaviour: Behaviour;
  readonly expected: Expected;
  readonly check?: (result: SendResult, r: Receiver) => void;
}

function hostileCases(bomb: Buffer): readonly HostileCase[] {
  return [
    {
      name: 'headers never sent',
      behaviour: receivers.headersNeverSent,
      expected: { type: 'error', errorKind: 'timeout_headers' },
    },
    // Header bytes do not reset the headers timeout.
    {
      name: 'slow-drip headers',
      behaviour: receivers.slowDripHeaders,
      expected: { type: 'error', errorKind: 'timeout_headers' },
    },
    // Each body byte resets the body timeout; only the deadline ends it. The status line was a 200.
    {
      name: 'slow-drip body',
      behaviour: receivers.slowDripBody,
      expected: { type: 'response', statusCode: 200, bodyError: 'deadline' },
    },
    // Each 102 resets undici's headers timeout; only the deadline ends it.
    { name: 'endless 1xx', behaviour: receivers.endless1xx, expected: { type: 'error', errorKind: 'deadline' } },
    {
      name: 'never-closing connection',
      behaviour: receivers.neverClosing,
      expected: { type: 'response', statusCode: 200, bodyError: 'timeout_body' },
    },
    {
      name: '1 GB body',
      behaviour: receivers.oneGigabyteBody,
      expected: { type: 'response', statusCode: 200, bodyError: 'too_large' },
      check: (result, r) => {
        assert.equal(result.type === 'response' && result.bodyPrefix, 'x'.repeat(OPTIONS.responsePrefixBytes));
        assert.ok(
          r.bytesWritten() < 64 * 1024 * 1024,
          `the receiver pushed ${r.bytesWritten()} bytes before the socket closed`,
        );
      },
    },
    {
      name: 'compression bomb',
      behaviour: receivers.compressionBomb(bomb),
      expected: { type: 'response', statusCode: 200, bodyError: null },
      check: (result) => {
        // Not inflated: the prefix is the gzip stream itself (magic 1f 8b), not the zeros inside it.
        assert.ok(result.type === 'response' && result.bodyPrefix.startsWith('\u001f'), 'the body was decompressed');
        assert.ok(result.type === 'response' && result.bodyPrefix.length <= OPTIONS.responsePrefixBytes);
      },
    },
    { name: 'huge headers', behaviour: receivers.hugeHeaders, expected: { type: 'error', errorKind: 'too_large' } },
    {
      name: 'reset before the status line',
      behaviour: receivers.resetBeforeStatus,
      expected: { type: 'error', errorKind: 'reset' },
    },
    {
      name: 'closed before the status line',
      behaviour: receivers.closeBeforeStatus,
      expected: { type: 'error', errorKind: 'reset' },
    },
    // A 2xx whose body is then cut still counts as delivered (docs/design.md#retries-and-endpoint-health): a response
    // with bodyError.
    {
      name: 'reset after the status line',
      behaviour: receivers.resetAfterStatus,
      expected: { type: 'response', statusCode: 200, bodyError: 'reset' },
      check: (result) => assert.equal(result.type === 'response' && result.bodyPrefix, 'partial'),
    },
    {
      name: 'redirect loop',
      behaviour: receivers.redirect(),
      expected: { type: 'response', statusCode: 302, bodyError: null },
      check: (result, r) => {
        assert.equal(result.type === 'response' && result.location, `${r.url}hostile`);
        assert.equal(r.requests().length, 1, 'the redirect was followed');
      },
    },
    {
      name: 'HTML error page with 200',
      behaviour: receivers.htmlErrorPage200,
      expected: { type: 'response', statusCode: 200, bodyError: null },
      check: (result) => assert.ok(result.type === 'response' && result.bodyPrefix.startsWith('<!doctype html>')),
    },
    {
      name: '503 with Retry-After',
      behaviour: receivers.unavailableRetryAfter,
      expected: { type: 'response', statusCode: 503, bodyError: null },
      check: (result) => assert.equal(result.type === 'response' && result.retryAfter, '120'),
    },
    {
      name: 'malformed status line',
      behaviour: receivers.malformedStatusLine,
      expected: { type: 'error', errorKind: 'protocol' },
    },
    {
      name: 'unsolicited 100 Continue',
      behaviour: receivers.unsolicitedContinue,
      expected: { type: 'error', errorKind: 'protocol' },
    },
  ];
}

function assertExpected(name: string, result: SendResult, expected: Expected): void {
  const actual =
    result.type === 'error'
      ? { type: 'error', errorKind: result.errorKind }
      : { type: 'response', statusCode: result.statusCode, bodyError: result.bodyError };
  assert.deepEqual(actual, expected, `${name}: ${JSON.stringify(result).slice(0, 300)}`);
}

test(
  'hostile receivers: each attempt ends within deadline + 1 s, classified, in bounded memory, while a healthy ' +
    'receiver keeps being served',
  async (t: TestContext) => {
    const gc = collector();
    const bomb = await receivers.gzipBomb(10 * 1024 * 1024);
    const cases = hostileCases(bomb);
    const hostile = await Promise.all(cases.map((c) => receiver(c.behaviour)));
    // 10 ms of "work" per request keeps the healthy client at a realistic pace (a hot loop of thousands of
    // requests would move RSS by itself and hide what the hostile set costs).
    const healthy = await receiver(receivers.healthyAfter(10));

    // The healthy receiver's solo run, for comparison.
    const solo: number[] = [];
    for (let i = 0; i < 20; i += 1) solo.push((await timedSend(sender, healthy.url)).wallMs);

    gc();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore; // sampled after every healthy response, i.e. all through the hostile set

    let hostileDone = false;
    const hostileRun = Promise.all(cases.map((c, i) => timedSend(sender, `${hostile[i]?.url ?? ''}hostile`))).finally(
      () => {
        hostileDone = true;
      },
    );
    const alongside: { result: SendResult; wallMs: number }[] = [];
    for (let i = 0; i < 10_000 && !hostileDone; i += 1) {
      alongside.push(await timedSend(sender, healthy.url));
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }
    const outcomes = await hostileRun;

    gc();
    const rssAfter = process.memoryUsage().rss;
    const growthMb = (rssAfter - rssBefore) / 1024 / 1024;
    const peakGrowthMb = (rssPeak - rssBefore) / 1024 / 1024;
    t.diagnostic(
      `RSS before ${(rssBefore / 1024 / 1024).toFixed(1)} MB, after ${(rssAfter / 1024 / 1024).toFixed(1)} MB ` +
        `(both after a full GC): growth ${growthMb.toFixed(1)} MB; highest sample during the set ` +
        `+${peakGrowthMb.toFixed(1)} MB`,
    );

    cases.forEach((c, i) => {
      const outcome = outcomes[i];
      assert.ok(outcome !== undefined);
      t.diagnostic(
        `${c.name}: ` +
          (outcome.result.type === 'error'
            ? outcome.result.errorKind
            : `${outcome.result.statusCode} bodyError=${String(outcome.result.bodyError)}`) +
          ' ' +
          `in ${Math.round(outcome.wallMs)} ms (recorded ${outcome.result.durationMs} ms)`,
      );
      assertExpected(c.name, outcome.result, c.expected);
      assert.ok(outcome.wallMs <= BOUND_MS, `${c.name} took ${Math.round(outcome.wallMs)} ms (wall)`);
      assert.ok(outcome.result.durationMs <= BOUND_MS, `${c.name} recorded ${outcome.result.durationMs} ms`);
      const r = hostile[i];
      assert.ok(r !== undefined);
      c.check?.(outcome.result, r);
    });

    assert.ok(rssAfter - rssBefore < RSS_LIMIT_BYTES, `RSS grew by ${growthMb.toFixed(1)} MB`);
    assert.ok(
      rssPeak - rssBefore < RSS_LIMIT_BYTES,
      `RSS peaked ${peakGrowthMb.toFixed(1)} MB above its start during the set`,
    );

    // The healthy receiver was served all along, each request well within a generous bound of its solo run.
    const soloMax = Math.max(...solo);
    const worst = Math.max(...alongside.map((a) => a.wallMs));
    t.diagnostic(
      `healthy receiver: solo max ${soloMax.toFixed(1)} ms; ${alongside.length} requests alongside the hostile ` +
        `set, worst ${worst.toFixed(1)} ms`,
    );
    assert.ok(alongside.length >= 5, `only ${alongside.length} healthy requests completed during the hostile set`);
    for (const { result } of alongside)
      assert.equal(result.type === 'response' && result.statusCode, 200, JSON.stringify(result));
    assert.ok(worst <= soloMax + 1000, `a healthy request took ${worst.toFixed(1)} ms alongside the hostile set`);
    assert.equal(healthy.requests().length, solo.length + alongside.length);
  },
);

test('a closed port is connect_refused', async () => {
  const r = await receivers.startReceiver(receivers.healthy);
  const url = r.url;
  await r.close();
  const { result } = await timedSend(sender, url);
  assert.equal(result.type === 'error' && result.errorKind, 'connect_refused', JSON.stringify(result));
});

test('a resolver that never answers ends as timeout_connect: the connect timeout covers the lookup', async () => {
  const pending: (() => void)[] = [];
  const hanging: LookupFunction = (_hostname, _options, callback) => {
    pending.push(() => callback(null, [{ address: '127.0.0.1', family: 4 }]));
  };
  const { result, wallMs } = await timedSend(newSender({ lookup: hanging }), 'http://slow-dns.test:9/');
  assert.equal(result.type === 'error' && result.errorKind, 'timeout_connect', JSON.stringify(result));
  assert.ok(wallMs <= BOUND_MS);
  for (const answer of pending) answer(); // a late answer is ignored
});

test('https to a receiver that speaks plain HTTP is a tls error', async () => {
  const r = await receivers.startPlainHttpResponder();
  started.push(r);
  const { result } = await timedSend(sender, r.url.replace('http:', 'https:'));
  assert.equal(result.type === 'error' && result.errorKind, 'tls', JSON.stringify(result));
});

test(
  'the request carries the caller headers, our user-agent and the exact body; URL credentials and fragment are ' +
    'not sent',
  async () => {
    const r = await receiver(receivers.healthy);
    const url = r.url.replace('http://', 'http://user:secret@') + 'hooks/in?x=1#frag';
    const result = await sender.send({
      url,
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_1',
        'user-agent': 'spoofed',
        'x-custom': 'yes',
        'transfer-encoding': 'chunked',
      },
      body: BODY,
    });
    assert.equal(result.type === 'response' && result.statusCode, 200, JSON.stringify(result));
    const seen = r.requests()[0];
    assert.ok(seen !== undefined);
    const head = seen.head.toLowerCase();
    assert.match(seen.head, /^POST \/hooks\/in\?x=1 HTTP\/1\.1\r\n/);
    assert.match(head, /\r\nuser-agent: tidings\/test(\r\n|$)/);
    assert.match(head, /\r\nwebhook-id: msg_1(\r\n|$)/);
    assert.match(head, /\r\nx-custom: yes(\r\n|$)/);
    assert.match(head, new RegExp(`\\r\\ncontent-length: ${BODY.length}(\\r\\n|$)`));
    for (const absent of ['spoofed', 'authorization', 'transfer-encoding', 'accept-encoding', 'frag'])
      assert.ok(!head.includes(absent), `${absent} was sent`);
    assert.deepEqual(seen.body, BODY);
  },
);

test('send never throws: a bad URL, a refused scheme and an invalid header value are results', async () => {
  const badUrl = await sender.send({ url: 'not a url', headers: {}, body: BODY });
  assert.equal(badUrl.type === 'error' && badUrl.errorKind, 'blocked_address');
  const ftp = await sender.send({ url: 'ftp://127.0.0.1/', headers: {}, body: BODY });
  assert.equal(ftp.type === 'error' && ftp.errorKind, 'blocked_address');
  const r = await receiver(receivers.healthy);
  const injected = await sender.send({ url: r.url, headers: { 'x-evil': 'a\r\nx-injected: 1' }, body: BODY });
  assert.equal(injected.type, 'error', JSON.stringify(injected));
  assert.equal(r.connections(), 0);
});
