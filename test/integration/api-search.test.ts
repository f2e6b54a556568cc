/**
 * The search of the delivery log (docs/reference/api.md, "Search"), on both engines, through the HTTP API with a
 * manual clock (ids, and so windows, follow it) and no dispatcher: deliveries are moved to the states a dispatcher
 * would leave them in by SQL, with the timeline rows it would write (search-world.ts). It shows the never-delivered
 * view after an endpoint is disabled and enabled again; every documented filter of the four routes; the refusal of a
 * search no index bounds; the scan and payload budgets (a page ends early and its iterator resumes where it
 * stopped); and that a portal token of one application reads none of another's rows, and cannot tell another's
 * endpoint from a missing one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../support/db.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { mulberry32 } from '../support/random.ts';
import { startApi, type ApiHarness } from './api-harness.ts';
import { searchWorld, type Found, type ListBody } from './search-world.ts';

const SECOND = 1000;
/** TIDINGS_SEARCH_SCAN_ROWS and TIDINGS_SEARCH_PAYLOAD_ROWS of the suite: small, so few rows reach them. */
const SCAN_ROWS = 10;
const PAYLOAD_ROWS = 4;

type Id = { id: string };
/** An order's payload. */
const created = (id: string, total: number) => ({ customer: { id }, total });

for (const engine of ENGINES) {
  describe(`search of the delivery log (${engine.name})`, () => {
    // Near the real time: portal tokens expire by the database clock.
    const clock = new ManualClock(Date.now());
    const random = mulberry32(11);
    let api: ApiHarness;
    const env = { TIDINGS_SEARCH_SCAN_ROWS: String(SCAN_ROWS), TIDINGS_SEARCH_PAYLOAD_ROWS: String(PAYLOAD_ROWS) };
    before(async () => {
      api = await startApi(engine.fresh, env, { clock });
    });
    after(async () => api?.close());
    const { get, all, app, endpoint, publish, settle, attempt, ago } = searchWorld(
      () => api,
      clock,
      () => random(),
    );

    test('never delivered: after a disable and an enable, what was published meanwhile is skipped', async () => {
      const a = await app('never-delivered');
      const ep = await endpoint(a.id, 'never');
      const since = ago();
      const n1 = await publish(a.id, 'n.event', { n: 1 });
      await settle(n1.id, ep.id, 'succeeded', { reason: 'published', status: 200 });
      const n2 = await publish(a.id, 'n.event', { n: 2 });
      clock.advance(SECOND);
      await api.svix.endpoint.patch(a.id, ep.id, { disabled: true });
      const n3 = await publish(a.id, 'n.event', { n: 3 });
      const n4 = await publish(a.id, 'n.event', { n: 4 });
      clock.advance(SECOND);
      await api.svix.endpoint.patch(a.id, ep.id, { disabled: false });
      const n5 = await publish(a.id, 'n.event', { n: 5 });

      const view = `/api/v1/app/${a.id}/endpoint/${ep.id}/undelivered?after=${since}`;
      const { items } = await all<Found>(view);
      assert.deepEqual(
        items.map((f) => [f.msgId, f.deliveryState, f.reason]),
        [
          [n5.id, 'pending', 'published'],
          [n4.id, 'skipped', 'endpoint_disabled'],
          [n3.id, 'skipped', 'endpoint_disabled'],
          [n2.id, 'skipped', 'endpoint_disabled'],
        ],
        'newest first; not the delivered one; the one pending when the endpoint was disabled is skipped too',
      );
      assert.ok(items.every((f) => f.endpointId === ep.id && f.stateChangedAt !== null));
      assert.deepEqual(
        items.map((f) => f.status),
        [1, 4, 4, 4],
        'Svix statuses: pending 1, skipped 4',
      );

      const skippedOnly = await all<Found>(`${view}&delivery_state=skipped&order=ascending`);
      assert.deepEqual(
        skippedOnly.items.map((f) => f.msgId),
        [n2.id, n3.id, n4.id],
      );
      const refused = await get<{ code: string; detail: { loc: string[] }[] }>(`${view}&delivery_state=succeeded`);
      assert.equal(refused.status, 422);
      assert.deepEqual(refused.body.detail[0]!.loc, ['query', 'delivery_state']);
    });

    describe('every documented filter', () => {
      let appId: string;
      let x: string;
      let y: string;
      let since: string;
      let mid: string;
      let m1: string, m2: string, m3: string;
      let a1: string, a2: string;
      before(async () => {
        appId = (await app('filters')).id;
        x = (await endpoint(appId, 'x')).id;
        y = (await endpoint(appId, 'y')).id;
        since = ago();
        m1 = (await publish(appId, 'order.created', created('cus_1', 10), { channels: ['eu'], tags: ['vip'] })).id;
        clock.advance(SECOND / 2);
        a1 = await attempt(appId, m1, x, 200);
        await settle(m1, x, 'succeeded', { reason: 'published', status: 200 });
        m2 = (await publish(appId, 'order.paid', { customer: { id: 'cus_2' }, total: 20 }, { channels: ['us'] })).id;
        clock.advance(SECOND / 2);
        mid = ago();
        a2 = await attempt(appId, m2, x, 503);
        await settle(m2, x, 'dead', { reason: 'exhausted', status: 503 });
        m3 = (await publish(appId, 'order.created', created('cus_2', 30), { channels: ['us'], tags: ['vip'] })).id;
        await settle(m3, x, 'pending', { reason: 'retry_scheduled', status: 429 });
        clock.advance(SECOND);
      });

      const search = (route: string, query: string) => `/api/v1/app/${appId}/search/${route}?after=${since}${query}`;
      const msgIds = async (query: string) => (await all<Id>(search('msg', query))).items.map((m) => m.id);
      const label = (f: Found) =>
        `${f.msgId === m1 ? 'm1' : f.msgId === m2 ? 'm2' : 'm3'}${f.endpointId === x ? 'x' : 'y'}`;
      const deliveries = async (query: string) => (await all<Found>(search('delivery', query))).items.map(label);
      const attempts = async (query: string) =>
        (await all<Id>(search('attempt', `&endpoint_id=${x}${query}`))).items.map((t) => t.id);

      test('messages: after, before, event_types, channel, tag, payload field, order, content, paging', async () => {
        assert.deepEqual(await msgIds(''), [m3, m2, m1]);
        assert.deepEqual(await msgIds(`&before=${mid}`), [m2, m1]);
        const later = await all<Id>(`/api/v1/app/${appId}/search/msg?after=${mid}`);
        assert.deepEqual(
          later.items.map((m) => m.id),
          [m3],
        );
        assert.deepEqual(await msgIds('&event_types=order.created'), [m3, m1]);
        assert.deepEqual(await msgIds('&channel=us'), [m3, m2]);
        assert.deepEqual(await msgIds('&tag=vip'), [m3, m1]);
        assert.deepEqual(await msgIds('&payload_field=customer.id&payload_value=cus_2'), [m3, m2]);
        assert.deepEqual(await msgIds('&payload_field=total&payload_value=30'), [m3]);
        assert.deepEqual(await msgIds('&order=ascending'), [m1, m2, m3]);
        const withContent = search('msg', '&with_content=true&tag=vip&channel=eu');
        const content = await get<ListBody<Id & { payload: unknown }>>(withContent);
        assert.deepEqual(
          content.body.data.map((m) => [m.id, m.payload]),
          [[m1, created('cus_1', 10)]],
        );

        const first = await get<ListBody<Id>>(search('msg', '&limit=1'));
        assert.deepEqual([first.body.data.map((m) => m.id), first.body.done], [[m3], false]);
        const second = await get<ListBody<Id>>(search('msg', `&limit=1&iterator=${first.body.iterator}`));
        assert.deepEqual(
          second.body.data.map((m) => m.id),
          [m2],
        );
        const back = await get<ListBody<Id>>(search('msg', `&limit=1&iterator=${second.body.prevIterator}`));
        assert.deepEqual(
          back.body.data.map((m) => m.id),
          [m3],
          'prevIterator goes back a page',
        );
      });

      test('deliveries: endpoint, delivery_state, status, status class, message filters, payload, paging', async () => {
        const everything = ['m3y', 'm3x', 'm2y', 'm2x', 'm1y', 'm1x'];
        assert.deepEqual(await deliveries(''), everything, 'newest message first, then endpoint');
        assert.deepEqual(await deliveries(`&endpoint_id=${x}`), ['m3x', 'm2x', 'm1x']);
        assert.deepEqual(await deliveries('&delivery_state=dead,succeeded'), ['m2x', 'm1x']);
        assert.deepEqual(await deliveries('&status=1'), ['m3y', 'm3x', 'm2y', 'm1y']);
        assert.deepEqual(await deliveries(`&status=2&endpoint_id=${x}`), ['m2x']);
        assert.deepEqual(await deliveries('&status_code_class=500'), ['m2x']);
        assert.deepEqual(await deliveries('&status_code_class=400'), ['m3x']);
        assert.deepEqual(await deliveries('&status_code_class=0'), ['m3y', 'm2y', 'm1y']);
        assert.deepEqual(await deliveries('&event_types=order.paid'), ['m2y', 'm2x']);
        assert.deepEqual(await deliveries('&channel=eu'), ['m1y', 'm1x']);
        assert.deepEqual(await deliveries(`&tag=vip&endpoint_id=${y}`), ['m3y', 'm1y']);
        assert.deepEqual(await deliveries(`&before=${mid}`), ['m2y', 'm2x', 'm1y', 'm1x']);
        assert.deepEqual(await deliveries('&payload_field=customer.id&payload_value=cus_1'), ['m1y', 'm1x']);
        assert.deepEqual(await deliveries('&order=ascending&limit=1'), ['m1x', 'm1y', 'm2x', 'm2y', 'm3x', 'm3y']);

        const page = await get<ListBody<Found>>(search('delivery', '&limit=3'));
        assert.equal(page.body.iterator, `${m2}.${y}`, 'a page can end inside a message');
        const rest = await get<ListBody<Found>>(search('delivery', `&limit=3&iterator=${page.body.iterator}`));
        assert.deepEqual(
          rest.body.data.map((f) => [f.msgId, f.endpointId]),
          [
            [m2, x],
            [m1, y],
            [m1, x],
          ],
        );
        const m2x = rest.body.data[0]!;
        const shown = [m2x.deliveryState, m2x.reason, m2x.lastStatusCode, m2x.status];
        assert.deepEqual(shown, ['dead', 'exhausted', 503, 2]);
      });

      test("attempts: endpoint, the attempt's window, status, status class, message filters, payload", async () => {
        assert.deepEqual(await attempts(''), [a2, a1]);
        assert.deepEqual(await attempts(`&before=${mid}`), [a1]);
        assert.deepEqual(await attempts('&status=0'), [a1]);
        assert.deepEqual(await attempts('&status=2'), [a2]);
        assert.deepEqual(await attempts('&status_code_class=500'), [a2]);
        assert.deepEqual(await attempts('&event_types=order.created'), [a1]);
        assert.deepEqual(await attempts('&channel=us'), [a2]);
        assert.deepEqual(await attempts('&tag=vip'), [a1]);
        assert.deepEqual(await attempts('&payload_field=customer.id&payload_value=cus_2'), [a2]);
        assert.deepEqual((await all<Id>(search('attempt', `&endpoint_id=${y}`))).items, []);
      });

      test('filters together: status with delivery_state, with_msg, the never-delivered view filtered', async () => {
        assert.deepEqual(await deliveries('&status=2&delivery_state=dead,succeeded'), ['m2x'], 'the states both allow');
        assert.deepEqual(await deliveries('&status=0&delivery_state=dead'), [], 'no state both allow');
        assert.deepEqual(await deliveries('&status_code=503'), ['m2x'], "the last attempt's status, exactly");
        assert.deepEqual(await deliveries('&status_code=429&status_code_class=400'), ['m3x']);
        assert.deepEqual(await deliveries('&status_code=404'), []);
        assert.deepEqual(await attempts('&status_code=200'), [a1]);
        const badCode = await get<{ code: string; detail: { loc: string[] }[] }>(search('attempt', '&status_code=99'));
        assert.deepEqual([badCode.status, badCode.body.detail[0]!.loc], [422, ['query', 'status_code']]);
        const withMsg = await all<Id & { msg?: { eventType: string } }>(
          search('attempt', `&endpoint_id=${x}&with_msg=true&order=ascending`),
        );
        assert.deepEqual(
          withMsg.items.map((a) => [a.id, a.msg?.eventType]),
          [
            [a1, 'order.created'],
            [a2, 'order.paid'],
          ],
        );
        const view = (query: string) =>
          all<Found>(`/api/v1/app/${appId}/endpoint/${x}/undelivered?after=${since}${query}`).then((r) =>
            r.items.map((f) => f.msgId),
          );
        assert.deepEqual(await view('&event_types=order.paid'), [m2]);
        assert.deepEqual(await view('&status_code_class=400'), [m3]);
        assert.deepEqual(await view('&status_code=503'), [m2]);
        assert.deepEqual(await view('&status=1'), [m3], 'Svix status 1: pending');
        assert.deepEqual(await view('&payload_field=customer.id&payload_value=cus_2&order=ascending'), [m2, m3]);
      });

      test("the never-delivered view lists the endpoint's pending and dead deliveries, with why", async () => {
        const { items } = await all<Found>(`/api/v1/app/${appId}/endpoint/${x}/undelivered?after=${since}`);
        assert.deepEqual(
          items.map((f) => [f.msgId, f.deliveryState, f.reason, f.lastStatusCode]),
          [
            [m3, 'pending', 'retry_scheduled', 429],
            [m2, 'dead', 'exhausted', 503],
          ],
        );
      });
    });

    test('a search no index bounds is refused with 422 search_unbounded naming the field to add', async () => {
      const a = await app('unbounded');
      const ep = await endpoint(a.id, 'u');
      const base = `/api/v1/app/${a.id}`;
      const cases: readonly (readonly [path: string, code: string, field: string, says: RegExp])[] = [
        [`${base}/search/msg?event_types=x`, 'search_unbounded', 'after', /add after/],
        [`${base}/search/delivery?endpoint_id=${ep.id}`, 'search_unbounded', 'after', /add after/],
        [`${base}/endpoint/${ep.id}/undelivered`, 'search_unbounded', 'after', /add after/],
        [`${base}/search/attempt?after=${ago(SECOND)}`, 'search_unbounded', 'endpoint_id', /add endpoint_id/],
        [
          `${base}/search/msg?after=${ago(8 * 86_400_000)}`,
          'search_unbounded',
          'after',
          /is 8d, wider than \S+ \(7d\)/,
        ],
        [`${base}/search/msg?after=${ago()}&before=${ago(SECOND)}`, 'validation', 'before', /later than after/],
        [`${base}/search/msg?after=${ago(SECOND)}&payload_field=a`, 'validation', 'payload_value', /go together/],
        [
          `${base}/search/msg?after=${ago(SECOND)}&payload_field=a..b&payload_value=1`,
          'validation',
          'payload_field',
          /dotted/,
        ],
      ];
      for (const [path, code, field, says] of cases) {
        const res = await get<{ code: string; detail: { loc: string[]; msg: string }[] }>(path);
        assert.equal(res.status, 422, path);
        assert.equal(res.body.code, code, path);
        assert.deepEqual(res.body.detail[0]!.loc, ['query', field], path);
        assert.match(res.body.detail[0]!.msg, says, path);
      }
    });

    test('a request examines at most TIDINGS_SEARCH_SCAN_ROWS rows and _PAYLOAD_ROWS payloads', async () => {
      const a = await app('budgets');
      const ep = await endpoint(a.id, 'b');
      const since = ago();
      const rare: string[] = [];
      for (let i = 0; i < 25; i++) {
        const m = await publish(a.id, i % 12 === 3 ? 'rare.event' : 'common.event', { i, even: i % 2 === 0 });
        if (i % 12 === 3) rare.unshift(m.id);
      }
      const path = `/api/v1/app/${a.id}/search/msg?after=${since}&event_types=rare.event`;
      const first = await get<ListBody<Id>>(path);
      assert.deepEqual([first.body.data.length, first.body.done], [1, false], 'the newest 10 of 25: one match');
      const scan = await all<Id>(path);
      assert.deepEqual(
        scan.items.map((m) => m.id),
        rare,
        'following the iterators finds every match, once, in order',
      );
      assert.ok(scan.pages >= 3 && scan.emptyPages >= 1, `${scan.pages} pages (${scan.emptyPages} empty)`);

      const even = await all<Id>(
        `/api/v1/app/${a.id}/search/delivery?after=${since}&endpoint_id=${ep.id}` +
          '&payload_field=even&payload_value=true',
      );
      assert.equal(even.items.length, 13);
      assert.ok(even.pages >= Math.ceil(25 / PAYLOAD_ROWS), `${even.pages} pages of at most ${PAYLOAD_ROWS} payloads`);
    });

    test("a portal token of application A reads none of application B's rows, whatever it names", async () => {
      const a = await app('isolation-a');
      const b = await app('isolation-b');
      const epA = await endpoint(a.id, 'a');
      const epB = await endpoint(b.id, 'b');
      const since = ago();
      const mA = await publish(a.id, 'iso.event', { owner: 'A' });
      const mB = await publish(b.id, 'iso.event', { owner: 'B' });
      clock.advance(SECOND / 2);
      const atB = await attempt(b.id, mB.id, epB.id, 500);
      clock.advance(SECOND);
      const { token } = await api.svix.authentication.appPortalAccess(a.id, {});

      const inB = `/api/v1/app/${b.id}`;
      for (const path of [
        `${inB}/search/msg?after=${since}`,
        `${inB}/search/delivery?after=${since}`,
        `${inB}/endpoint/${epB.id}/undelivered?after=${since}`,
        `${inB}/search/attempt?after=${since}&endpoint_id=${epB.id}`,
      ]) {
        assert.equal((await get(path, token)).status, 404, path);
      }
      const inA = `/api/v1/app/${a.id}`;
      // B's endpoint named in A's searches is answered as an endpoint that does not exist: no existence oracle.
      const missing = `${epB.id.slice(0, -1)}${epB.id.endsWith('z') ? 'y' : 'z'}`;
      for (const named of [
        (ep: string) => `${inA}/search/delivery?after=${since}&endpoint_id=${ep}`,
        (ep: string) => `${inA}/endpoint/${ep}/undelivered?after=${since}`,
        (ep: string) => `${inA}/search/attempt?after=${since}&endpoint_id=${ep}`,
        (ep: string) => `${inA}/attempt/msg/${mA.id}?endpoint_id=${ep}`,
      ]) {
        const other = await api.request('GET', named(epB.id), { token });
        const none = await api.request('GET', named(missing), { token });
        assert.equal(other.status, 404, named(epB.id));
        assert.equal(none.status, 404, named(missing));
        assert.deepEqual(await other.json(), await none.json(), named(epB.id));
      }
      for (const path of [
        `${inA}/search/msg?after=${since}&payload_field=owner&payload_value=B`,
        `${inA}/search/delivery?after=${since}`,
        `${inA}/search/msg?after=${since}&with_content=true`,
      ]) {
        const res = await api.request('GET', path, { token });
        const text = await res.text();
        assert.equal(res.status, 200, `${path}: ${text}`);
        for (const mark of [mB.id, epB.id, atB, '"owner":"B"']) {
          assert.ok(!text.includes(mark) || path.includes(mark), `${path} shows B's ${mark}: ${text}`);
        }
      }
      const own = await all<Found>(`${inA}/search/delivery?after=${since}`, token);
      assert.deepEqual(
        own.items.map((f) => [f.msgId, f.endpointId]),
        [[mA.id, epA.id]],
        "A's own rows, same token",
      );
      // A's own deleted endpoint stays searchable by its id (its deliveries are canceled, not gone).
      await api.svix.endpoint.delete(a.id, epA.id);
      const gone = await all<Found>(`${inA}/search/delivery?after=${since}&endpoint_id=${epA.id}`, token);
      assert.deepEqual(
        gone.items.map((f) => f.msgId),
        [mA.id],
      );
    });
  });
}
