/**
 * The answer policy of @tidings/receiver (packages/receiver-kit) and its node:http, Express and Fastify adapters,
 * with requests signed by the public `standardwebhooks` signer and a manual clock for the timestamp checks.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { createReceiver, type ReceiverAnswer, type WebhookEvent } from '../../packages/receiver-kit/src/index.ts';
import { expressReceiver } from '../../packages/receiver-kit/src/adapters/express.ts';
import { fastifyReceiver } from '../../packages/receiver-kit/src/adapters/fastify.ts';
import { nodeHandler } from '../../packages/receiver-kit/src/adapters/node-http.ts';
import { memoryStore } from '../../packages/receiver-kit/src/stores/memory.ts';
import type { ReceiptStore } from '../../packages/receiver-kit/src/store.ts';
import { deferred } from '../support/deferred.ts';
import { newSecret, signed } from './support.ts';

const secret = newSecret();
const code = (a: ReceiverAnswer): string => (JSON.parse(a.body) as { code: string }).code;

/** A receiver over a memory store whose handler records what it got; `clock` moves its time. */
function subject(
  options: { handler?: (event: WebhookEvent) => unknown; toleranceSeconds?: number; secrets?: string[] } = {},
) {
  const seen: WebhookEvent[] = [];
  const clock = { ms: Date.now() };
  const receiver = createReceiver({
    secret: options.secrets ?? secret,
    store: memoryStore(),
    nowMs: () => clock.ms,
    toleranceSeconds: options.toleranceSeconds ?? 60,
    handler: async (event) => {
      seen.push(event);
      return options.handler?.(event);
    },
  });
  return { receiver, seen, clock };
}

describe('answer policy', () => {
  test(
    'a valid request runs the handler (200 processed); the same ' +
      'request again answers 200 duplicate without running it',
    async () => {
      const { receiver, seen } = subject();
      const request = signed(secret);
      const first = await receiver.handle(request);
      assert.deepEqual([first.status, code(first)], [200, 'processed']);
      const again = await receiver.handle(request);
      assert.deepEqual([again.status, code(again)], [200, 'duplicate']);
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0]!.payload, JSON.parse(request.body.toString()));
    },
  );

  test(
    'missing signature headers answer 400 naming them; a ' + 'timestamp that is not Unix seconds answers 400',
    async () => {
      const { receiver, seen } = subject();
      const { headers, body } = signed(secret);
      const { 'webhook-signature': _signature, ...unsigned } = headers;
      const missing = await receiver.handle({ headers: unsigned, body });
      assert.equal(missing.status, 400);
      assert.deepEqual(JSON.parse(missing.body), {
        code: 'signature_headers_missing',
        detail: 'missing header: webhook-signature',
      });
      const none = await receiver.handle({ headers: { 'content-type': 'application/json' }, body });
      assert.deepEqual(JSON.parse(none.body), {
        code: 'signature_headers_missing',
        detail:
          'missing header: webhook-id (or svix-id), webhook-timestamp (or svix-timestamp), ' +
          'webhook-signature (or svix-signature)',
      });
      const svixOnly = await receiver.handle({ headers: { 'svix-id': 'msg_1', 'svix-timestamp': '1' }, body });
      assert.equal(JSON.parse(svixOnly.body).detail, 'missing header: svix-signature');
      const badTime = await receiver.handle({
        headers: { ...headers, 'webhook-timestamp': '2026-01-01T00:00:00Z' },
        body,
      });
      assert.deepEqual([badTime.status, code(badTime)], [400, 'timestamp_invalid']);
      assert.equal(seen.length, 0);
    },
  );

  test(
    'a signature by another secret, over other bytes or for another id ' +
      'answers 401 signature_invalid; the handler never runs',
    async () => {
      const { receiver, seen } = subject();
      const good = signed(secret, { body: '{"amount":100}' });
      const cases = [
        signed(newSecret(), { body: '{"amount":100}' }),
        { headers: good.headers, body: Buffer.from('{"amount":900}') },
        { headers: { ...good.headers, 'webhook-id': 'msg_other' }, body: good.body },
        {
          headers: { ...good.headers, 'webhook-signature': 'v1,' + Buffer.alloc(32).toString('base64') },
          body: good.body,
        },
      ];
      for (const request of cases) {
        const refused = await receiver.handle(request);
        assert.deepEqual([refused.status, code(refused)], [401, 'signature_invalid']);
      }
      assert.equal(seen.length, 0);
    },
  );

  test(
    'a timestamp further than toleranceSeconds from the clock, ' +
      'either way, answers 401; at the edge it is accepted',
    async () => {
      const { receiver, seen, clock } = subject({ toleranceSeconds: 60 });
      const nowSeconds = Math.floor(clock.ms / 1000);
      for (const offset of [-61, 61]) {
        const refused = await receiver.handle(signed(secret, { timestampSeconds: nowSeconds + offset }));
        assert.deepEqual([refused.status, code(refused)], [401, 'timestamp_out_of_tolerance'], `offset ${offset} s`);
      }
      assert.equal((await receiver.handle(signed(secret, { timestampSeconds: nowSeconds - 60 }))).status, 200);
      // The same request, replayed later than the tolerance, is refused before the store is asked.
      const request = signed(secret, { timestampSeconds: nowSeconds });
      clock.ms += 61_000;
      assert.equal(code(await receiver.handle(request)), 'timestamp_out_of_tolerance');
      assert.equal(seen.length, 1);
      assert.throws(
        () => createReceiver({ secret, store: memoryStore(), handler: () => undefined, toleranceSeconds: 301 }),
        RangeError,
      );
    },
  );

  test('svix-* headers are read when webhook-* are absent; any secret of a rotation list is accepted', async () => {
    const second = newSecret();
    const { receiver, seen } = subject({ secrets: [secret, second] });
    const { headers, body } = signed(second);
    const svix = {
      'svix-id': headers['webhook-id']!,
      'svix-timestamp': headers['webhook-timestamp']!,
      'svix-signature': headers['webhook-signature']!,
    };
    assert.equal(code(await receiver.handle({ headers: svix, body })), 'processed');
    assert.equal(seen[0]!.id, headers['webhook-id']);
  });

  test('a handler that throws answers 500 and is reported; the retry runs it again', async () => {
    let fail = true;
    const errors: string[] = [];
    const store = memoryStore();
    const receiver = createReceiver({
      secret,
      store,
      onError: (_error, context) => errors.push(context.stage),
      handler: () => {
        if (fail) throw new Error('database down');
      },
    });
    const request = signed(secret);
    const failed = await receiver.handle(request);
    assert.deepEqual([failed.status, code(failed)], [500, 'handler_failed']);
    assert.ok(!failed.body.includes('database down'), 'the answer does not carry the error');
    fail = false;
    assert.equal(code(await receiver.handle(request)), 'processed');
    assert.deepEqual(errors, ['handler']);
  });

  test(
    'a store that fails answers 503 with Retry-After; one that ' + 'holds the id answers 409 with Retry-After',
    async () => {
      const broken: ReceiptStore<undefined> = {
        once: async () => {
          throw new Error('ECONNREFUSED');
        },
      };
      const down = await createReceiver({
        secret,
        store: broken,
        handler: () => undefined,
        storeRetryAfterSeconds: 7,
      }).handle(signed(secret));
      assert.deepEqual([down.status, code(down), down.headers['retry-after']], [503, 'store_unavailable', '7']);
      const running = deferred();
      const release = deferred();
      const { receiver } = subject({
        handler: async () => {
          running.resolve();
          await release.promise;
        },
      });
      const request = signed(secret);
      const first = receiver.handle(request);
      await running.promise;
      const busy = await receiver.handle(request);
      assert.deepEqual([busy.status, code(busy), busy.headers['retry-after']], [409, 'in_progress', '30']);
      release.resolve();
      assert.equal(code(await first), 'processed');
    },
  );

  test(
    'a JSON body that does not parse answers 400 payload_invalid; ' +
      'another content type reaches the handler as bytes',
    async () => {
      const { receiver, seen } = subject();
      const bad = signed(secret, { body: '{"not json' });
      assert.deepEqual(
        [(await receiver.handle(bad)).status, code(await receiver.handle(bad))],
        [400, 'payload_invalid'],
      );
      const text = signed(secret, { body: 'plain text' });
      assert.equal(
        code(await receiver.handle({ headers: { ...text.headers, 'content-type': 'text/plain' }, body: text.body })),
        'processed',
      );
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.payload, undefined);
      assert.equal(seen[0]!.body.toString(), 'plain text');
    },
  );
});

describe('adapters keep the raw body', () => {
  // Key order, spacing and an integer beyond 2^53: a parse and re-serialization would change the bytes.
  const body = '{ "z": 1,\n  "a": 12345678901234567890 }';
  const servers: Server[] = [];
  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const post = (url: string, request: { headers: Record<string, string>; body: Buffer }): Promise<Response> =>
    fetch(url, { method: 'POST', headers: request.headers, body: request.body });
  after(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve));
  });

  test(
    'node:http: the exact bytes reach the handler; GET answers ' + '405; a body over maxBodyBytes answers 413',
    async () => {
      const { receiver, seen } = subject();
      const url = await listen(createServer(nodeHandler(receiver, { maxBodyBytes: 1024 })));
      const response = await post(url, signed(secret, { body }));
      assert.equal(response.status, 200);
      assert.equal(seen[0]!.body.toString(), body);
      assert.equal((await fetch(url)).status, 405);
      const large = await post(url, signed(secret, { body: JSON.stringify({ pad: 'x'.repeat(2000) }) }));
      assert.deepEqual([large.status, ((await large.json()) as { code: string }).code], [413, 'payload_too_large']);
      assert.equal(seen.length, 1);
    },
  );

  test(
    "Express: the route reads the body itself or takes express.raw()'s Buffer; " +
      'after express.json() it answers 500 raw_body_unavailable',
    async () => {
      const { receiver, seen } = subject();
      const app = express();
      app.post('/own', expressReceiver(receiver));
      app.post('/raw', express.raw({ type: '*/*' }), expressReceiver(receiver));
      app.post('/parsed', express.json(), expressReceiver(receiver));
      const url = await listen(createServer(app));
      assert.equal((await post(`${url}/own`, signed(secret, { body }))).status, 200);
      assert.equal((await post(`${url}/raw`, signed(secret, { body }))).status, 200);
      const parsed = await post(`${url}/parsed`, signed(secret, { body }));
      assert.deepEqual(
        [parsed.status, ((await parsed.json()) as { code: string }).code],
        [500, 'raw_body_unavailable'],
      );
      assert.deepEqual(
        seen.map((e) => e.body.toString()),
        [body, body],
      );
    },
  );

  test('Fastify: the plugin parses every content type as raw bytes inside its prefix only', async () => {
    const { receiver, seen } = subject();
    const app = Fastify();
    app.post('/echo', async (request) => request.body);
    await app.register(fastifyReceiver(receiver), { prefix: '/webhooks' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      assert.equal((await post(`${url}/webhooks`, signed(secret, { body }))).status, 200);
      assert.equal(seen[0]!.body.toString(), body);
      const forged = await post(`${url}/webhooks`, signed(newSecret(), { body }));
      assert.equal(forged.status, 401);
      const echo = await fetch(`${url}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      assert.deepEqual(await echo.json(), { a: 1 }, 'routes outside the plugin keep their JSON parser');
    } finally {
      await app.close();
    }
  });
});
