/**
 * `GET /api/v1/stats/transport` (the console overview's transport card): TIDINGS_TRANSPORT and its health as the
 * answering process knows it, for operators only. With postgres over an API harness; with rabbitmq over a whole
 * process (API and dispatcher, so it holds the broker connection) against the machine's RabbitMQ, under a prefix
 * of its own that is deleted at the end.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { deleteTopology, RABBITMQ_URL, testPrefix } from '../support/rabbitmq.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

interface TransportOut {
  transport: string;
  state: string | null;
  depth: { waiting: number; deadLetters: number | null } | null;
  counts: Record<string, number> | null;
}

describe('transport health, postgres', () => {
  let api: ApiHarness;
  before(async () => {
    api = await startApi(freshServerDatabase);
  });
  after(async () => api?.close());

  test(
    'an operator reads the postgres transport, connected while the ' + 'database answers, with no broker figures',
    async () => {
      const res = await api.request('GET', '/api/v1/stats/transport');
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { transport: 'postgres', state: 'connected', depth: null, counts: null });
    },
  );

  test('an application token (a portal token included) is refused with 403, no token with 401', async () => {
    const app = await api.svix.application.create({ name: 'transport health' });
    const key = await api.appKey(app.id);
    assert.deepEqual(await errorOf(await api.request('GET', '/api/v1/stats/transport', { token: key })), {
      status: 403,
      code: 'insufficient access',
      detail: 'This credential may not use this route',
    });
    const portal = await api.svix.authentication.appPortalAccess(app.id, {});
    const refused = await api.request('GET', '/api/v1/stats/transport', { token: portal.token });
    assert.equal(refused.status, 403);
    assert.equal((await api.request('GET', '/api/v1/stats/transport', { token: null })).status, 401);
  });
});

describe('transport health, rabbitmq', () => {
  const prefix = testPrefix();
  const shards = 2;
  let database: TestDatabase;
  let tidings: Running;
  const token = `transport_${randomBytes(16).toString('hex')}`;
  const get = async (): Promise<TransportOut> => {
    const res = await fetch(`${tidings.apiUrl}/api/v1/stats/transport`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200);
    return (await res.json()) as TransportOut;
  };
  before(async () => {
    database = await freshServerDatabase();
    tidings = await startTidings({
      roles: { api: true, dispatcher: true },
      env: {
        DATABASE_URL: database.url!,
        TIDINGS_API_TOKEN: token,
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_LOG_LEVEL: 'silent',
        TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        TIDINGS_TRANSPORT: 'rabbitmq',
        TIDINGS_RABBITMQ_URL: RABBITMQ_URL,
        TIDINGS_BROKER_PREFIX: prefix,
        TIDINGS_BROKER_SHARDS: String(shards),
      },
    });
  });
  after(async () => {
    await tidings?.stop();
    await deleteTopology(prefix, shards);
    await database?.drop();
  });

  test(
    "an operator reads the rabbitmq transport, its connection's " + "state, the queue's depth and the counters",
    async () => {
      // The connection is made in the background after the start: read until it says connected.
      let out = await get();
      for (let i = 0; i < 200 && out.state !== 'connected'; i++) {
        assert.ok(out.state === 'connecting' || out.state === 'connected', JSON.stringify(out));
        await new Promise((r) => setTimeout(r, 25));
        out = await get();
      }
      assert.equal(out.transport, 'rabbitmq');
      assert.equal(out.state, 'connected');
      assert.equal(out.depth?.waiting, 0);
      assert.deepEqual(out.counts, {
        published: 0,
        swept: 0,
        publishFailed: 0,
        redelivered: 0,
        deadLettered: 0,
        topologyRestored: 0,
      });
    },
  );

  test('the rabbitmq transport reads 403 for an application token', async () => {
    const admin = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${tidings.apiUrl}/api/v1/app`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'transport health' }),
    });
    const app = (await created.json()) as { id: string };
    const access = await fetch(`${tidings.apiUrl}/api/v1/auth/app-portal-access/${app.id}`, {
      method: 'POST',
      headers: admin,
      body: '{}',
    });
    const portal = (await access.json()) as { token: string };
    const res = await fetch(`${tidings.apiUrl}/api/v1/stats/transport`, {
      headers: { authorization: `Bearer ${portal.token}` },
    });
    assert.equal(res.status, 403);
  });
});
