/**
 * Endpoint payload filters through the API (docs/adr/0029-endpoint-payload-filters.md, docs/reference/api.md,
 * "Payload filters"): set, read and cleared; a malformed filter refused with 422 naming the part (an integer JSON does
 * not carry exactly, comparisons beside field names, a body nested too deeply among them); messages published
 * through the official client make deliveries only for the endpoints whose filter they match, and list the others;
 * a second API process that cached the filters meets a change made through the first; a credential scoped to one
 * application cannot read, set or test a filter of another's. On both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

const ENV = { TIDINGS_FILTER_MAX_NODES: '12' };
const HIGH = { payload: { amount: { $gte: 100 } } };
const EU = { $and: [{ channels: 'eu' }, { payload: { customer: { tier: { $in: ['gold', 'premium'] } } } }] };
const NOT_PAID = { payload: { status: { $not: { $eq: 'paid' } } } };

/** A malformed filter, the locs of its 422 and a pattern of the first message. */
const REFUSALS: readonly [unknown, string[], RegExp][] = [
  [
    { $and: [{ eventType: 'a' }, { payload: { amount: { $gt: '5' } } }] },
    ['body.filter.$and.1.payload.amount.$gt'],
    /a number/,
  ],
  [{ data: { status: 'paid' } }, ['body.filter.data'], /unknown field; a message has eventType/],
  [{ payload: { status: { $exist: true } } }, ['body.filter.payload.status.$exist'], /spelled \$exists/],
  [{ payload: { status: ['a'] } }, ['body.filter.payload.status'], /\$in/],
  [{ $or: [] }, ['body.filter.$or'], /non-empty list/],
  [{ payload: { s: { $in: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] } } }, ['body.filter'], /TIDINGS_FILTER_MAX_NODES/],
  ['paid', ['body.filter'], /./],
];

for (const engine of ENGINES) {
  describe(`endpoint payload filters through the API (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    const ep: Record<string, string> = {};
    before(async () => {
      api = await startApi(engine.fresh, ENV);
      appId = (await api.svix.application.create({ name: 'filters', uid: 'filters' })).id;
      for (const name of ['all', 'high', 'eu', 'notpaid']) {
        ep[name] = (await api.svix.endpoint.create(appId, { url: `https://hooks.example/${name}`, uid: name })).id;
      }
    });
    after(async () => api?.close());

    const call = async (method: string, path: string, body?: unknown, token?: string) => {
      const res = await api.request(method, path, {
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(token === undefined ? {} : { token }),
      });
      return { status: res.status, json: res.status === 204 ? null : ((await res.json()) as Record<string, unknown>) };
    };
    const filterPath = (app: string, endpoint: string) => `/api/v1/app/${app}/endpoint/${endpoint}/filter`;
    const destinations = async (msgId: string) =>
      (await api.svix.messageAttempt.listAttemptedDestinations(appId, msgId)).data.map((d) => d.id).sort();

    test('a filter is set, read back, and cleared by DELETE or by {}', async () => {
      assert.deepEqual(await call('GET', filterPath('filters', 'high')), { status: 200, json: { filter: null } });
      assert.deepEqual(await call('PUT', filterPath('filters', 'high'), { filter: HIGH }), {
        status: 200,
        json: { filter: HIGH },
      });
      assert.deepEqual((await call('GET', filterPath(appId, ep.high!))).json, { filter: HIGH });
      assert.deepEqual((await call('PUT', filterPath('filters', 'high'), { filter: {} })).json, { filter: null });
      await call('PUT', filterPath('filters', 'high'), { filter: HIGH });
      assert.equal((await call('DELETE', filterPath('filters', 'high'))).status, 204);
      assert.deepEqual((await call('GET', filterPath('filters', 'high'))).json, { filter: null });
    });

    test('a malformed filter is refused with 422 naming the part, and nothing changes', async () => {
      await call('PUT', filterPath('filters', 'eu'), { filter: EU });
      for (const [filter, locs, msg] of REFUSALS) {
        const res = await api.request('PUT', filterPath('filters', 'eu'), { body: JSON.stringify({ filter }) });
        const err = await errorOf(res);
        const detail = err.detail as { loc: (string | number)[]; msg: string }[];
        assert.deepEqual([err.status, detail.map((d) => d.loc.join('.'))], [422, locs], JSON.stringify(filter));
        assert.match(detail[0]!.msg, msg);
        // The test route checks the same way.
        const tested = await api.request('POST', `/api/v1/app/filters/filter/test`, {
          body: JSON.stringify({ filter, message: { eventType: 'x' } }),
        });
        assert.equal(tested.status, 422);
      }
      assert.deepEqual((await call('GET', filterPath('filters', 'eu'))).json, { filter: EU });
      await call('DELETE', filterPath('filters', 'eu'));
    });

    test('an integer beyond 2^53 - 1, comparisons beside field names, a body nested 10,000 deep: 422', async () => {
      await call('PUT', filterPath('filters', 'eu'), { filter: EU });
      const deep = `{"a":{"$in":${'['.repeat(10_000)}1${']'.repeat(10_000)}}}`;
      const bodies: readonly [string, string, RegExp][] = [
        ['{"id":9007199254740993}', 'body.filter.payload.id', /beyond ±9007199254740991/],
        ['{"id":{"$in":[1,-9007199254740993]}}', 'body.filter.payload.id.$in.1', /beyond ±9007199254740991/],
        ['{"a":{"$gt":1,"b":2}}', 'body.filter.payload.a', /operators and field names cannot be mixed/],
        [deep, `body.filter.payload.a.$in${'.0'.repeat(124)}`, /TIDINGS_MAX_JSON_DEPTH/],
      ];
      for (const [payload, loc, msg] of bodies) {
        for (const [method, path, extra] of [
          ['PUT', filterPath('filters', 'eu'), ''],
          ['POST', '/api/v1/app/filters/filter/test', ',"message":{"eventType":"x","payload":{"id":9007199254740992}}'],
        ] as const) {
          const body = `{"filter":{"payload":${payload}}${extra}}`;
          const err = await errorOf(await api.request(method, path, { body }));
          const detail = err.detail as { loc: (string | number)[]; msg: string }[];
          assert.deepEqual([err.status, detail[0]?.loc.join('.')], [422, loc], `${method} ${payload.slice(0, 40)}`);
          assert.match(detail[0]!.msg, msg);
        }
      }
      assert.deepEqual((await call('GET', filterPath('filters', 'eu'))).json, { filter: EU });
      await call('DELETE', filterPath('filters', 'eu'));
    });

    test('published through the official client, a message is delivered only to the endpoints it matches', async () => {
      await call('PUT', filterPath('filters', 'high'), { filter: HIGH });
      await call('PUT', filterPath('filters', 'eu'), { filter: EU });
      await call('PUT', filterPath('filters', 'notpaid'), { filter: NOT_PAID });
      const publish = (payload: Record<string, unknown>, channels?: string[]) =>
        api.svix.message.create(appId, { eventType: 'order.created', payload, ...(channels ? { channels } : {}) });
      const rows: readonly [Record<string, unknown>, string[] | undefined, string[]][] = [
        [{ amount: 250, status: 'paid' }, undefined, ['all', 'high']],
        [{ amount: 5, status: 'open', customer: { tier: 'gold' } }, ['eu'], ['all', 'eu', 'notpaid']],
        [{ amount: 500, status: 'open', customer: { tier: 'basic' } }, ['eu'], ['all', 'high', 'notpaid']],
        [{ amount: '500' }, ['us'], ['all', 'notpaid']],
      ];
      for (const [payload, channels, want] of rows) {
        const msg = await publish(payload, channels);
        const expected = want.map((n) => ep[n]!).sort();
        assert.deepEqual(await destinations(msg.id), expected, JSON.stringify(payload));
        // The message lists the endpoints it skipped, and why they got nothing.
        const skipped = await call('GET', `/api/v1/app/${appId}/msg/${msg.id}/filtered-endpoint`);
        const got = (skipped.json!.data as { endpointId: string }[]).map((d) => d.endpointId).sort();
        const others = Object.values(ep)
          .filter((id) => !expected.includes(id))
          .sort();
        assert.deepEqual(got, others, JSON.stringify(payload));
      }
      // A raw message has no JSON payload: payload conditions see a missing field.
      const raw = await api.svix.message.create(appId, {
        eventType: 'order.created',
        payload: {},
        transformationsParams: { rawPayload: 'amount=900' },
      });
      assert.deepEqual(await destinations(raw.id), [ep.all!, ep.notpaid!].sort());
      await Promise.all(['high', 'eu', 'notpaid'].map((n) => call('DELETE', filterPath('filters', n))));
    });

    test('a second API process that cached the filters meets a change made through the first', async () => {
      const other = await startApi(engine.fresh, ENV, { database: api.database });
      try {
        await call('PUT', filterPath('filters', 'high'), { filter: HIGH });
        const send = (amount: number) =>
          other.svix.message.create(appId, { eventType: 'order.created', payload: { amount } });
        // The other process reads and caches the application and its filters…
        assert.deepEqual(await destinations((await send(500)).id), [ep.all!, ep.eu!, ep.high!, ep.notpaid!].sort());
        assert.deepEqual(await destinations((await send(5)).id), [ep.all!, ep.eu!, ep.notpaid!].sort());
        // …the filter changes through this one; the very next message published there meets the new filter.
        await call('PUT', filterPath('filters', 'high'), { filter: { payload: { amount: { $lt: 10 } } } });
        assert.deepEqual(await destinations((await send(5)).id), [ep.all!, ep.eu!, ep.high!, ep.notpaid!].sort());
        assert.deepEqual(await destinations((await send(500)).id), [ep.all!, ep.eu!, ep.notpaid!].sort());
        await call('DELETE', filterPath('filters', 'high'));
        assert.equal((await destinations((await send(500)).id)).length, 4);
      } finally {
        await other.close();
      }
    });

    test('the test route evaluates a filter against a sample message and writes nothing', async () => {
      const test = (filter: unknown, message: unknown) =>
        call('POST', '/api/v1/app/filters/filter/test', { filter, message });
      const sample = {
        eventType: 'order.created',
        channels: ['eu'],
        payload: { amount: 120, customer: { tier: 'gold' } },
      };
      assert.deepEqual(await test(HIGH, sample), { status: 200, json: { matches: true } });
      assert.deepEqual(await test(EU, { ...sample, channels: ['us'] }), { status: 200, json: { matches: false } });
      assert.deepEqual(await test(HIGH, { eventType: 'order.created' }), { status: 200, json: { matches: false } });
      assert.equal((await test(HIGH, { eventType: 'order.created', extra: 1 })).status, 422);
    });

    test("a credential scoped to one application cannot read, set or test another application's filters", async () => {
      const otherApp = (await api.svix.application.create({ name: 'other', uid: 'other' })).id;
      const otherEp = (await api.svix.endpoint.create(otherApp, { url: 'https://hooks.example/o', uid: 'o' })).id;
      const token = await api.appKey(otherApp);
      // Its own application: allowed.
      assert.equal((await call('PUT', filterPath('other', 'o'), { filter: HIGH }, token)).status, 200);
      // Another application's endpoint, by uid or by id, through either application's path: not found.
      for (const path of [filterPath('filters', 'high'), filterPath(appId, ep.high!), filterPath('other', ep.high!)]) {
        for (const [method, body] of [['GET'], ['PUT', { filter: { eventType: 'x' } }], ['DELETE']] as const) {
          assert.equal((await call(method, path, body, token)).status, 404, `${method} ${path}`);
        }
      }
      const tested = await call(
        'POST',
        '/api/v1/app/filters/filter/test',
        { filter: HIGH, message: { eventType: 'x' } },
        token,
      );
      assert.equal(tested.status, 404);
      assert.equal((await call('GET', `/api/v1/app/filters/msg/nope/filtered-endpoint`, undefined, token)).status, 404);
      assert.deepEqual((await call('GET', filterPath('filters', 'high'))).json, { filter: null });
      assert.deepEqual((await call('GET', filterPath(otherApp, otherEp))).json, { filter: HIGH });
    });
  });
}
