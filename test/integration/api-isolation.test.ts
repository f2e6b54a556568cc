/**
 * The cross-application matrix (docs/guides/security.md). Every route registered in the Fastify app — enumerated from
 * the app itself with an onRoute hook, so a route added later is covered without editing this file — is called
 * with a key scoped to application A, naming application B's objects (by id and by uid/eventId, and B's
 * objects under A's own application), and the same call naming objects that do not exist:
 * - a route that names an application answers exactly as for a missing object (same status, same body:
 *   no existence oracle), and that answer is 404 or 403 whenever the application named is B;
 * - a route an application key may never use answers 403 whatever it names, and so does every write that
 *   names no application (operator routes, event types shared by all applications);
 * - a read that names no application (a list of shared event types, A's own tasks) may succeed;
 * - no answer carries B's data (its ids, uids, names, payload, secret, response bodies), unless the request
 *   itself carried that text;
 * - afterwards B is unchanged, and B's own key still reaches every object (the ids named were real).
 * Runs on both engines.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { generateToken, hashToken } from '../../src/app/credentials.ts';
import { loadConfig } from '../../src/config/config.ts';
import { cryptoRandom, systemClock } from '../../src/adapters/system/system-clock.ts';
import { buildApp } from '../../src/http/app.ts';
import { createHttpDeps } from '../../src/main/http-deps.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';

const ADMIN = 'tidings_matrix_admin_token_0123456789';

/** A request body that passes validation, per route (`null` = no body). A new write route must be added here. */
const BODIES: Readonly<Record<string, object | null>> = {
  'POST /api/v1/app': { name: 'matrix' },
  'PUT /api/v1/app/:appId': { name: 'renamed by the matrix' },
  'PATCH /api/v1/app/:appId': { name: 'patched by the matrix' },
  'DELETE /api/v1/app/:appId': null,
  'POST /api/v1/app/:appId/endpoint': { url: 'http://127.0.0.1:9/matrix' },
  'PUT /api/v1/app/:appId/endpoint/:endpointId': { url: 'http://127.0.0.1:9/matrix-put' },
  'PATCH /api/v1/app/:appId/endpoint/:endpointId': { description: 'patched by the matrix' },
  'DELETE /api/v1/app/:appId/endpoint/:endpointId': null,
  'POST /api/v1/app/:appId/msg': { eventType: 'matrix.test', payload: { matrix: true } },
  'POST /api/v1/app/:appId/msg/:msgId/endpoint/:endpointId/resend': null,
  'PATCH /api/v1/app/:appId/endpoint/:endpointId/limits': {},
  'POST /api/v1/app/:appId/endpoint/:endpointId/pause': null,
  'POST /api/v1/app/:appId/endpoint/:endpointId/resume': null,
  'POST /api/v1/app/:appId/endpoint/:endpointId/breaker/probe': null,
  'POST /api/v1/app/:appId/endpoint/:endpointId/breaker/close': null,
  'PUT /api/v1/app/:appId/endpoint/:endpointId/retry-policy': { maxAttempts: 3 },
  'PATCH /api/v1/app/:appId/endpoint/:endpointId/retry-policy': { maxAttempts: 2 },
  'PUT /api/v1/app/:appId/endpoint/:endpointId/auth': { basic: { username: 'hooks', password: 'pw' } },
  'PATCH /api/v1/app/:appId/endpoint/:endpointId/auth': { basic: { username: 'hooks', password: 'pw' } },
  'PUT /api/v1/app/:appId/endpoint/:endpointId/filter': { filter: { payload: { amount: { $gt: 1 } } } },
  'POST /api/v1/app/:appId/filter/test': { filter: { eventType: 'a' }, message: { eventType: 'a' } },
  'PUT /api/v1/event-type/:eventTypeName/retry-policy': { maxAttempts: 3 },
  'PATCH /api/v1/event-type/:eventTypeName/retry-policy': { maxAttempts: 2 },
  'POST /api/v1/api-key': { name: 'matrix' },
  'DELETE /api/v1/api-key/:keyId': null,
  'POST /api/v1/auth/app-portal-access/:appId': {},
  'POST /api/v1/auth/app/:appId/expire-all': {},
  'POST /api/v1/app/:appId/msg/expunge-all-contents': { tag: 'matrix' },
  'POST /api/v1/event-type': { name: 'matrix.created', description: 'matrix' },
  'PUT /api/v1/event-type/:eventTypeName': { description: 'matrix' },
  'PATCH /api/v1/event-type/:eventTypeName': { description: 'matrix' },
  'DELETE /api/v1/event-type/:eventTypeName': null,
  'POST /api/v1/app/:appId/endpoint/:endpointId/secret/rotate': {},
  'POST /api/v1/app/:appId/endpoint/:endpointId/send-example': { eventType: 'matrix.test' },
  'POST /api/v1/app/:appId/endpoint/:endpointId/recover': { since: '2020-01-01T00:00:00Z' },
  'POST /api/v1/app/:appId/endpoint/:endpointId/replay-missing': { since: '2020-01-01T00:00:00Z' },
  'POST /api/v1/app/:appId/endpoint/:endpointId/bulk-replay': { since: '2020-01-01T00:00:00Z' },
  'POST /api/v1/app/:appId/dead-letter/replay': { since: '2020-01-01T00:00:00Z' },
  'PUT /api/v1/app/:appId/endpoint/:endpointId/headers': { headers: { 'x-matrix': '1' } },
  'PATCH /api/v1/app/:appId/endpoint/:endpointId/headers': { headers: { 'x-matrix': '2' } },
};

/** Routes that act on the caller's own credential: exercised separately with a throwaway key. */
const SELF_ROUTES = new Set(['POST /api/v1/auth/logout']);

interface Route {
  readonly method: string;
  readonly url: string;
  readonly public: boolean;
}
interface World {
  readonly a: { id: string; uid: string };
  readonly b: Record<string, string>;
  readonly markers: readonly string[];
  readonly tokenA: string;
  readonly tokenB: string;
}

const rnd = (): string => randomBytes(5).toString('hex');
const fakeUlid = (): string =>
  `01J${randomBytes(16)
    .toString('hex')
    .toUpperCase()
    .replace(/[ILOU]/g, '0')
    .slice(0, 23)}`;

for (const engine of ENGINES) {
  describe(`cross-application matrix (${engine.name})`, () => {
    let database: TestDatabase;
    let app: FastifyInstance;
    const routes: Route[] = [];
    let world: World;

    const call = async (method: string, url: string, token: string, body: object | null | undefined) => {
      const res = await app.inject({
        method: method as 'GET',
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === null || body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === null || body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return { status: res.statusCode, body: res.body };
    };

    before(async () => {
      database = await engine.fresh();
      const config = loadConfig({
        TIDINGS_API_TOKEN: ADMIN,
        TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
        TIDINGS_LOG_LEVEL: 'silent',
      });
      const deps = createHttpDeps({
        config,
        db: database.db,
        cipher: testCipher(),
        clock: systemClock,
        random: cryptoRandom,
        logger: createLogger({ level: 'silent' }),
        metrics: createMetrics({ defaultMetrics: false }),
        ready: async () => true,
        wake: () => undefined,
      });
      app = buildApp(deps);
      app.addHook('onRoute', (r) => {
        for (const method of [r.method].flat()) routes.push({ method, url: r.url, public: r.config?.public === true });
      });
      await app.ready();
      world = await seed();
    });
    after(async () => {
      await app?.close();
      await database?.drop();
    });

    /**
     * Applications A and B; B gets an endpoint, a message with a delivery, an attempt, a timeline, a key and a task.
     */
    async function seed(): Promise<World> {
      const json = async (method: string, url: string, body: object | null) => {
        const res = await call(method, url, ADMIN, body);
        assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${res.body}`);
        return JSON.parse(res.body) as Record<string, string>;
      };
      const m = rnd();
      const a = await json('POST', '/api/v1/app', { name: `A-${m}`, uid: `a-uid-${m}` });
      const b = await json('POST', '/api/v1/app', {
        name: `B-NAME-${m}`,
        uid: `b-uid-${m}`,
        metadata: { owner: `B-META-${m}` },
      });
      const secret = `whsec_${randomBytes(24).toString('base64')}`;
      const ep = await json('POST', `/api/v1/app/${b.id}/endpoint`, {
        url: `http://127.0.0.1:9/B-URL-${m}`,
        uid: `b-ep-${m}`,
        description: `B-DESC-${m}`,
        secret,
      });
      const msg = await json('POST', `/api/v1/app/${b.id}/msg`, {
        eventType: `b.type.${m}`,
        eventId: `b-evt-${m}`,
        tags: [`b-tag-${m}`],
        payload: { note: `B-PAYLOAD-${m}` },
      });
      const delivery = (
        await database.db.query<{ id: string }>('SELECT id FROM deliveries WHERE message_id = $1', [msg.id])
      ).rows[0]!;
      const attemptId = `atmpt_${fakeUlid()}`;
      await database.db.query(
        `INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger, succeeded,
          response_status_code, response_body, url, duration_ms, dispatcher_id, fencing_token)
         VALUES ($1, $2, $3, $4, $5, 1, 'scheduled', false, 500, $6, $7, 12, 'matrix-dispatcher', 1)`,
        [attemptId, delivery.id, b.id, msg.id, ep.id, `B-RESPONSE-${m}`, `http://127.0.0.1:9/B-URL-${m}`],
      );
      const taskId = `qtask_${fakeUlid()}`;
      await database.db.query(
        `INSERT INTO background_tasks (id, app_id, kind, status, params) VALUES ($1, $2, 'endpoint.recover', ` +
          `'finished', $3)`,
        [taskId, b.id, JSON.stringify({ note: `B-TASK-${m}` })],
      );
      const key = async (appId: string): Promise<{ id: string; token: string }> => {
        const token = generateToken();
        const id = `key_${fakeUlid()}`;
        await database.db.query(
          `INSERT INTO api_keys (id, name, role, app_id, token_hash, token_prefix) VALUES ($1, 'matrix', ` +
            `'app', $2, $3, $4)`,
          [id, appId, hashToken(token), token.slice(0, 12)],
        );
        return { id, token };
      };
      const keyA = await key(a.id!);
      const keyB = await key(b.id!);
      const bObjects = {
        appId: b.id!,
        appUid: b.uid!,
        endpointId: ep.id!,
        endpointUid: ep.uid!,
        msgId: msg.id!,
        eventId: msg.eventId!,
        attemptId,
        keyId: keyB.id,
        taskId,
        eventTypeName: `b.type.${m}`,
      };
      const markers = [
        ...Object.values(bObjects),
        `B-NAME-${m}`,
        `B-META-${m}`,
        `B-URL-${m}`,
        `B-DESC-${m}`,
        `B-PAYLOAD-${m}`,
        `B-RESPONSE-${m}`,
        `B-TASK-${m}`,
        `b-tag-${m}`,
        secret,
        secret.slice(6),
        keyB.token,
        keyB.token.slice(0, 12),
      ];
      return { a: { id: a.id!, uid: a.uid! }, b: bObjects, markers, tokenA: keyA.token, tokenB: keyB.token };
    }

    /** The value for one path parameter: B's object by id or by uid, or a missing one of each form. */
    function param(name: string, form: 'bId' | 'bUid' | 'missingId' | 'missingUid'): string {
      const b = world.b;
      const table: Record<string, [string, string, string, string]> = {
        appId: [b.appId!, b.appUid!, `app_${fakeUlid()}`, `no-such-app-${rnd()}`],
        endpointId: [b.endpointId!, b.endpointUid!, `ep_${fakeUlid()}`, `no-such-ep-${rnd()}`],
        msgId: [b.msgId!, b.eventId!, `msg_${fakeUlid()}`, `no-such-evt-${rnd()}`],
        attemptId: [b.attemptId!, b.attemptId!, `atmpt_${fakeUlid()}`, `atmpt_${fakeUlid()}`],
        keyId: [b.keyId!, b.keyId!, `key_${fakeUlid()}`, `key_${fakeUlid()}`],
        taskId: [b.taskId!, b.taskId!, `qtask_${fakeUlid()}`, `qtask_${fakeUlid()}`],
        eventTypeName: [b.eventTypeName!, b.eventTypeName!, `no.such.type.${rnd()}`, `no.such.type.${rnd()}`],
      };
      const values = table[name];
      if (values === undefined)
        throw new Error(
          `path parameter :${name} is new: teach the matrix which of B's objects it names ` +
            '(test/integration/api-isolation.test.ts, param())',
        );
      return values[['bId', 'bUid', 'missingId', 'missingUid'].indexOf(form)]!;
    }

    const fill = (url: string, pick: (name: string) => string): string =>
      url.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(pick(name)));

    /** B's data found in `body` that the request did not carry itself. */
    const leaks = (body: string, request: string): string[] =>
      world.markers.filter((mark) => body.includes(mark) && !request.includes(mark));

    test(
      "every route: a key scoped to A naming B's objects gets exactly the missing-object answer (or 403), and no " +
        "answer carries B's data",
      async () => {
        const checked: string[] = [];
        const problems: string[] = [];
        // Reads first; PUT — which may create, in A, an object with the uid it names — last, deepest path first.
        const order = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT'];
        const sorted = [...routes].sort(
          (x, y) => order.indexOf(x.method) - order.indexOf(y.method) || y.url.length - x.url.length,
        );
        for (const route of sorted) {
          const name = `${route.method} ${route.url}`;
          if (route.public || SELF_ROUTES.has(name) || route.method === 'OPTIONS') continue;
          const withBody = !['GET', 'HEAD', 'DELETE'].includes(route.method);
          const body = BODIES[name];
          if (withBody && body === undefined) {
            problems.push(`${name}: no request body known: add a valid one to BODIES`);
            continue;
          }
          const params = [...route.url.matchAll(/:(\w+)/g)].map((x) => x[1]!);
          const namesApp = params.includes('appId');
          const variants: {
            label: string;
            probe: (n: string) => string;
            control: (n: string) => string;
            mustRefuse: boolean;
          }[] = [
            {
              label: 'B by id',
              probe: (n) => param(n, 'bId'),
              control: (n) => param(n, 'missingId'),
              mustRefuse: true,
            },
            {
              label: 'B by uid',
              probe: (n) => param(n, 'bUid'),
              control: (n) => param(n, 'missingUid'),
              mustRefuse: true,
            },
          ];
          if (namesApp && params.length > 1) {
            variants.push(
              {
                label: "A's app, B's objects by id",
                probe: (n) => (n === 'appId' ? world.a.id : param(n, 'bId')),
                control: (n) => (n === 'appId' ? world.a.id : param(n, 'missingId')),
                mustRefuse: false,
              },
              {
                label: "A's app, B's objects by uid",
                probe: (n) => (n === 'appId' ? world.a.uid : param(n, 'bUid')),
                control: (n) => (n === 'appId' ? world.a.uid : param(n, 'missingUid')),
                mustRefuse: false,
              },
            );
          }
          if (params.length === 0) variants.splice(1);
          for (const v of variants) {
            let probeUrl: string;
            let controlUrl: string;
            try {
              probeUrl = fill(route.url, v.probe);
              controlUrl = fill(route.url, v.control);
            } catch (error) {
              problems.push(`${name}: ${(error as Error).message}`);
              break;
            }
            const sent = withBody ? body : null;
            const probe = await call(route.method, probeUrl, world.tokenA, sent);
            const control = await call(route.method, controlUrl, world.tokenA, sent);
            const where = `${name} [${v.label}] ${probeUrl}`;
            const requestText = `${probeUrl} ${JSON.stringify(sent)}`;
            const leaked = leaks(probe.body, requestText);
            if (leaked.length > 0)
              problems.push(
                `${where}: the answer carries B's data ${JSON.stringify(leaked)}: ${probe.body.slice(0, 300)}`,
              );
            if (probe.status !== control.status)
              problems.push(
                `${where}: ${probe.status} for B's objects but ${control.status} for missing ones (an ` +
                  'existence oracle)',
              );
            else if (probe.status >= 400 && probe.body !== control.body)
              problems.push(
                `${where}: answer differs from the missing-object answer: ${probe.body} vs ${control.body}`,
              );
            // Outside any application only a read of what every application shares (event types) may succeed.
            const sharedRead = !namesApp && params.length === 0 && (route.method === 'GET' || route.method === 'HEAD');
            if (v.mustRefuse && !sharedRead && probe.status !== 404 && probe.status !== 403)
              problems.push(`${where}: answered ${probe.status}, expected 404 or 403: ${probe.body.slice(0, 300)}`);
            if (!namesApp && route.method !== 'GET' && route.method !== 'HEAD' && probe.status !== 403)
              problems.push(
                `${where}: answered ${probe.status}: a write outside A's application must be refused (403)`,
              );
            checked.push(`${where} → ${probe.status}`);
          }
        }
        assert.deepEqual(problems, [], problems.join('\n'));
        assert.ok(checked.length >= 40, `only ${checked.length} route variants checked`);
      },
    );

    test(
      'routes a scoped key may never use answer 403 whatever they ' + 'name, even with a body that would not validate',
      async () => {
        const operatorOnly = routes.filter(
          (r) =>
            !r.public &&
            (r.url.startsWith('/api/v1/api-key') || r.url.startsWith('/api/v1/auth/app') || r.url === '/api/v1/app'),
        );
        assert.ok(operatorOnly.length >= 6);
        for (const r of operatorOnly) {
          for (const appRef of [world.a.id, world.b.appId!, `app_${fakeUlid()}`]) {
            const url = fill(r.url, (n) => (n === 'appId' ? appRef : n === 'keyId' ? world.b.keyId! : 'x'));
            const res = await call(
              r.method,
              url,
              world.tokenA,
              r.method === 'GET' || r.method === 'DELETE' ? null : { unexpected: [1, 2, 3] },
            );
            assert.equal(res.status, 403, `${r.method} ${url}: ${res.body}`);
            if (r.method !== 'HEAD')
              assert.deepEqual(JSON.parse(res.body), {
                code: 'insufficient access',
                detail: 'This credential may not use this route',
              });
          }
        }
      },
    );

    test(
      "B is unchanged, B's own key reaches every object the matrix named, and a throwaway A key can log out only " +
        'itself',
      async () => {
        const b = world.b;
        for (const url of [
          `/api/v1/app/${b.appId}`,
          `/api/v1/app/${b.appUid}/endpoint/${b.endpointUid}`,
          `/api/v1/app/${b.appId}/endpoint/${b.endpointId}/secret`,
          `/api/v1/app/${b.appId}/msg/${b.eventId}`,
          `/api/v1/app/${b.appId}/msg/${b.msgId}/attempt/${b.attemptId}`,
          `/api/v1/app/${b.appId}/msg/${b.msgId}/endpoint/${b.endpointId}/timeline`,
          `/api/v1/app/${b.appId}/attempt/endpoint/${b.endpointId}`,
        ]) {
          const res = await call('GET', url, world.tokenB, null);
          assert.equal(res.status, 200, `${url}: ${res.body}`);
        }
        const appB = JSON.parse((await call('GET', `/api/v1/app/${b.appId}`, ADMIN, null)).body) as { name: string };
        assert.ok(appB.name.startsWith('B-NAME-'), 'B was not renamed');
        const msg = (await call('GET', `/api/v1/app/${b.appId}/msg/${b.msgId}`, world.tokenB, null)).body;
        assert.ok(msg.includes('B-PAYLOAD-'), "B's payload is intact");
        const ep = JSON.parse(
          (await call('GET', `/api/v1/app/${b.appId}/endpoint/${b.endpointId}`, world.tokenB, null)).body,
        ) as { description: string };
        assert.ok(ep.description.startsWith('B-DESC-'));
        assert.equal(
          (await call('GET', `/api/v1/app/${world.a.id}`, world.tokenA, null)).status,
          200,
          "A's key still works",
        );

        const throwaway = generateToken();
        await database.db.query(
          `INSERT INTO api_keys (id, name, role, app_id, token_hash, token_prefix) VALUES ($1, 'throwaway', ` +
            `'app', $2, $3, 'x')`,
          [`key_${fakeUlid()}`, world.a.id, hashToken(throwaway)],
        );
        assert.equal((await call('POST', '/api/v1/auth/logout', throwaway, null)).status, 204);
        assert.equal((await call('GET', `/api/v1/app/${world.a.id}`, throwaway, null)).status, 401);
        assert.equal(
          (await call('GET', `/api/v1/app/${b.appId}`, world.tokenB, null)).status,
          200,
          'logging out one key leaves others alone',
        );
      },
    );
  });
}
