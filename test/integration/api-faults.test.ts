import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { openDb, type Db } from '../../src/adapters/postgres/db.ts';
import type { Queries } from '../../src/app/queries.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createHttpDeps } from '../../src/main/http-deps.ts';
import { buildApp } from '../../src/http/app.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { Clock, Random } from '../../src/ports/clock.ts';
import { testCipher } from '../support/cipher.ts';
import { ADMIN_TOKEN, errorOf } from './api-harness.ts';

// These faults need no database engine: the first points the API at a port where nothing listens, the
// second makes a use case throw. They run once, not per engine.

const clock: Clock = { nowMs: () => Date.now(), sqlNow: () => null };
const random: Random = { next: () => 0.5 };

describe('API faults', () => {
  let db: Db;
  let app: FastifyInstance;
  let url: string;
  const logLines: Record<string, unknown>[] = [];

  before(async () => {
    // Port 1 on loopback: connections are refused, as when the database is down.
    db = await openDb({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/none', dataDir: '', poolSize: 1 });
    const config = loadConfig({ TIDINGS_API_TOKEN: ADMIN_TOKEN, TIDINGS_LOG_LEVEL: 'error' });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    const deps = createHttpDeps({
      config,
      db,
      cipher: testCipher(),
      clock,
      random,
      logger: createLogger({ level: 'error', destination: sink }),
      metrics: createMetrics({ defaultMetrics: false }),
      ready: async () => {
        await db.query('SELECT 1');
        return true;
      },
      wake: () => undefined,
    });
    const faulty: Queries = {
      ...deps.queries,
      getMessage: async () => {
        throw new Error('boom: a secret detail');
      },
    };
    app = buildApp({
      ...deps,
      queries: faulty,
      publisher: {
        check: async () => null,
        publish: async () => {
          throw new Error('unreachable');
        },
        publishKeyed: async () => {
          throw new Error('unreachable');
        },
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await app?.close();
    await db?.close();
  });

  const get = (path: string, token: string | null = ADMIN_TOKEN) =>
    fetch(url + path, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });

  test('an unreachable database answers 503 service_unavailable on reads, writes and readiness', async () => {
    const list = await get('/api/v1/app');
    assert.deepEqual(await errorOf(list), {
      status: 503,
      code: 'service_unavailable',
      detail: 'The database cannot be reached; nothing was changed. Retry later.',
    });
    assert.equal(list.headers.get('retry-after'), '1');
    const create = await fetch(`${url}/api/v1/app`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{"name":"x"}',
    });
    assert.equal(create.status, 503);
    const ready = await get('/readyz', null);
    assert.equal(ready.status, 503);
    assert.deepEqual(await ready.json(), {
      code: 'service_unavailable',
      detail: 'The database cannot be reached',
      status: 'not_ready',
    });
    // A key that is not the admin token needs the database to be checked: 503, not 401.
    assert.equal((await get('/api/v1/app', 'tidings_some_other_token')).status, 503);
    // Liveness does not depend on the database.
    assert.equal((await get('/livez', null)).status, 200);
  });

  test('an unexpected fault is an opaque 500 naming the request id, logged as error', async () => {
    const res = await fetch(`${url}/api/v1/app/app_x/msg/msg_x`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-request-id': 'fault-1' },
    });
    const body = await errorOf(res);
    assert.deepEqual(body, { status: 500, code: 'internal_error', detail: 'Internal error (request id fault-1)' });
    assert.equal(JSON.stringify(body).includes('boom'), false);
    const line = logLines.find((l) => l.reqId === 'fault-1' && l.level === 50);
    assert.ok(line, 'the fault is logged at error level with the request id');
  });
});
