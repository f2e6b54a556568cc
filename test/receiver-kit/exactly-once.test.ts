/**
 * @tidings/receiver against a real Tidings (API + dispatcher in this process, PostgreSQL server) delivering to
 * receivers on 127.0.0.1 whose first answer to each message is lost AFTER the handler committed (the socket is
 * destroyed instead of answering), so Tidings sends the message again with the same webhook-id. The handler's
 * side effect happens exactly once per message with the PostgreSQL store (in the claim's transaction), with the
 * Redis store, and with the memory store behind Express and Fastify; a handler that throws once is rolled back
 * and run again. Requests captured from Tidings are then forged and replayed late: refused.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { Svix } from 'svix';
import { createReceiver, type Receiver, type WebhookEvent } from '../../packages/receiver-kit/src/index.ts';
import { expressReceiver } from '../../packages/receiver-kit/src/adapters/express.ts';
import { fastifyReceiver } from '../../packages/receiver-kit/src/adapters/fastify.ts';
import { nodeHandler } from '../../packages/receiver-kit/src/adapters/node-http.ts';
import { memoryStore } from '../../packages/receiver-kit/src/stores/memory.ts';
import { createReceiptsTable, postgresStore } from '../../packages/receiver-kit/src/stores/postgres.ts';
import { redisStore } from '../../packages/receiver-kit/src/stores/redis.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { LogTap } from '../support/log-tap.ts';
import { newSecret, signed, testRedis, type TestRedis } from './support.ts';

const MESSAGES = 8;
const TOLERANCE_SECONDS = 60;
const ENDPOINTS = ['pg', 'pg-throws', 'redis', 'express', 'fastify'] as const;
type EndpointName = (typeof ENDPOINTS)[number];

let database: TestDatabase;
let pool: pg.Pool;
let redis: TestRedis;
let tidings: Running;
let logs: LogTap;
let fastify: FastifyInstance;
const servers: Server[] = [];
const secrets = Object.fromEntries(ENDPOINTS.map((name) => [name, newSecret()])) as Record<EndpointName, string>;
const urls = {} as Record<EndpointName, string>;
/** Handler runs per endpoint and webhook-id; requests that reached each endpoint per webhook-id. */
const runs = new Map<string, number>();
const requests = new Map<string, number>();
const captured = new Map<EndpointName, WebhookEvent>();
/** Added to the receivers' clock: moves them past the tolerance without waiting. */
let skewMs = 0;

/** Counts the request and, for the first request of each message on each path, loses the answer. */
function loseFirstAnswer(request: IncomingMessage, response: ServerResponse): void {
  const key = `${request.url} ${String(request.headers['webhook-id'])}`;
  const seen = (requests.get(key) ?? 0) + 1;
  requests.set(key, seen);
  if (seen > 1) return;
  // Whatever the receiver answers is never sent: the socket is destroyed once it tries, after its handler committed.
  response.writeHead = (() => response) as typeof response.writeHead;
  response.end = (() => {
    request.socket.destroy();
    return response;
  }) as typeof response.end;
}

function receiverFor<Tx>(
  name: EndpointName,
  store: Parameters<typeof createReceiver<Tx>>[0]['store'],
  effect: (event: WebhookEvent, tx: Tx) => Promise<void>,
): Receiver {
  return createReceiver({
    secret: secrets[name],
    store,
    toleranceSeconds: TOLERANCE_SECONDS,
    nowMs: () => Date.now() + skewMs,
    handler: async (event, tx) => {
      const key = `${name} ${event.id}`;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      if (!captured.has(name)) captured.set(name, event);
      await effect(event, tx);
    },
  });
}

async function listen(listener: RequestListener): Promise<string> {
  const server = createServer((request, response) => {
    loseFirstAnswer(request, response);
    listener(request, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

before(async () => {
  database = await freshServerDatabase();
  pool = new pg.Pool({ connectionString: database.url!, max: 8 });
  // One receipts table per endpoint: each endpoint gets every message under the same webhook-id.
  await createReceiptsTable(pool, 'kit_receipts');
  await createReceiptsTable(pool, 'kit_receipts_throws');
  await pool.query('CREATE TABLE kit_orders (endpoint text NOT NULL, webhook_id text NOT NULL, amount int NOT NULL)');
  redis = await testRedis();
  const order =
    (endpoint: string) =>
    async (event: WebhookEvent, client: pg.PoolClient): Promise<void> => {
      await client.query('INSERT INTO kit_orders (endpoint, webhook_id, amount) VALUES ($1, $2, $3)', [
        endpoint,
        event.id,
        (event.payload as { amount: number }).amount,
      ]);
    };
  const pgReceiver = receiverFor('pg', postgresStore<pg.PoolClient>({ pool, table: 'kit_receipts' }), order('pg'));
  const throwsStore = postgresStore<pg.PoolClient>({ pool, table: 'kit_receipts_throws' });
  const throwsReceiver = receiverFor('pg-throws', throwsStore, async (event, client: pg.PoolClient) => {
    await order('pg-throws')(event, client);
    // The first run of each message throws after its write: the write must roll back with the claim.
    if (runs.get(`pg-throws ${event.id}`) === 1) throw new Error('fails once, after writing');
  });
  const redisReceiver = receiverFor(
    'redis',
    redisStore({ redis: redis.redis, keyPrefix: `${redis.prefix}receipt:` }),
    async (event) => {
      await redis.redis.rpush(`${redis.prefix}effects`, event.id);
    },
  );
  const node = {
    pg: nodeHandler(pgReceiver),
    'pg-throws': nodeHandler(throwsReceiver),
    redis: nodeHandler(redisReceiver),
  };
  const nodeUrl = await listen(
    (request, response) => void node[request.url!.slice(1) as keyof typeof node](request, response),
  );
  for (const name of ['pg', 'pg-throws', 'redis'] as const) urls[name] = `${nodeUrl}/${name}`;

  const app = express();
  app.post('/express', expressReceiver(receiverFor('express', memoryStore(), async () => undefined)));
  urls.express = `${await listen(app)}/express`;

  fastify = Fastify({
    serverFactory: (handler) =>
      createServer((request, response) => {
        loseFirstAnswer(request, response);
        handler(request, response);
      }),
  });
  await fastify.register(fastifyReceiver(receiverFor('fastify', memoryStore(), async () => undefined)), {
    prefix: '/fastify',
  });
  await fastify.listen({ host: '127.0.0.1', port: 0 });
  urls.fastify = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}/fastify`;

  logs = new LogTap();
  tidings = await startTidings({
    roles: { api: true, dispatcher: true },
    logDestination: logs,
    env: {
      DATABASE_URL: database.url!,
      TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
      TIDINGS_API_TOKEN: 'receiver_kit_admin_token',
      HOST: '127.0.0.1',
      PORT: '0',
      TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
      TIDINGS_POLL_INTERVAL: '50ms',
      TIDINGS_RETRY_SCHEDULE: '50ms,100ms,200ms,400ms',
      TIDINGS_LOG_LEVEL: 'info',
    },
  });
});

after(async () => {
  await tidings?.stop();
  await fastify?.close();
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  await redis?.cleanup();
  await pool?.end();
  await database?.drop();
});

test(
  'every message is handled exactly once per endpoint although ' + 'each first answer was lost after the commit',
  async () => {
    const svix = new Svix('receiver_kit_admin_token', { serverUrl: tidings.apiUrl! });
    const app = await svix.application.create({ name: 'receiver-kit' });
    for (const name of ENDPOINTS)
      await svix.endpoint.create(app.id, { url: urls[name], secret: secrets[name], uid: name });
    const ids: string[] = [];
    for (let n = 0; n < MESSAGES; n++)
      ids.push((await svix.message.create(app.id, { eventType: 'order.paid', payload: { amount: 100 + n } })).id);
    const idSet = new Set(ids);
    await logs.waitForCount(
      (l) => l.event === 'delivery.attempted' && l.next === 'succeeded' && idSet.has(String(l.messageId)),
      MESSAGES * ENDPOINTS.length,
      60_000,
      'deliveries succeeded',
    );

    const attempts = await database.db.query(
      'SELECT attempt_count, count(*)::int AS n FROM deliveries WHERE app_id = $1 GROUP BY 1',
      [app.id],
    );
    assert.deepEqual(
      attempts.rows,
      [{ attempt_count: 2, n: MESSAGES * ENDPOINTS.length }],
      'every delivery took a second attempt',
    );
    for (const name of ENDPOINTS) {
      for (const id of ids) {
        assert.equal(requests.get(`/${name} ${id}`), 2, `${name} ${id}: the lost answer made Tidings send it again`);
        assert.equal(runs.get(`${name} ${id}`), name === 'pg-throws' ? 2 : 1, `${name} ${id}: handler runs`);
      }
    }
    const orders = await pool.query(
      'SELECT endpoint, webhook_id, count(*)::int AS n, min(amount) AS amount FROM kit_orders GROUP BY 1, 2',
    );
    for (const endpoint of ['pg', 'pg-throws']) {
      const rows = orders.rows.filter((r) => r.endpoint === endpoint);
      assert.deepEqual(new Set(rows.map((r) => r.webhook_id)), idSet, `${endpoint}: one order per message`);
      assert.ok(
        rows.every((r) => r.n === 1),
        `${endpoint}: no message wrote twice`,
      );
    }
    const effects = await redis.redis.lrange(`${redis.prefix}effects`, 0, -1);
    assert.equal(effects.length, MESSAGES, 'redis: one side effect per message');
    assert.deepEqual(new Set(effects), idSet);
  },
);

test(
  'requests captured from Tidings: a replay in time is a ' + 'duplicate, a forged one and a late replay are refused',
  async () => {
    const event = captured.get('pg')!;
    const headers = Object.fromEntries(
      Object.entries(event.headers).filter(([name]) => /^(webhook|svix)-|^content-type$/.test(name)),
    ) as Record<string, string>;
    const send = (body: string | Buffer, extra: Record<string, string> = {}): Promise<Response> =>
      fetch(urls.pg, { method: 'POST', headers: { ...headers, ...extra }, body });
    const ordersOf = async (): Promise<number> =>
      (await pool.query('SELECT count(*)::int AS n FROM kit_orders WHERE endpoint = $1', ['pg'])).rows[0].n;
    const before = await ordersOf();
    const runsBefore = runs.get(`pg ${event.id}`);

    const replay = await send(event.body);
    assert.deepEqual([replay.status, ((await replay.json()) as { code: string }).code], [200, 'duplicate']);
    const tampered = await send(Buffer.from(event.body.toString().replace(/\d+/, '999999')));
    assert.deepEqual([tampered.status, ((await tampered.json()) as { code: string }).code], [401, 'signature_invalid']);
    const otherKey = signed(newSecret(), { id: event.id, body: event.body.toString() });
    const forged = await fetch(urls.pg, { method: 'POST', headers: otherKey.headers, body: otherKey.body });
    assert.deepEqual([forged.status, ((await forged.json()) as { code: string }).code], [401, 'signature_invalid']);

    skewMs = (TOLERANCE_SECONDS + 1) * 1000;
    try {
      const late = await send(event.body);
      assert.deepEqual(
        [late.status, ((await late.json()) as { code: string }).code],
        [401, 'timestamp_out_of_tolerance'],
      );
    } finally {
      skewMs = 0;
    }
    assert.equal(await ordersOf(), before, 'no refused or duplicate request wrote anything');
    assert.equal(runs.get(`pg ${event.id}`), runsBefore, 'nor ran the handler');
  },
);
