/**
 * What a credential scoped to one application may do (docs/adr/0011-credential-capabilities.md), through the
 * official client where it has the call. The table test enumerates every route registered in the Fastify app
 * (an onRoute hook, as the cross-application matrix does) and calls each with tokens of every capability set,
 * naming objects of the token's own application that do not exist: the capability check runs before anything
 * is read, so a route the token may use answers anything but a `forbidden` 403 (404, 422, 2xx), and one it
 * may not use answers a `forbidden` 403 (its wire code is Svix's `"insufficient access"`). Runs on both engines.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Svix } from 'svix';
import { cryptoRandom, systemClock } from '../../src/adapters/system/system-clock.ts';
import { hashToken } from '../../src/app/credentials.ts';
import { loadConfig } from '../../src/config/config.ts';
import { SVIX_CAPABILITIES, type Capability } from '../../src/domain/capabilities.ts';
import { wireCode } from '../../src/domain/errors.ts';
import { buildApp } from '../../src/http/app.ts';
import { ROUTE_REQUIREMENTS } from '../../src/http/route-capabilities.ts';
import { createHttpDeps } from '../../src/main/http-deps.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';

const ADMIN = 'tidings_capabilities_admin_token_0123456789';

interface Route {
  readonly method: string;
  readonly url: string;
  readonly public: boolean;
}
interface Me {
  kind: string;
  appId?: string;
  capabilities: string[];
  readOnly: boolean;
  sessionId?: string;
  featureFlags: string[];
  expiresAt: string | null;
}

const code403 = (e: unknown): boolean => (e as { code?: number }).code === 403;
const code422 = (e: unknown): boolean => (e as { code?: number }).code === 422;

for (const engine of ENGINES) {
  describe(`credential capabilities (${engine.name})`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let url: string;
    let svix: Svix;
    const routes: Route[] = [];

    const call = async (method: string, path: string, token: string, body?: object) => {
      const res = await app.inject({
        method: method as 'GET',
        url: path,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return {
        status: res.statusCode,
        json: (res.body === '' ? null : JSON.parse(res.body)) as { code?: string; detail?: unknown } & Record<
          string,
          unknown
        >,
      };
    };
    const me = async (token: string): Promise<Me> =>
      (await call('GET', '/api/v1/auth/me', token)).json as unknown as Me;
    const apiKey = async (body: object): Promise<string> => {
      const res = await call('POST', '/api/v1/api-key', ADMIN, body);
      assert.equal(res.status, 201, JSON.stringify(res.json));
      return res.json.token as string;
    };

    before(async () => {
      database = await engine.fresh();
      const config = loadConfig({
        TIDINGS_API_TOKEN: ADMIN,
        TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
        TIDINGS_LOG_LEVEL: 'silent',
      });
      app = buildApp(
        createHttpDeps({
          config,
          db: database.db,
          cipher: testCipher(),
          clock: systemClock,
          random: cryptoRandom,
          logger: createLogger({ level: 'silent' }),
          metrics: createMetrics({ defaultMetrics: false }),
          ready: async () => true,
          wake: () => undefined,
        }),
      );
      app.addHook('onRoute', (r) => {
        for (const method of [r.method].flat()) routes.push({ method, url: r.url, public: r.config?.public === true });
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      svix = new Svix(ADMIN, { serverUrl: url });
    });
    after(async () => {
      await app?.close();
      await database?.drop();
    });

    test('every registered route is in the capability table, and the table names no route that is gone', () => {
      const registered = new Set(
        routes
          .filter((r) => !r.public && r.method !== 'HEAD' && r.method !== 'OPTIONS')
          .map((r) => `${r.method} ${r.url}`),
      );
      const missing = [...registered].filter((r) => ROUTE_REQUIREMENTS[r] === undefined);
      const stale = Object.keys(ROUTE_REQUIREMENTS).filter((r) => !registered.has(r));
      assert.deepEqual(
        missing,
        [],
        `routes without a requirement (add them to src/http/route-capabilities.ts): ${missing.join(', ')}`,
      );
      assert.deepEqual(stale, [], `requirements of routes that do not exist: ${stale.join(', ')}`);
    });

    test(
      'every route × every capability set: a token uses exactly the routes its capabilities allow; view-only ' +
        'writes nothing and reads no secret',
      async () => {
        const target = await svix.application.create({ name: 'capability matrix', uid: `matrix-${engine.name}` });
        const sets: { label: string; token: string; held: readonly Capability[] }[] = [];
        for (const c of SVIX_CAPABILITIES) {
          const caps = c === 'ViewBase' ? ['ViewBase'] : ['ViewBase', c];
          const { token } = await svix.authentication.appPortalAccess(target.id, { capabilities: caps as never });
          sets.push({ label: `portal [${caps.join(', ')}]`, token, held: caps as Capability[] });
        }
        sets.push({
          label: 'portal readOnly',
          token: (await svix.authentication.appPortalAccess(target.id, { readOnly: true })).token,
          held: ['ViewBase'],
        });
        sets.push({
          label: 'portal (no capabilities named)',
          token: (await svix.authentication.appPortalAccess(target.id, {})).token,
          held: [...SVIX_CAPABILITIES],
        });
        sets.push({
          label: 'application key',
          token: await apiKey({ name: 'm', appId: target.id }),
          held: [...SVIX_CAPABILITIES, 'ManageMessages'],
        });
        sets.push({
          label: 'read-only application key',
          token: await apiKey({ name: 'm', appId: target.id, readOnly: true }),
          held: ['ViewBase'],
        });

        const fill = (u: string): string =>
          u.replace(/:(\w+)/g, (_m, name: string) =>
            name === 'appId' ? target.id : name === 'eventTypeName' ? 'no.such.type' : `no-such-${name}`,
          );
        const problems: string[] = [];
        let calls = 0;
        for (const set of sets) {
          const held = new Set(set.held);
          assert.deepEqual([...(await me(set.token)).capabilities].sort(), [...held].sort(), `${set.label}: /auth/me`);
          for (const r of routes) {
            if (r.public || r.method === 'OPTIONS' || r.url === '/api/v1/auth/logout') continue;
            const requirement = ROUTE_REQUIREMENTS[`${r.method === 'HEAD' ? 'GET' : r.method} ${r.url}`];
            const allowed =
              requirement !== undefined &&
              requirement !== 'operator' &&
              (requirement.length === 0 || requirement.some((c) => held.has(c)));
            const reading = r.method === 'GET' || r.method === 'HEAD';
            // Independent of the table: a token holding ViewBase alone writes nothing; a secret is read only by a
            // token that may write the endpoint or its secret, or was granted it by name.
            if (set.held.length === 1 && !reading && allowed && r.url !== '/api/v1/auth/me')
              problems.push(`${set.label}: the table lets a view-only token use ${r.method} ${r.url}`);
            if (
              r.url.endsWith('/secret') &&
              allowed !==
                ['ViewEndpointSecret', 'ManageEndpointSecret', 'ManageEndpoint'].some((c) => held.has(c as Capability))
            )
              problems.push(`${set.label}: secret readable = ${allowed}`);
            const res = await call(r.method, fill(r.url), set.token, reading || r.method === 'DELETE' ? undefined : {});
            calls++;
            const refused = res.status === 403 && (r.method === 'HEAD' || res.json?.code === wireCode('forbidden'));
            if (refused === allowed)
              problems.push(
                `${set.label}: ${r.method} ${r.url} answered ${res.status} ${JSON.stringify(res.json)}; expected ` +
                  `${allowed ? 'to be let through' : '403 forbidden'}`,
              );
          }
        }
        assert.deepEqual(problems, [], problems.join('\n'));
        assert.ok(calls >= sets.length * 60, `only ${calls} calls`);
      },
    );

    test(
      'a view-only portal token cannot read or rotate the signing secret, publish, or change or delete ' +
        'endpoints; it still reads them',
      async () => {
        const target = await svix.application.create({ name: 'view only' });
        const ep = await svix.endpoint.create(target.id, { url: 'http://127.0.0.1:9/view-only' });
        const { token } = await svix.authentication.appPortalAccess(target.id, { capabilities: ['ViewBase' as never] });
        const viewer = new Svix(token, { serverUrl: url });
        assert.equal((await viewer.endpoint.get(target.id, ep.id)).id, ep.id);
        await assert.rejects(viewer.endpoint.getSecret(target.id, ep.id), code403);
        await assert.rejects(viewer.endpoint.rotateSecret(target.id, ep.id, {}), code403);
        await assert.rejects(viewer.message.create(target.id, { eventType: 'x.y', payload: {} }), code403);
        await assert.rejects(viewer.endpoint.patch(target.id, ep.id, { description: 'changed' }), code403);
        await assert.rejects(viewer.endpoint.delete(target.id, ep.id), code403);
        assert.equal((await svix.endpoint.get(target.id, ep.id)).description, '', 'the endpoint is unchanged');
      },
    );

    test(
      "read-only credentials cannot read an endpoint's signing secret; ViewEndpointSecret reads but cannot " +
        'rotate; ManageEndpointSecret and write keys read and rotate',
      async () => {
        const target = await svix.application.create({ name: 'secrets' });
        const ep = await svix.endpoint.create(target.id, { url: 'http://127.0.0.1:9/secrets' });
        const portal = async (body: object) =>
          new Svix((await svix.authentication.appPortalAccess(target.id, body)).token, { serverUrl: url });
        const readOnlyKey = new Svix(await apiKey({ name: 'ro', appId: target.id, readOnly: true }), {
          serverUrl: url,
        });
        const writeKey = new Svix(await apiKey({ name: 'rw', appId: target.id }), { serverUrl: url });
        await assert.rejects(readOnlyKey.endpoint.getSecret(target.id, ep.id), code403, 'read-only application key');
        await assert.rejects(
          (await portal({ readOnly: true })).endpoint.getSecret(target.id, ep.id),
          code403,
          'readOnly portal token',
        );
        const viewSecret = await portal({ capabilities: ['ViewBase', 'ViewEndpointSecret'] });
        assert.match((await viewSecret.endpoint.getSecret(target.id, ep.id)).key, /^whsec_/);
        await assert.rejects(viewSecret.endpoint.rotateSecret(target.id, ep.id, {}), code403);
        const manageSecret = await portal({ capabilities: ['ViewBase', 'ManageEndpointSecret'] });
        await manageSecret.endpoint.rotateSecret(target.id, ep.id, {});
        await assert.rejects(
          manageSecret.endpoint.patch(target.id, ep.id, { description: 'x' }),
          code403,
          'ManageEndpointSecret does not manage the endpoint',
        );
        assert.match((await writeKey.endpoint.getSecret(target.id, ep.id)).key, /^whsec_/);
      },
    );

    test(
      'appPortalAccess refuses an unknown capability, capabilities without ViewBase, and readOnly with a writing ' +
        'capability (422 naming the field)',
      async () => {
        const target = await svix.application.create({ name: 'refusals' });
        for (const [body, loc] of [
          [{ capabilities: ['ViewBase', 'DeleteEverything'] }, ['body', 'capabilities', 1]],
          [{ capabilities: ['ViewEndpointSecret'] }, ['body', 'capabilities']],
          [{ readOnly: true, capabilities: ['ViewBase', 'ManageEndpoint'] }, ['body', 'readOnly']],
          [{ featureFlags: ['not a flag!'] }, ['body', 'featureFlags', 0]],
        ] as const) {
          await assert.rejects(
            svix.authentication.appPortalAccess(target.id, body as never),
            code422,
            JSON.stringify(body),
          );
          const res = await call('POST', `/api/v1/auth/app-portal-access/${target.id}`, ADMIN, body);
          assert.equal(res.json.code, 'validation');
          assert.deepEqual((res.json.detail as { loc: unknown[] }[])[0]!.loc, loc, JSON.stringify(res.json));
        }
        const count = await database.db.query<{ n: string }>('SELECT count(*) AS n FROM api_keys WHERE app_id = $1', [
          target.id,
        ]);
        assert.equal(Number(count.rows[0]!.n), 0, 'no token was issued');
      },
    );

    test(
      'capabilities, sessionId and featureFlags are stored with the portal token and returned by GET ' +
        '/api/v1/auth/me',
      async () => {
        const target = await svix.application.create({ name: 'stored' });
        const access = await svix.authentication.appPortalAccess(target.id, {
          capabilities: ['ManageEndpoint', 'ViewBase'] as never,
          sessionId: 'session-7',
          featureFlags: ['beta.ui', 'new-table'],
        });
        const row = (
          await database.db.query<{
            capabilities: string[];
            session_id: string;
            feature_flags: string[];
            portal: boolean;
          }>('SELECT capabilities, session_id, feature_flags, portal FROM api_keys WHERE token_hash = $1', [
            hashToken(access.token),
          ])
        ).rows[0]!;
        assert.deepEqual(row, {
          capabilities: ['ViewBase', 'ManageEndpoint'],
          session_id: 'session-7',
          feature_flags: ['beta.ui', 'new-table'],
          portal: true,
        });
        const answer = await me(access.token);
        assert.deepEqual(
          { ...answer, expiresAt: typeof answer.expiresAt },
          {
            kind: 'app_portal',
            appId: target.id,
            capabilities: ['ViewBase', 'ManageEndpoint'],
            readOnly: false,
            sessionId: 'session-7',
            featureFlags: ['beta.ui', 'new-table'],
            expiresAt: 'string',
          },
        );
      },
    );

    test(
      'GET /api/v1/auth/me tells the admin token, an operator key, an ' + 'application key and a read-only key apart',
      async () => {
        const target = await svix.application.create({ name: 'me' });
        assert.deepEqual(await me(ADMIN), {
          kind: 'admin',
          capabilities: [...SVIX_CAPABILITIES, 'ManageMessages'],
          readOnly: false,
          featureFlags: [],
          expiresAt: null,
        });
        assert.equal((await me(await apiKey({ name: 'op' }))).kind, 'operator_key');
        const appKey = await me(await apiKey({ name: 'ak', appId: target.id }));
        assert.deepEqual(
          [appKey.kind, appKey.appId, appKey.readOnly, appKey.capabilities.includes('ManageMessages')],
          ['app_key', target.id, false, true],
        );
        const reader = await me(await apiKey({ name: 'ro', appId: target.id, readOnly: true }));
        assert.deepEqual([reader.kind, reader.capabilities, reader.readOnly], ['app_key', ['ViewBase'], true]);
        assert.equal((await call('GET', '/api/v1/auth/me', 'tidings_unknown')).status, 401);
      },
    );

    test('expireAll with sessionIds expires only the tokens of those sessions', async () => {
      const target = await svix.application.create({ name: 'sessions' });
      const issue = async (sessionId?: string) =>
        (await svix.authentication.appPortalAccess(target.id, sessionId === undefined ? {} : { sessionId })).token;
      const [s1, s1b, s2, none] = [await issue('s1'), await issue('s1'), await issue('s2'), await issue()];
      const appKey = await apiKey({ name: 'backend', appId: target.id });
      const works = async (t: string) => (await call('GET', `/api/v1/app/${target.id}`, t)).status === 200;
      await svix.authentication.expireAll(target.id, { sessionIds: ['s1'] });
      assert.deepEqual(await Promise.all([s1, s1b, s2, none, appKey].map(works)), [false, false, true, true, true]);
      await svix.authentication.expireAll(target.id, { sessionIds: [] });
      assert.deepEqual(
        await Promise.all([s2, none, appKey].map(works)),
        [false, false, false],
        'an empty list expires every token (Svix)',
      );
    });

    test(
      "a customer credential cannot rename its application's uid, change or drop throttleRate, change metadata " +
        "or name, or delete it (403 naming the field); the operator's get-or-create publish still lands in it",
      async () => {
        const target = await svix.application.create({
          name: 'Customer',
          uid: `customer-${engine.name}`,
          throttleRate: 7,
          metadata: { plan: 'gold' },
        });
        const portal = new Svix((await svix.authentication.appPortalAccess(target.id, {})).token, { serverUrl: url });
        const appKey = new Svix(await apiKey({ name: 'backend', appId: target.id }), { serverUrl: url });
        const fieldForbidden = (field: string) => (e: unknown) => {
          const body = e as { code?: number; body?: { code?: string; detail?: string } };
          return (
            body.code === 403 &&
            body.body?.code === 'field_forbidden' &&
            (body.body.detail ?? '').includes(`application's ${field}`)
          );
        };
        for (const client of [portal, appKey]) {
          await assert.rejects(client.application.patch(target.id, { uid: 'renamed' }), fieldForbidden('uid'));
          await assert.rejects(
            client.application.patch(target.id, { throttleRate: null }),
            fieldForbidden('throttleRate'),
          );
          await assert.rejects(
            client.application.upsert(target.id, { name: 'Customer', uid: target.uid!, metadata: { plan: 'gold' } }),
            fieldForbidden('throttleRate'),
            'a PUT without throttleRate would drop it',
          );
          await assert.rejects(
            client.application.patch(target.id, { metadata: { plan: 'platinum' } }),
            fieldForbidden('metadata'),
          );
          await assert.rejects(client.application.patch(target.id, { name: 'Renamed' }), fieldForbidden('name'));
          await assert.rejects(client.application.delete(target.id), code403);
          const echoed = await client.application.upsert(target.id, {
            name: 'Customer',
            uid: target.uid!,
            throttleRate: 7,
            metadata: { plan: 'gold' },
          });
          assert.equal(echoed.id, target.id, 'a PUT that changes nothing is answered');
        }
        const after = await svix.application.get(target.id);
        assert.deepEqual(
          [after.uid, after.name, after.throttleRate, after.metadata],
          [target.uid, 'Customer', 7, { plan: 'gold' }],
        );
        const published = await svix.message.create(target.uid!, {
          eventType: 'x.y',
          payload: {},
          application: { name: 'Customer', uid: target.uid! },
        });
        assert.equal(
          (await svix.message.get(target.id, published.id)).id,
          published.id,
          'the get-or-create publish reached the same application',
        );
        await svix.application.patch(target.id, { throttleRate: 9 });
        assert.equal((await svix.application.get(target.id)).throttleRate, 9, 'the operator still changes it');
      },
    );

    test(
      "the app-portal link is built from configuration or the connection's own address, never from a forged Host " +
        'header',
      async () => {
        const target = await svix.application.create({ name: 'links' });
        const forged = await new Promise<string>((resolve, reject) => {
          const req = httpRequest(
            `${url}/api/v1/auth/app-portal-access/${target.id}`,
            {
              method: 'POST',
              headers: {
                host: 'attacker.example',
                authorization: `Bearer ${ADMIN}`,
                'content-type': 'application/json',
              },
            },
            (res) => {
              let text = '';
              res
                .setEncoding('utf8')
                .on('data', (c: string) => (text += c))
                .on('end', () => resolve(text));
            },
          );
          req.on('error', reject);
          req.end('{}');
        });
        const link = (JSON.parse(forged) as { url: string }).url;
        assert.ok(link.startsWith(`${url}/app-portal#key=`), link);
        const configured = buildApp(
          createHttpDeps({
            config: loadConfig({
              TIDINGS_API_TOKEN: ADMIN,
              TIDINGS_LOG_LEVEL: 'silent',
              TIDINGS_PUBLIC_URL: 'https://hooks.example.com/',
            }),
            db: database.db,
            cipher: testCipher(),
            clock: systemClock,
            random: cryptoRandom,
            logger: createLogger({ level: 'silent' }),
            metrics: createMetrics({ defaultMetrics: false }),
            ready: async () => true,
            wake: () => undefined,
          }),
        );
        try {
          const res = await configured.inject({
            method: 'POST',
            url: `/api/v1/auth/app-portal-access/${target.id}`,
            headers: { host: 'attacker.example', authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
            payload: '{}',
          });
          assert.match(
            (JSON.parse(res.body) as { url: string }).url,
            /^https:\/\/hooks\.example\.com\/app-portal#key=tidings_/,
          );
        } finally {
          await configured.close();
        }
      },
    );
  });
}
