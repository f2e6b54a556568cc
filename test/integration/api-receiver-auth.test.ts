/**
 * The receiver-auth route (docs/reference/api.md, "Receiver authentication"): set, read back masked, replaced,
 * removed; every bad field refused with 422 naming it, changing nothing; a portal token sets its own application's
 * endpoints only. On both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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
  });
}
