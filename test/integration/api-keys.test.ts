/**
 * The credentials API (docs/guides/security.md) on both engines: operator-only creation, listing (without secrets) and
 * revocation of API keys, application-scoped and read-only keys, and the Svix authentication calls
 * (appPortalAccess, logout, expireAll) through the official client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Svix } from 'svix';
import { hashToken } from '../../src/app/credentials.ts';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

interface KeyBody {
  id: string;
  name: string;
  role: string;
  appId: string | null;
  readOnly: boolean;
  tokenPrefix: string;
  expiresAt: string | null;
  revokedAt: string | null;
  token?: string;
}

for (const engine of ENGINES) {
  describe(`credentials API (${engine.name})`, () => {
    let api: ApiHarness;
    before(async () => {
      api = await startApi(engine.fresh);
    });
    after(async () => api?.close());

    const createKey = async (body: object, token?: string): Promise<Response> =>
      api.request('POST', '/api/v1/api-key', { body: JSON.stringify(body), ...(token === undefined ? {} : { token }) });

    test(
      'an operator key is shown once, stored only as its SHA-256 hash, listed without its secret, and dead once ' +
        'revoked',
      async () => {
        const res = await createKey({ name: 'ci deploys' });
        assert.equal(res.status, 201);
        assert.equal(res.headers.get('cache-control'), 'no-store');
        const created = (await res.json()) as KeyBody;
        assert.match(created.token!, /^tidings_[A-Za-z0-9_-]{43}$/);
        assert.equal(created.role, 'admin');
        assert.equal(created.tokenPrefix, created.token!.slice(0, 12));

        const row = (
          await api.database.db.query<{ token_hash: Buffer }>('SELECT token_hash FROM api_keys WHERE id = $1', [
            created.id,
          ])
        ).rows[0]!;
        assert.deepEqual(row.token_hash, hashToken(created.token!));
        const raw = JSON.stringify((await api.database.db.query('SELECT * FROM api_keys')).rows);
        assert.ok(!raw.includes(created.token!), 'the token itself is stored nowhere');

        const list = await (await api.request('GET', '/api/v1/api-key?limit=250')).text();
        assert.ok(list.includes(created.id));
        assert.ok(!list.includes(created.token!), 'a list never carries a token');
        assert.ok(!/"token"|tokenHash|token_hash/.test(list));

        assert.equal(
          (await api.request('GET', '/api/v1/app', { token: created.token! })).status,
          200,
          'the new key is an operator key',
        );
        assert.equal((await api.request('DELETE', `/api/v1/api-key/${created.id}`)).status, 204);
        assert.equal(
          (await api.request('GET', '/api/v1/app', { token: created.token! })).status,
          401,
          'revoked at once',
        );
        const revoked = (
          (await (await api.request('GET', '/api/v1/api-key?limit=250')).json()) as { data: KeyBody[] }
        ).data.find((k) => k.id === created.id)!;
        assert.notEqual(revoked.revokedAt, null);
        assert.equal(
          (await api.request('DELETE', `/api/v1/api-key/${created.id}`)).status,
          204,
          'revoking twice is harmless',
        );
        assert.deepEqual(await errorOf(await api.request('DELETE', '/api/v1/api-key/key_01HZZZZZZZZZZZZZZZZZZZZZZZ')), {
          status: 404,
          code: 'not_found',
          detail: 'API key not found',
        });
        assert.equal((await createKey({ name: '' })).status, 422);
        assert.equal((await createKey({ name: 'x', appId: 'no-such-app' })).status, 404);
      },
    );

    test(
      'a scoped key acts on its application only; a read-only one only reads; neither may manage keys or list ' +
        'applications',
      async () => {
        const a = await api.svix.application.create({ name: 'A', uid: `a-${engine.name}` });
        const b = await api.svix.application.create({ name: 'B' });
        const scoped = (await (await createKey({ name: 'a only', appId: a.uid })).json()) as KeyBody;
        assert.equal(scoped.role, 'app');
        assert.equal(scoped.appId, a.id);
        const token = scoped.token!;
        assert.equal((await api.request('GET', `/api/v1/app/${a.id}`, { token })).status, 200);
        assert.equal((await api.request('GET', `/api/v1/app/${b.id}`, { token })).status, 404);
        for (const [method, path, body] of [
          ['GET', '/api/v1/app'],
          ['POST', '/api/v1/app', '{"name":"x"}'],
          ['POST', '/api/v1/app', 'not json'],
          ['GET', '/api/v1/api-key'],
          ['POST', '/api/v1/api-key', '{}'],
          ['DELETE', `/api/v1/api-key/${scoped.id}`],
          ['POST', `/api/v1/auth/app-portal-access/${a.id}`, '{}'],
        ] as const) {
          const res = await api.request(method, path, { token, ...(body === undefined ? {} : { body }) });
          assert.deepEqual(
            await errorOf(res),
            { status: 403, code: 'insufficient access', detail: 'This credential may not use this route' },
            `${method} ${path}`,
          );
        }
        const reader = ((await (await createKey({ name: 'a reader', appId: a.id, readOnly: true })).json()) as KeyBody)
          .token!;
        assert.equal((await api.request('GET', `/api/v1/app/${a.id}/msg`, { token: reader })).status, 200);
        const write = await api.request('POST', `/api/v1/app/${a.id}/msg`, {
          token: reader,
          body: '{"eventType":"x","payload":{}}',
        });
        assert.deepEqual(await errorOf(write), {
          status: 403,
          code: 'insufficient access',
          detail: 'This credential may only read',
        });
        assert.equal(
          (await createKey({ name: 'bad', readOnly: true })).status,
          422,
          'an operator key cannot be read-only',
        );
      },
    );

    test(
      'the svix client gets an app-portal token that works on its application; logout and expireAll end such ' +
        'tokens',
      async () => {
        const uid = `portal-${engine.name}`;
        const access = await api.svix.authentication.appPortalAccess(uid, {
          application: { name: 'Portal customer', uid },
        });
        assert.ok(access.url.endsWith(`#key=${access.token}`));
        const app = await api.svix.application.get(uid);
        const portal = new Svix(access.token, { serverUrl: api.url });
        const msg = await api.svix.message.create(uid, { eventType: 'portal.test', payload: { ok: true } });
        assert.equal((await portal.message.get(app.id, msg.id)).id, msg.id);
        await assert.rejects(
          portal.message.create(uid, { eventType: 'portal.test', payload: { forged: true } }),
          (e: { code?: number }) => e.code === 403,
          'a portal token does not publish as the operator',
        );
        await assert.rejects(portal.application.list(), (e: { code?: number }) => e.code === 403);
        const row = (
          await api.database.db.query<{ expires_at: Date; role: string }>(
            'SELECT expires_at, role FROM api_keys WHERE token_hash = $1',
            [hashToken(access.token)],
          )
        ).rows[0]!;
        assert.equal(row.role, 'app');
        const ttlMs = row.expires_at.getTime() - Date.now();
        assert.ok(ttlMs > 6.9 * 86_400_000 && ttlMs <= 7 * 86_400_000, 'default lifetime: 7 days');

        await portal.authentication.logout();
        assert.equal(
          (await api.request('GET', `/api/v1/app/${app.id}`, { token: access.token })).status,
          401,
          'logged out',
        );
        await assert.rejects(
          api.svix.authentication.logout(),
          (e: { code?: number }) => e.code === 403,
          'an operator token cannot log itself out',
        );

        const second = await api.svix.authentication.appPortalAccess(app.id, { expiry: 3600 });
        const third = await api.svix.authentication.appPortalAccess(app.id, {});
        assert.notEqual(second.token, third.token, 'each call issues a new token');
        assert.equal((await api.request('GET', `/api/v1/app/${app.id}`, { token: second.token })).status, 200);
        await api.svix.authentication.expireAll(app.id, {});
        for (const t of [second.token, third.token])
          assert.equal((await api.request('GET', `/api/v1/app/${app.id}`, { token: t })).status, 401, 'expired');

        // An expired token is refused (expiry moved into the past instead of waiting).
        const fourth = await api.svix.authentication.appPortalAccess(app.id, { expiry: 60 });
        await api.database.db.query(
          `UPDATE api_keys SET expires_at = clock_timestamp() - interval '1 second' WHERE token_hash = $1`,
          [hashToken(fourth.token)],
        );
        assert.equal((await api.request('GET', `/api/v1/app/${app.id}`, { token: fourth.token })).status, 401);
        await assert.rejects(
          api.svix.authentication.appPortalAccess('no-such-app', {}),
          (e: { code?: number }) => e.code === 404,
        );
      },
    );
  });
}
