/**
 * API hygiene (docs/guides/security.md) on the PostgreSQL server: the per-credential rate limit answers 429 with
 * Retry-After and leaves other credentials and public routes alone; bodies over the limit get 413 and
 * change nothing; CORS is off unless origins are configured, and then only those origins get CORS headers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freshServerDatabase } from '../support/db.ts';
import { errorOf, startApi, TEST_MAX_BODY_BYTES, type ApiHarness } from './api-harness.ts';

describe('rate limit, body limit and CORS', () => {
  let limited: ApiHarness;
  let cors: ApiHarness;
  before(async () => {
    limited = await startApi(freshServerDatabase, { TIDINGS_API_RATE_LIMIT: '1', TIDINGS_API_RATE_BURST: '3' });
    cors = await startApi(freshServerDatabase, { TIDINGS_CORS_ORIGINS: 'https://portal.example.com' });
  });
  after(async () => {
    await limited?.close();
    await cors?.close();
  });

  test(
    'a credential past its burst gets 429 rate_limited with Retry-After; another credential and public routes ' +
      'are not affected',
    async () => {
      const app = await limited.svix.application.create({ name: 'limited' });
      const scoped = await limited.appKey(app.id);
      const statuses: number[] = [];
      let refused: Response | undefined;
      for (let i = 0; i < 4; i++) {
        const res = await limited.request('GET', `/api/v1/app/${app.id}`, { token: scoped });
        statuses.push(res.status);
        if (res.status === 429) refused = res;
        else await res.body?.cancel();
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      const retryAfter = Number(refused!.headers.get('retry-after'));
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3,
        `Retry-After: ${refused!.headers.get('retry-after')}`,
      );
      assert.deepEqual(await errorOf(refused!), {
        status: 429,
        code: 'rate_limited',
        detail:
          'Too many requests for this credential (TIDINGS_API_RATE_LIMIT=1/s, TIDINGS_API_RATE_BURST=3); retry in ' +
          `${retryAfter} s`,
      });
      assert.equal(
        (await limited.request('GET', `/api/v1/app/${app.id}`, { token: scoped })).status,
        429,
        'still limited within the window',
      );
      assert.equal(
        (await limited.request('GET', `/api/v1/app/${app.id}`)).status,
        200,
        'the operator token has its own bucket',
      );
      for (let i = 0; i < 5; i++)
        assert.equal(
          (await limited.request('GET', '/livez', { token: null })).status,
          200,
          'health has its own limit, per address',
        );
    },
  );

  test(
    'routes served without a credential are limited per client address (TIDINGS_PUBLIC_RATE_LIMIT): 429 ' +
      'rate_limited naming the setting, while credentials go on',
    async () => {
      const publicLimited = await startApi(freshServerDatabase, {
        TIDINGS_PUBLIC_RATE_LIMIT: '1',
        TIDINGS_PUBLIC_RATE_BURST: '3',
      });
      try {
        const statuses: number[] = [];
        let refused: Response | undefined;
        for (const path of ['/livez', '/api/v1/openapi.json', '/metrics', '/readyz']) {
          const res = await publicLimited.request('GET', path, { token: null });
          statuses.push(res.status);
          if (res.status === 429) refused = res;
          else await res.body?.cancel();
        }
        assert.deepEqual(statuses, [200, 200, 200, 429]);
        const retryAfter = Number(refused!.headers.get('retry-after'));
        assert.ok(retryAfter >= 1 && retryAfter <= 3, `Retry-After: ${retryAfter}`);
        assert.deepEqual(await errorOf(refused!), {
          status: 429,
          code: 'rate_limited',
          detail:
            'Too many requests from this client address (TIDINGS_PUBLIC_RATE_LIMIT=1/s, ' +
            `TIDINGS_PUBLIC_RATE_BURST=3); retry in ${retryAfter} s`,
        });
        assert.equal(
          (await publicLimited.request('GET', '/api/v1/app')).status,
          200,
          'a credential has its own bucket',
        );
      } finally {
        await publicLimited.close();
      }
    },
  );

  test(
    'a body over TIDINGS_MAX_BODY_BYTES gets 413 payload_too_large naming the setting and its value, and stores ' +
      'nothing',
    async () => {
      const app = await cors.svix.application.create({ name: 'big' });
      const body = JSON.stringify({ eventType: 'big.one', payload: { pad: 'x'.repeat(TEST_MAX_BODY_BYTES) } });
      const res = await cors.request('POST', `/api/v1/app/${app.id}/msg`, { body });
      assert.deepEqual(await errorOf(res), {
        status: 413,
        code: 'payload_too_large',
        detail: `The request body is larger than TIDINGS_MAX_BODY_BYTES (${TEST_MAX_BODY_BYTES} bytes)`,
      });
      assert.equal(res.status, 413);
      assert.equal((await cors.database.db.query('SELECT 1 FROM messages WHERE app_id = $1', [app.id])).rows.length, 0);
    },
  );

  test(
    'CORS is off by default; with TIDINGS_CORS_ORIGINS only the named origin gets CORS headers, and its ' +
      'preflight needs no token',
    async () => {
      const plainPreflight = await fetch(`${limited.url}/api/v1/app`, {
        method: 'OPTIONS',
        headers: { origin: 'https://portal.example.com', 'access-control-request-method': 'GET' },
      });
      assert.equal(plainPreflight.headers.get('access-control-allow-origin'), null);
      const plainGet = await limited.request('GET', '/livez', {
        token: null,
        headers: { origin: 'https://portal.example.com' },
      });
      assert.equal(
        plainGet.headers.get('access-control-allow-origin'),
        null,
        'no CORS headers when no origin is configured',
      );

      const preflight = await fetch(`${cors.url}/api/v1/app`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://portal.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://portal.example.com');
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/);
      const allowed = await cors.request('GET', '/api/v1/app', { headers: { origin: 'https://portal.example.com' } });
      assert.equal(allowed.status, 200);
      assert.equal(allowed.headers.get('access-control-allow-origin'), 'https://portal.example.com');
      const other = await cors.request('GET', '/api/v1/app', { headers: { origin: 'https://evil.example.net' } });
      assert.equal(other.headers.get('access-control-allow-origin'), null, 'another origin gets no CORS headers');
      assert.equal(
        (await cors.request('GET', '/api/v1/app', { token: null, headers: { origin: 'https://portal.example.com' } }))
          .status,
        401,
        'a real request still needs a token',
      );
    },
  );
});
