/**
 * Failed authentications per client address (PostgreSQL server): the credential is checked before anything
 * is counted against its address, so TIDINGS_AUTH_FAILURE_LIMIT can turn a 401 into a 429 but never refuse a
 * valid credential; behind proxies named in TIDINGS_TRUSTED_PROXIES each forwarded client is its own address.
 * Regression: twenty bad tokens from one address locked out every credential the process had not seen yet —
 * behind a TLS proxy, after a restart, the admin token, keys and portal tokens of every client got 429.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freshServerDatabase } from '../support/db.ts';
import { ADMIN_TOKEN, startApi, type ApiHarness } from './api-harness.ts';

const LIMIT = 5;

/** Status and code of a request with `token` from `forwardedFor` (when given). */
async function call(
  api: ApiHarness,
  path: string,
  token: string,
  forwardedFor?: string,
): Promise<{ status: number; code: string | undefined; detail: string | undefined; retryAfter: string | null }> {
  const res = await api.request('GET', path, {
    token,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });
  const body = res.status === 200 ? undefined : ((await res.json()) as { code: string; detail: string });
  if (res.status === 200) await res.body?.cancel();
  return { status: res.status, code: body?.code, detail: body?.detail, retryAfter: res.headers.get('retry-after') };
}

describe('failed authentications from one address', () => {
  let direct: ApiHarness;
  let proxied: ApiHarness;
  before(async () => {
    // The failure window is long enough for every loop below (each runs in well under a second).
    const env = { TIDINGS_AUTH_FAILURE_LIMIT: String(LIMIT), TIDINGS_AUTH_FAILURE_WINDOW: '60s' };
    direct = await startApi(freshServerDatabase, env);
    proxied = await startApi(freshServerDatabase, { ...env, TIDINGS_TRUSTED_PROXIES: '127.0.0.1/32' });
  });
  after(async () => {
    await direct?.close();
    await proxied?.close();
  });

  test(
    'past the limit bad tokens get 429, yet an operator key, an application key and a portal token this process ' +
      'has never seen all pass (regression: they got 429)',
    async () => {
      const app = await direct.svix.application.create({ name: 'shared address' });
      const created = await direct.request('POST', '/api/v1/api-key', {
        body: JSON.stringify({ name: 'operator, never used' }),
      });
      assert.equal(created.status, 201);
      const operatorKey = ((await created.json()) as { token: string }).token;
      const appKey = await direct.appKey(app.id);
      const portal = await direct.svix.authentication.appPortalAccess(app.id, {});
      const statuses: number[] = [];
      for (let i = 0; i < 4 * LIMIT; i++) statuses.push((await call(direct, '/api/v1/app', `tidings_bad_${i}`)).status);
      assert.deepEqual(statuses, [...Array<number>(LIMIT).fill(401), ...Array<number>(3 * LIMIT).fill(429)]);
      assert.equal((await call(direct, '/api/v1/app', operatorKey)).status, 200, 'a new operator key');
      assert.equal((await call(direct, `/api/v1/app/${app.id}`, appKey)).status, 200, 'a new application key');
      assert.equal((await call(direct, `/api/v1/app/${app.id}`, portal.token)).status, 200, 'a new portal token');
      assert.equal((await call(direct, '/api/v1/app', ADMIN_TOKEN)).status, 200, 'the admin token');
      const refused = await call(direct, '/api/v1/app', 'tidings_bad_after');
      assert.equal(refused.status, 429, 'bad tokens are still refused');
      assert.equal(refused.code, 'rate_limited');
      assert.match(
        refused.detail!,
        new RegExp(`TIDINGS_AUTH_FAILURE_LIMIT=${LIMIT} per TIDINGS_AUTH_FAILURE_WINDOW=60000 ms`),
      );
      assert.ok(Number(refused.retryAfter) >= 1);
    },
  );

  test(
    'behind a trusted proxy each forwarded client has its own count (the nearest untrusted X-Forwarded-For ' +
      'address); from an untrusted peer X-Forwarded-For is ignored',
    async () => {
      const first = [];
      for (let i = 0; i <= LIMIT; i++)
        first.push((await call(proxied, '/api/v1/app', `tidings_bad_${i}`, '203.0.113.7')).status);
      assert.deepEqual(first, [...Array<number>(LIMIT).fill(401), 429]);
      assert.equal(
        (await call(proxied, '/api/v1/app', 'tidings_bad_x', '203.0.113.8')).status,
        401,
        'another client behind the proxy has its own count',
      );
      // A client cannot escape its count by writing addresses of its own to the left of the proxy's entry.
      assert.equal((await call(proxied, '/api/v1/app', 'tidings_bad_y', '198.51.100.1, 203.0.113.7')).status, 429);

      // The direct API's own address is past its limit first; then addresses written in X-Forwarded-For by the
      // client must not give it fresh counts.
      for (let i = 0; i < LIMIT; i++) await call(direct, '/api/v1/app', `tidings_bad_d${i}`);
      const spoofed = [];
      for (let i = 0; i < 3; i++)
        spoofed.push((await call(direct, '/api/v1/app', `tidings_bad_s${i}`, `203.0.113.${100 + i}`)).status);
      assert.deepEqual(
        spoofed,
        [429, 429, 429],
        'without TIDINGS_TRUSTED_PROXIES, X-Forwarded-For does not split the count',
      );
    },
  );
});
