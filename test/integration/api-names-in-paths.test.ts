/**
 * Every name the API accepts can be carried by a URL path unchanged, and no request reaches a route by a
 * shortened path: `.` and `..` are refused as ids, uids, event type names and eventIds (422 naming the field),
 * and a path with an empty or dot segment is answered 404 before any route runs. Through the official svix
 * client (which, like every fetch-based client, removes dot segments) and raw requests. Runs on both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Svix } from 'svix';
import { ENGINES } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

/** A svix client failure with `status`, whose first issue (when `loc` is given) names `loc`. */
const refused = (status: number, loc?: readonly (string | number)[]) => (e: unknown) => {
  const error = e as { code?: number; body?: { code?: string; detail?: { loc: unknown[] }[] } };
  if (error.code !== status) return false;
  return loc === undefined || JSON.stringify(error.body?.detail?.[0]?.loc) === JSON.stringify(loc);
};

const count = async (api: ApiHarness, sql: string, params: unknown[]): Promise<number> =>
  (await api.database.db.query<{ n: number }>(sql, params)).rows[0]!.n;

for (const engine of ENGINES) {
  describe(`names that a URL path carries unchanged (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    before(async () => {
      api = await startApi(engine.fresh);
      appId = (await api.svix.application.create({ name: 'paths', uid: 'app' })).id;
      await api.svix.message.create('app', { eventType: 'kept.one', payload: { kept: true } });
    });
    after(async () => api?.close());

    test(
      'a dot-segment endpoint uid cannot turn "delete endpoint" into "delete application": "." and ".." are ' +
        "refused as uids with 422 naming the field, and the client's shortened DELETE is a 404 that deletes " +
        'nothing',
      async () => {
        const portal = new Svix((await api.svix.authentication.appPortalAccess(appId, {})).token, {
          serverUrl: api.url,
        });
        for (const uid of ['..', '.']) {
          await assert.rejects(
            portal.endpoint.create('app', { url: 'http://127.0.0.1:9/x', uid }),
            refused(422, ['body', 'uid']),
            `endpoint uid ${uid}`,
          );
          await assert.rejects(
            api.svix.endpoint.create('app', { url: 'http://127.0.0.1:9/x', uid }),
            refused(422, ['body', 'uid']),
            `operator, endpoint uid ${uid}`,
          );
          await assert.rejects(
            api.svix.application.create({ name: 'dots', uid }),
            refused(422, ['body', 'uid']),
            `application uid ${uid}`,
          );
          await assert.rejects(
            api.svix.eventType.create({ name: uid, description: 'dots' }),
            refused(422, ['body', 'name']),
            `event type ${uid}`,
          );
          await assert.rejects(
            api.svix.message.create('app', { eventType: uid, payload: {} }),
            refused(422, ['body', 'eventType']),
            `message eventType ${uid}`,
          );
          await assert.rejects(
            api.svix.message.create('app', { eventType: 'a.b', eventId: uid, payload: {} }),
            refused(422, ['body', 'eventId']),
            `eventId ${uid}`,
          );
          await assert.rejects(
            api.svix.message.create('fresh-app', { eventType: 'a.b', payload: {}, application: { name: 'x', uid } }),
            refused(422, ['body', 'application', 'uid']),
            `message application uid ${uid}`,
          );
          const ep = await api.svix.endpoint.create('app', { url: 'http://127.0.0.1:9/x' });
          await assert.rejects(
            api.svix.endpoint.patch('app', ep.id, { uid }),
            refused(422, ['body', 'uid']),
            `patched uid ${uid}`,
          );
          await assert.rejects(
            api.svix.application.patch('app', { uid }),
            refused(422, ['body', 'uid']),
            `patched application uid ${uid}`,
          );
          await api.svix.endpoint.delete('app', ep.id);
        }
        // What the client sends for `endpoint.delete('app', '..')` and `endpoint.get('app', '..')`: the application's
        // path.
        await assert.rejects(api.svix.endpoint.delete('app', '..'), refused(404));
        await assert.rejects(api.svix.endpoint.get('app', '..'), refused(404));
        await assert.rejects(api.svix.endpoint.delete('app', '.'), refused(404));
        assert.equal((await api.svix.application.get('app')).id, appId, 'the application is still there');
        assert.equal(
          await count(api, 'SELECT count(*)::int AS n FROM messages WHERE app_id = $1', [appId]),
          1,
          'with its message',
        );
      },
    );

    test(
      'a path with an empty or dot segment is answered 404 for every method, raw or percent-encoded, before any ' +
        'route runs',
      async () => {
        for (const [method, path] of [
          ['DELETE', '/api/v1/app/app/'],
          ['GET', '/api/v1/app/app/'],
          ['PATCH', '/api/v1/app/app/'],
          ['PUT', '/api/v1/app/app/'],
          ['DELETE', '/api/v1/app/app/endpoint/%2e%2e'],
          ['DELETE', '/api/v1/app/app/endpoint/%2E.'],
          ['GET', '/api/v1/app//endpoint'],
          ['DELETE', '/api/v1/event-type/%2e'],
          ['POST', '/api/v1/app/app/msg/'],
          ['PUT', '/api/v1/app/%2e%2e'],
        ] as const) {
          const body =
            method === 'PUT' || method === 'PATCH' || method === 'POST'
              ? JSON.stringify({ name: 'x', eventType: 'a.b', payload: {} })
              : undefined;
          const res = await api.request(method, path, body === undefined ? {} : { body });
          const answer = (await res.json()) as { code: string; detail: string };
          assert.equal(res.status, 404, `${method} ${path}`);
          assert.equal(answer.code, 'not_found', `${method} ${path}`);
          assert.match(answer.detail, /segment/, `${method} ${path}`);
        }
        assert.equal((await api.svix.application.get('app')).name, 'paths', 'nothing changed');
        assert.equal(await count(api, 'SELECT count(*)::int AS n FROM applications WHERE uid = $1', ['..']), 0);
        assert.equal(
          (await api.request('GET', '/api/v1/app/app')).status,
          200,
          'the same path without the trailing slash is served',
        );
      },
    );

    test(
      'an eventId that needs percent-encoding (256 non-ASCII characters, "/", "?", "#", "%", spaces) is read ' +
        'back by the client under its own path',
      async () => {
        for (const eventId of ['€'.repeat(256), 'a/b?c#d%2e%25 e', '%2e%2e', '.hidden', 'x..']) {
          const created = await api.svix.message.create('app', {
            eventType: 'named.one',
            eventId,
            payload: { eventId },
          });
          const read = await api.svix.message.get('app', eventId, { withContent: true });
          assert.equal(read.id, created.id, JSON.stringify(eventId.slice(0, 20)));
          assert.deepEqual(read.payload, { eventId });
        }
      },
    );
  });
}
