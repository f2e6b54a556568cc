/**
 * A request the API accepts is carried out, or refused with a 4xx naming the field — never a 2xx for
 * something not done. One regression test per behaviour that used to be a silent 2xx, through the official
 * svix client where it has the call, on both engines.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ApiException, messageInRaw, type HTTPValidationError } from 'svix';
import { NOT_SERVED } from '../../src/http/not-served.ts';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

/** Every `(method, path)` the svix client 2.5.0 can request, read from its bundle. */
function clientRoutes(): { method: string; path: string }[] {
  const bundle = readFileSync(new URL('../../node_modules/svix/dist/index.mjs', import.meta.url), 'utf8');
  const found = [...bundle.matchAll(/new SvixRequest\("([A-Z]+)", "([^"]+)"\)/g)].map((m) => ({
    method: m[1]!,
    path: m[2]!,
  }));
  return [...new Map(found.map((r) => [`${r.method} ${r.path}`, r])).values()];
}

/** The 422 detail as the svix client parsed it: a list of `{loc, msg, type}`. */
const locsOf = (e: unknown): string[] => {
  assert.ok(e instanceof ApiException, String(e));
  assert.equal(e.code, 422);
  const detail = (e.body as HTTPValidationError).detail;
  assert.ok(Array.isArray(detail), 'detail is a list');
  return detail.map((d) => d.loc.join('.'));
};

for (const engine of ENGINES) {
  describe(`done or refused (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    before(async () => {
      api = await startApi(engine.fresh);
      appId = (await api.svix.application.create({ name: 'done-or-refused' })).id;
    });
    after(async () => api?.close());

    const stored = async (id: string) =>
      (
        await api.database.db.query<{
          payload: Buffer;
          payload_key_id: string;
          content_type: string | null;
          deliver_at: Date | null;
          created_at: Date;
        }>('SELECT payload, payload_key_id, content_type, deliver_at, created_at FROM messages WHERE id = $1', [id])
      ).rows[0]!;

    test(
      'a raw message keeps its body: messageInRaw stores the raw body encrypted with its content type, and the ' +
        'API returns it',
      async () => {
        for (const idempotencyKey of [undefined, randomUUID()]) {
          const msg = await api.svix.message.create(
            appId,
            messageInRaw('note.raw', 'plain text body'),
            idempotencyKey === undefined ? {} : { idempotencyKey },
          );
          const row = await stored(msg.id);
          assert.ok(!row.payload.includes(Buffer.from('plain text body')), 'encrypted at rest');
          assert.equal(api.cipher.decrypt(row.payload_key_id, row.payload, msg.id).toString('utf8'), 'plain text body');
          assert.equal(row.content_type, 'text/plain');
          assert.equal((await api.svix.message.get(appId, msg.id, { withContent: true })).payload, 'plain text body');
        }
        const typed = await api.svix.message.create(appId, messageInRaw('note.raw', 'a,b\n1,2\n', 'text/csv'), {
          withContent: true,
        });
        assert.equal(typed.payload, 'a,b\n1,2\n');
        assert.equal((await stored(typed.id)).content_type, 'text/csv');
        await assert.rejects(api.svix.message.create(appId, messageInRaw('note.raw', 'x', 'not a media type')), (e) =>
          locsOf(e).includes('body.transformationsParams.headers.content-type'),
        );
        await assert.rejects(
          api.svix.message.create(appId, { ...messageInRaw('note.raw', 'x'), payload: { also: 'json' } }),
          (e) => locsOf(e).includes('body.payload'),
        );
      },
    );

    test(
      'deliverAt is honoured and echoed: the first attempt is due then, the timeline says scheduled; in the past ' +
        'it is due at once; malformed or beyond the horizon is 422',
      async () => {
        await api.svix.endpoint.create(appId, { url: 'https://hooks.example/deliver-at' });
        for (const idempotencyKey of [undefined, randomUUID()]) {
          const deliverAt = new Date(Date.now() + 3_600_000);
          const msg = await api.svix.message.create(
            appId,
            { eventType: 'note.later', payload: {}, deliverAt },
            idempotencyKey === undefined ? {} : { idempotencyKey },
          );
          assert.equal(msg.deliverAt?.toISOString(), deliverAt.toISOString());
          const rows = (
            await api.database.db.query<{ next_attempt_at: Date; state: string; reason: string }>(
              'SELECT d.next_attempt_at, d.state, e.reason FROM deliveries d JOIN delivery_events e ON ' +
                'e.delivery_id = d.id WHERE d.message_id = $1',
              [msg.id],
            )
          ).rows;
          assert.deepEqual(rows, [{ next_attempt_at: deliverAt, state: 'pending', reason: 'scheduled' }]);
          assert.equal((await api.svix.message.get(appId, msg.id)).deliverAt?.toISOString(), deliverAt.toISOString());
        }
        const past = await api.svix.message.create(appId, {
          eventType: 'note.past',
          payload: {},
          deliverAt: new Date(Date.now() - 60_000),
        });
        const due = (
          await api.database.db.query<{ next_attempt_at: Date; reason: string }>(
            'SELECT d.next_attempt_at, e.reason FROM deliveries d JOIN delivery_events e ON e.delivery_id = d.id ' +
              'WHERE d.message_id = $1',
            [past.id],
          )
        ).rows[0]!;
        assert.deepEqual(due, { next_attempt_at: (await stored(past.id)).created_at, reason: 'published' });
        await assert.rejects(
          api.svix.message.create(appId, {
            eventType: 'note.far',
            payload: {},
            deliverAt: new Date(Date.now() + 25 * 3_600_000),
          }),
          (e) => locsOf(e).includes('body.deliverAt'),
        );
        for (const bad of ['tomorrow', '2026-13-01T00:00:00Z', '2026-01-01T00:00:00', 42]) {
          const err = await errorOf(
            await api.request('POST', `/api/v1/app/${appId}/msg`, {
              body: JSON.stringify({ eventType: 'note.bad', payload: {}, deliverAt: bad }),
            }),
          );
          assert.equal(err.status, 422, String(bad));
          assert.deepEqual(
            (err.detail as { loc: string[] }[]).map((d) => d.loc.join('.')),
            ['body.deliverAt'],
          );
        }
      },
    );

    test('a scheduled message held by a paused endpoint keeps its deliverAt when the endpoint is resumed', async () => {
      const app = await api.svix.application.create({ name: 'paused-schedule' });
      const ep = await api.svix.endpoint.create(app.id, { url: 'https://hooks.example/paused' });
      assert.equal((await api.request('POST', `/api/v1/app/${app.id}/endpoint/${ep.id}/pause`)).status, 204);
      const deliverAt = new Date(Date.now() + 3_600_000);
      const later = await api.svix.message.create(app.id, { eventType: 'note.later', payload: {}, deliverAt });
      const now = await api.svix.message.create(app.id, { eventType: 'note.now', payload: {} });
      assert.equal((await api.request('POST', `/api/v1/app/${app.id}/endpoint/${ep.id}/resume`)).status, 204);
      const due = async (id: string) =>
        (
          await api.database.db.query<{ next_attempt_at: Date }>(
            'SELECT next_attempt_at FROM deliveries WHERE message_id = $1',
            [id],
          )
        ).rows[0]!.next_attempt_at;
      assert.deepEqual(await due(later.id), deliverAt);
      assert.ok((await due(now.id)).getTime() <= Date.now() + 1000, 'the unscheduled one is due at once');
    });

    test('a payload that is not a JSON object is 422 at body.payload and stores nothing', async () => {
      const count = async () =>
        Number((await api.database.db.query<{ n: string }>('SELECT count(*) AS n FROM messages')).rows[0]!.n);
      const before = await count();
      for (const payload of [[1, 2, 3], 'a string', 42, true, null]) {
        await assert.rejects(
          api.svix.message.create(appId, { eventType: 'note.bad', payload }),
          (e) => locsOf(e).join() === 'body.payload',
        );
      }
      assert.equal(await count(), before);
    });

    test(
      'an empty filterTypes / eventTypes or channels list is 422 ' + 'instead of meaning every event type or channel',
      async () => {
        const url = 'https://hooks.example/empty';
        await assert.rejects(
          api.svix.endpoint.create(appId, { url, eventTypes: [] }),
          (e) => locsOf(e).join() === 'body.eventTypes',
        );
        await assert.rejects(
          api.svix.endpoint.create(appId, { url, channels: [] }),
          (e) => locsOf(e).join() === 'body.channels',
        );
        const filterTypes = await errorOf(
          await api.request('POST', `/api/v1/app/${appId}/endpoint`, {
            body: JSON.stringify({ url, filterTypes: [] }),
          }),
        );
        assert.deepEqual(
          [filterTypes.status, (filterTypes.detail as { loc: string[] }[])[0]!.loc],
          [422, ['body', 'filterTypes']],
        );
        const ep = await api.svix.endpoint.create(appId, { url, eventTypes: ['a.b'], channels: ['c'] });
        await assert.rejects(
          api.svix.endpoint.patch(appId, ep.id, { eventTypes: [] }),
          (e) => locsOf(e).join() === 'body.eventTypes',
        );
        await assert.rejects(
          api.svix.endpoint.upsert(appId, ep.id, { url, channels: [] }),
          (e) => locsOf(e).join() === 'body.channels',
        );
        const kept = await api.svix.endpoint.get(appId, ep.id);
        assert.deepEqual([kept.eventTypes, kept.channels], [['a.b'], ['c']], 'unchanged');
      },
    );

    test(
      'application.list honours exclude_apps_with_no_endpoints, ' + '…_disabled_endpoints and …_svix_play_endpoints',
      async () => {
        const make = async (name: string, urls: string[], disabled = false) => {
          const app = await api.svix.application.create({ name, uid: `${name}-${engine.name}` });
          for (const url of urls) await api.svix.endpoint.create(app.id, { url, disabled });
          return app.id;
        };
        const none = await make('none', []);
        const disabled = await make('disabled', ['https://hooks.example/d'], true);
        const play = await make('play', ['https://play.svix.com/in/e_abc/']);
        const live = await make('live', ['https://hooks.example/l']);
        const ids = async (options: Parameters<typeof api.svix.application.list>[0]) =>
          new Set((await api.svix.application.list({ limit: 250, ...options })).data.map((a) => a.id));
        const all = await ids({});
        for (const id of [none, disabled, play, live]) assert.ok(all.has(id));
        const noEndpoints = await ids({ excludeAppsWithNoEndpoints: true });
        assert.deepEqual(
          [none, disabled, play, live].map((id) => noEndpoints.has(id)),
          [false, true, true, true],
        );
        const noDisabled = await ids({ excludeAppsWithDisabledEndpoints: true });
        assert.deepEqual(
          [none, disabled, play, live].map((id) => noDisabled.has(id)),
          [true, false, true, true],
        );
        const noPlay = await ids({ excludeAppsWithSvixPlayEndpoints: true });
        assert.deepEqual(
          [none, disabled, play, live].map((id) => noPlay.has(id)),
          [true, true, false, true],
        );
      },
    );

    test(
      'every 422 carries detail as a list of {loc, msg, type} ' + 'that the svix client parses, the code kept',
      async () => {
        const urlRefused = await api.svix.endpoint.create(appId, { url: 'http://10.0.0.1/' }).catch((e: unknown) => e);
        assert.deepEqual(locsOf(urlRefused), ['body.url']);
        assert.equal((urlRefused as ApiException<{ code: string }>).body.code, 'url_not_allowed');
        const key = randomUUID();
        await api.svix.message.create(appId, { eventType: 'k', payload: { n: 1 } }, { idempotencyKey: key });
        const mismatch = await api.svix.message
          .create(appId, { eventType: 'k', payload: { n: 2 } }, { idempotencyKey: key })
          .catch((e: unknown) => e);
        assert.deepEqual(locsOf(mismatch), ['header.idempotency-key']);
        assert.equal((mismatch as ApiException<{ code: string }>).body.code, 'idempotency_key_mismatch');
        const extra = await errorOf(
          await api.request('POST', '/api/v1/app', { body: JSON.stringify({ name: 'x', notAField: 1 }) }),
        );
        assert.deepEqual(extra, {
          status: 422,
          code: 'validation',
          detail: [{ loc: ['body', 'notAField'], msg: 'extra fields not permitted', type: 'value_error.extra' }],
        });
      },
    );

    test(
      'a route Tidings does not serve answers 404 not_served with its reason, told apart from a missing object ' +
        '(not_found)',
      async () => {
        const notServed = (await api.svix.destination.list(appId).catch((e: unknown) => e)) as ApiException<{
          code: string;
          detail: string;
        }>;
        assert.equal(notServed.code, 404);
        assert.equal(notServed.body.code, 'not_served');
        assert.match(notServed.body.detail, /destinations/);
        const missing = (await api.svix.endpoint.get(appId, 'ep_no-such').catch((e: unknown) => e)) as ApiException<{
          code: string;
        }>;
        assert.deepEqual([missing.code, missing.body.code], [404, 'not_found']);
        for (const call of [
          () => api.svix.message.poller.poll(appId, 'sink_x'),
          () => api.svix.autoconfigSubscription.create(appId),
        ]) {
          const refused = (await call().catch((e: unknown) => e)) as ApiException<{ code: string }>;
          assert.deepEqual([refused.code, refused.body.code], [404, 'not_served']);
        }
      },
    );

    test(
      'every call of the svix client that Tidings has no route for answers not_served, and ' +
        'docs/guides/coming-from-svix.md lists each family with its reason',
      async () => {
        const unanswered: string[] = [];
        for (const { method, path } of clientRoutes()) {
          const concrete = path.replace(/\{[a-z_]+\}/g, 'x_unknown');
          const res = await api.request(
            method,
            concrete,
            method === 'GET' || method === 'DELETE' ? {} : { body: '{}' },
          );
          const body = res.status === 404 ? ((await res.json()) as { code: string; detail: string }) : null;
          if (body?.code === 'not_found' && body.detail.startsWith('No route')) unanswered.push(`${method} ${path}`);
        }
        assert.deepEqual(unanswered, [], 'client calls answered "No route" instead of not_served');
        const guide = readFileSync(new URL('../../docs/guides/coming-from-svix.md', import.meta.url), 'utf8');
        for (const family of NOT_SERVED)
          assert.ok(
            guide.includes(`- **${family.name}**: ${family.reason}`),
            `docs/guides/coming-from-svix.md lists ${family.name} with its reason`,
          );
      },
    );

    test(
      'a 403 carries Svix\'s code ("insufficient access") in the ' + 'HttpErrorOut shape the svix client parses',
      async () => {
        const token = await api.appKey(appId);
        const { Svix } = await import('svix');
        const scoped = new Svix(token, { serverUrl: api.url });
        const refused = (await scoped.application.list().catch((e: unknown) => e)) as ApiException<{
          code: string;
          detail: string;
        }>;
        assert.equal(refused.code, 403);
        assert.equal(refused.body.code, 'insufficient access');
        assert.equal(typeof refused.body.detail, 'string');
      },
    );
  });
}
