/**
 * The receiver-auth route (docs/reference/api.md, "Receiver authentication"): set, read back masked, replaced,
 * removed; every bad field refused with 422 naming it, changing nothing; a portal token sets its own application's
 * endpoints only. On both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPgApplicationStore } from '../../src/adapters/postgres/application/application-store.ts';
import { createPgReceiverAuthStore } from '../../src/adapters/postgres/endpoint/endpoint-auth-store.ts';
import { createPgEndpointStore } from '../../src/adapters/postgres/endpoint/endpoint-store.ts';
import { createReceiverAuths } from '../../src/app/receiver-auths.ts';
import { ENGINES } from '../support/db.ts';
import { makeTestCertificates, type TestCertificates } from '../support/test-certificates.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

const PATH = '/api/v1/app/auth-a/endpoint/ep-a/auth';
const NONE = { basic: null, oauth2: null, mtls: null, version: null };
const OAUTH2 = {
  tokenUrl: 'https://idp.example/oauth/token',
  clientId: 'tidings',
  clientSecret: 'client-secret-0123456789',
};

const certs: TestCertificates = makeTestCertificates();

/** A refused body and the locs of its 422. */
const REFUSALS: readonly [string, object, string[]][] = [
  ['nothing set', {}, ['body']],
  ['basic and oauth2', { basic: { username: 'u', password: 'p' }, oauth2: OAUTH2 }, ['body.oauth2']],
  ['a colon in the user id', { basic: { username: 'a:b', password: 'p' } }, ['body.basic.username']],
  ['an empty password', { basic: { username: 'u', password: '' } }, ['body.basic.password']],
  ['a control character', { basic: { username: 'u', password: 'p\n' } }, ['body.basic.password']],
  ['an http token URL', { oauth2: { ...OAUTH2, tokenUrl: 'http://idp.example/token' } }, ['body.oauth2.tokenUrl']],
  [
    'a token URL with credentials',
    { oauth2: { ...OAUTH2, tokenUrl: 'https://u:p@idp.example/t' } },
    ['body.oauth2.tokenUrl'],
  ],
  [
    'a token URL on a private address',
    { oauth2: { ...OAUTH2, tokenUrl: 'https://10.1.2.3/t' } },
    ['body.oauth2.tokenUrl'],
  ],
  ['no client id', { oauth2: { ...OAUTH2, clientId: '' } }, ['body.oauth2.clientId']],
  ['a stray field', { basic: { username: 'u', password: 'p', realm: 'x' } }, ['body.basic.realm']],
  [
    'a certificate that is not PEM',
    { mtls: { certificate: 'junk', key: certs.client.key } },
    ['body.mtls.certificate'],
  ],
  ['a key that is not PEM', { mtls: { certificate: certs.client.cert, key: 'junk' } }, ['body.mtls.key']],
  [
    'a key of another certificate',
    { mtls: { certificate: certs.client.cert, key: certs.wrongClient.key } },
    ['body.mtls.key'],
  ],
  ['a certificate without its key', { mtls: { certificate: certs.client.cert } }, ['body.mtls.key']],
  [
    'a CA that is not PEM',
    { mtls: { ca: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' } },
    ['body.mtls.ca'],
  ],
  ['an empty mtls', { mtls: {} }, ['body.mtls']],
  ['a token URL on port 0', { oauth2: { ...OAUTH2, tokenUrl: 'https://idp.example:0/t' } }, ['body.oauth2.tokenUrl']],
  ['a token URL after a space', { oauth2: { ...OAUTH2, tokenUrl: ` ${OAUTH2.tokenUrl}` } }, ['body.oauth2.tokenUrl']],
  ['a token URL before a space', { oauth2: { ...OAUTH2, tokenUrl: `${OAUTH2.tokenUrl} ` } }, ['body.oauth2.tokenUrl']],
  [
    'a CA of 32 KiB and one byte',
    { mtls: { ca: certs.ca.cert + '\n'.repeat(32 * 1024 + 1 - Buffer.byteLength(certs.ca.cert)) } },
    ['body.mtls.ca'],
  ],
];

for (const engine of ENGINES) {
  describe(`receiver auth through the API (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    before(async () => {
      api = await startApi(engine.fresh);
      appId = (await api.svix.application.create({ name: 'auth a', uid: 'auth-a' })).id;
      await api.svix.endpoint.create(appId, { url: 'https://hooks.example/a', uid: 'ep-a' });
      const b = await api.svix.application.create({ name: 'auth b', uid: 'auth-b' });
      await api.svix.endpoint.create(b.id, { url: 'https://hooks.example/b', uid: 'ep-b' });
    });
    after(async () => api?.close());

    const call = async (method: string, path: string, body?: unknown, token?: string) => {
      const res = await api.request(method, path, {
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(token === undefined ? {} : { token }),
      });
      return { status: res.status, json: res.status === 204 ? null : ((await res.json()) as Record<string, unknown>) };
    };

    test('set, read back with every secret masked, replaced, removed', async () => {
      assert.deepEqual(await call('GET', PATH), { status: 200, json: NONE });
      const basic = await call('PUT', PATH, { basic: { username: 'hooks', password: 'a-long-password-0042' } });
      assert.equal(basic.status, 200);
      assert.deepEqual(basic.json!.basic, { username: 'hooks', password: '••••42' });
      const both = await call('PUT', PATH, {
        oauth2: { ...OAUTH2, scope: 'hooks' },
        mtls: { certificate: certs.client.cert, key: certs.client.key, ca: certs.ca.cert },
      });
      assert.equal(both.status, 200, JSON.stringify(both.json));
      assert.equal(both.json!.basic, null, 'PUT replaces the whole');
      assert.deepEqual(both.json!.oauth2, { ...OAUTH2, clientSecret: '••••89', scope: 'hooks', audience: null });
      const mtls = both.json!.mtls as { certificate: { subject: string }; key: string; ca: { subject: string }[] };
      assert.deepEqual(
        [mtls.certificate.subject, mtls.key, mtls.ca.map((c) => c.subject)],
        ['CN=sender', '••••', ['CN=test-ca']],
      );
      assert.notEqual(both.json!.version, basic.json!.version, 'a new version at each write');
      const text = JSON.stringify((await call('GET', PATH)).json);
      for (const secret of [OAUTH2.clientSecret, certs.client.key.split('\n')[1]!])
        assert.equal(text.includes(secret), false, 'no secret answered');
      assert.equal((await call('DELETE', PATH)).status, 204);
      assert.deepEqual(await call('GET', PATH), { status: 200, json: NONE });
    });

    test('an http token URL is accepted to a literal address that TIDINGS_EGRESS_ALLOWLIST opens', async () => {
      const res = await call('PUT', PATH, { oauth2: { ...OAUTH2, tokenUrl: 'http://127.0.0.1:9999/token' } });
      assert.equal(res.status, 200, JSON.stringify(res.json));
    });

    for (const [what, body, locs] of REFUSALS) {
      test(`422 naming the field, nothing changed: ${what}`, async () => {
        await call('PUT', PATH, { basic: { username: 'kept', password: 'kept' } });
        const res = await api.request('PUT', PATH, { body: JSON.stringify(body) });
        const error = await errorOf(res);
        assert.equal(error.status, 422, JSON.stringify(error));
        const got = (error.detail as { loc: string[] }[]).map((d) => d.loc.join('.'));
        assert.deepEqual(got, locs);
        assert.equal(((await call('GET', PATH)).json!.basic as { username: string }).username, 'kept');
      });
    }

    test('the limits named in a refusal are the real ones: 2048 characters, 32768 bytes', async () => {
      const longUrl = `https://idp.example/${'t'.repeat(2100)}`;
      const url = await errorOf(
        await api.request('PUT', PATH, { body: JSON.stringify({ oauth2: { ...OAUTH2, tokenUrl: longUrl } }) }),
      );
      assert.match(JSON.stringify(url.detail), /at most 2048 characters/);
      const ca = await errorOf(
        await api.request('PUT', PATH, { body: JSON.stringify({ mtls: { ca: 'x'.repeat(40_000) } }) }),
      );
      assert.match(JSON.stringify(ca.detail), /at most 32768 bytes/);
      const exact = certs.ca.cert + '\n'.repeat(32 * 1024 - Buffer.byteLength(certs.ca.cert));
      assert.equal((await call('PUT', PATH, { mtls: { ca: exact } })).status, 200, '32 KiB exactly is accepted');
    });

    test("a portal token sets its own application's endpoints only", async () => {
      const { token } = await api.svix.authentication.appPortalAccess(appId, {});
      const mine = await call('PUT', PATH, { basic: { username: 'portal', password: 'pw' } }, token);
      assert.equal(mine.status, 200);
      assert.equal((await call('GET', PATH, undefined, token)).status, 200);
      const other = '/api/v1/app/auth-b/endpoint/ep-b/auth';
      const body = { basic: { username: 'intruder', password: 'pw' } };
      for (const [method, payload] of [
        ['PUT', body],
        ['GET', undefined],
        ['DELETE', undefined],
      ] as const) {
        const res = await call(method, other, payload, token);
        assert.ok([403, 404].includes(res.status), `${method} of another application's endpoint: ${res.status}`);
      }
      assert.deepEqual((await call('GET', other)).json, NONE, "the other application's endpoint unchanged");
    });

    test('PATCH changes one part and keeps the others, their secrets included', async () => {
      await call('PUT', PATH, { basic: { username: 'hooks', password: 'a-long-password-0042' } });
      const added = await call('PATCH', PATH, { mtls: { ca: certs.ca.cert } });
      assert.equal(added.status, 200, JSON.stringify(added.json));
      assert.deepEqual(added.json!.basic, { username: 'hooks', password: '••••42' }, 'basic kept');
      assert.deepEqual((added.json!.mtls as { ca: { subject: string }[] }).ca[0]!.subject, 'CN=test-ca');
      const renamed = await call('PATCH', PATH, { basic: { username: 'renamed' } });
      assert.deepEqual(renamed.json!.basic, { username: 'renamed', password: '••••42' }, 'password kept');
      const cert = await call('PATCH', PATH, { mtls: { certificate: certs.client.cert, key: certs.client.key } });
      const mtls = cert.json!.mtls as { certificate: { subject: string }; ca: unknown[] };
      assert.deepEqual([mtls.certificate.subject, mtls.ca.length], ['CN=sender', 1], 'the CA kept');
      const removed = await call('PATCH', PATH, { basic: null, mtls: { ca: null } });
      assert.equal(removed.json!.basic, null);
      assert.equal((removed.json!.mtls as { ca: unknown }).ca, null);
      assert.equal((removed.json!.mtls as { key: string }).key, '••••');
      assert.deepEqual((await call('PATCH', PATH, { mtls: null })).json, NONE, 'every part removed: none left');
    });

    test('PATCH of a part not configured yet names each required field left out; nothing changed', async () => {
      await call('PUT', PATH, { mtls: { ca: certs.ca.cert } });
      for (const [body, locs] of [
        [{ basic: { username: 'u' } }, ['body.basic.password']],
        [{ oauth2: { tokenUrl: OAUTH2.tokenUrl } }, ['body.oauth2.clientId', 'body.oauth2.clientSecret']],
        [{ mtls: { key: certs.client.key } }, ['body.mtls.certificate']],
        [{ oauth2: OAUTH2, basic: { username: 'u', password: 'p' } }, ['body.oauth2']],
      ] as const) {
        const error = await errorOf(await api.request('PATCH', PATH, { body: JSON.stringify(body) }));
        assert.equal(error.status, 422, JSON.stringify(error));
        assert.deepEqual(
          (error.detail as { loc: string[] }[]).map((d) => d.loc.join('.')),
          locs,
          JSON.stringify(body),
        );
      }
      const now = (await call('GET', PATH)).json!;
      assert.deepEqual([now.basic, now.oauth2], [null, null]);
    });

    test('mtls needs an https endpoint URL, and an endpoint with mtls keeps an https URL', async () => {
      const http = '/api/v1/app/auth-a/endpoint/ep-h/auth';
      await api.svix.endpoint.create(appId, { url: 'http://hooks.example/h', uid: 'ep-h' });
      for (const method of ['PUT', 'PATCH']) {
        const error = await errorOf(
          await api.request(method, http, { body: JSON.stringify({ mtls: { ca: certs.ca.cert } }) }),
        );
        assert.equal(error.status, 422);
        assert.deepEqual((error.detail as { loc: string[] }[])[0]!.loc, ['body', 'mtls'], method);
      }
      assert.equal((await call('PUT', PATH, { mtls: { ca: certs.ca.cert } })).status, 200);
      const ep = '/api/v1/app/auth-a/endpoint/ep-a';
      for (const [method, body] of [
        ['PATCH', { url: 'http://hooks.example/a' }],
        ['PUT', { url: 'http://hooks.example/a', uid: 'ep-a' }],
      ] as const) {
        const error = await errorOf(await api.request(method, ep, { body: JSON.stringify(body) }));
        assert.equal(error.status, 422, `${method} endpoint: ${JSON.stringify(error)}`);
        assert.deepEqual((error.detail as { loc: string[] }[])[0]!.loc, ['body', 'url']);
      }
      assert.equal((await api.svix.endpoint.get(appId, 'ep-a')).url, 'https://hooks.example/a', 'unchanged');
      assert.equal((await call('PATCH', ep, { url: 'https://hooks.example/a2' })).status, 200, 'https stays open');
      await call('DELETE', PATH);
      assert.equal((await call('PATCH', ep, { url: 'http://hooks.example/a' })).status, 200, 'without mtls: open');
      await call('PATCH', ep, { url: 'https://hooks.example/a' });
    });

    test('a PATCH that meets a concurrent write merges into the newer value, not the one it read', async () => {
      await call('PUT', PATH, { mtls: { ca: certs.ca.cert } });
      const db = api.database.db;
      const store = createPgReceiverAuthStore(db, api.cipher);
      const apps = createPgApplicationStore(db);
      const endpoints = createPgEndpointStore(db, api.cipher);
      let raced = false;
      const auths = createReceiverAuths({
        lookups: { findApplication: apps.findApplication, findEndpoint: endpoints.findEndpoint },
        clock: { sqlNow: () => null } as never,
        egressAllowlist: [],
        store: {
          ...store,
          // Between this PATCH's read and its write, another client replaces the configuration once.
          async load(endpointId) {
            const read = await store.load(endpointId);
            if (!raced) {
              raced = true;
              assert.equal((await call('PUT', PATH, { basic: { username: 'racer', password: 'pw' } })).status, 200);
            }
            return read;
          },
        },
      });
      const out = await auths.patch({ kind: 'admin' }, 'auth-a', 'ep-a', { mtls: { ca: certs.ca.cert } });
      assert.equal(out?.summary.basic?.username, 'racer', 'the concurrent write is kept');
      assert.notEqual(out?.summary.mtls, null, 'and the PATCH applied to it');
    });
  });
}
