/**
 * Pagination (docs/adr/0003-svix-compatibility.md): 600 items of each list iterated in pages of 250 and of 7, in both
 * orders, nothing missed or doubled, on both engines — applications, endpoints, event types, messages, the destinations
 * of a message, the messages of an endpoint and dead letters. Through the svix client where its options carry
 * `order`, else by the same query parameters over HTTP. Applications, endpoints and event types are made
 * as rows (their create calls are covered by their own suites); messages are published through the API.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ordering } from 'svix';
import { ENGINES } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const N = 600;
const PAGE_SIZES = [250, 7] as const;
/** Requests in flight while the items are made. */
const PARALLEL = 10;

interface PageOf {
  readonly data: readonly unknown[];
  readonly iterator: string | null;
  readonly prevIterator?: string | null;
  readonly done: boolean;
}
type Fetch = (limit: number, order: 'ascending' | 'descending', iterator: string | null) => Promise<PageOf>;

/** Follows the iterators to the end; every page holds at most `limit` items. */
async function walk(
  fetchPage: Fetch,
  key: (item: unknown) => string,
  limit: number,
  order: 'ascending' | 'descending',
): Promise<string[]> {
  const out: string[] = [];
  let iterator: string | null = null;
  for (let pages = 0; pages < N; pages++) {
    const page = await fetchPage(limit, order, iterator);
    assert.ok(page.data.length <= limit, `a page of ${page.data.length} > ${limit}`);
    out.push(...page.data.map(key));
    if (page.done) return out;
    iterator = page.iterator;
  }
  assert.fail('the iterators never ended');
}

/** Checks one list: both page sizes, both orders, against the `expected` keys in the list's ascending order. */
async function checkList(
  name: string,
  fetchPage: Fetch,
  key: (item: unknown) => string,
  expected: readonly string[],
): Promise<void> {
  assert.equal(expected.length, N, `${name}: ${N} items made`);
  for (const limit of PAGE_SIZES) {
    const asc = await walk(fetchPage, key, limit, 'ascending');
    assert.deepEqual(asc, expected, `${name}: ascending, pages of ${limit}`);
    const desc = await walk(fetchPage, key, limit, 'descending');
    assert.deepEqual(desc, [...expected].reverse(), `${name}: descending, pages of ${limit}`);
  }
}

async function inParallel(n: number, make: (i: number) => Promise<string>): Promise<string[]> {
  const out: string[] = new Array<string>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await make(i);
      }
    }),
  );
  return out;
}

const byId = (item: unknown) => (item as { id: string }).id;
const sorted = (ids: readonly string[]) => [...ids].sort();

for (const engine of ENGINES) {
  describe(`pagination over ${N} items in pages of 250 and 7, both orders (${engine.name})`, () => {
    let api: ApiHarness;
    before(async () => {
      api = await startApi(engine.fresh);
    });
    after(async () => api?.close());

    const http = async (path: string): Promise<PageOf> => {
      const res = await api.request('GET', path);
      assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
      return (await res.json()) as PageOf;
    };
    const query = (limit: number, order: string, iterator: string | null) =>
      `limit=${limit}&order=${order}${iterator === null ? '' : `&iterator=${encodeURIComponent(iterator)}`}`;
    const ordering = (order: 'ascending' | 'descending') =>
      order === 'ascending' ? Ordering.Ascending : Ordering.Descending;

    test('applications, and walking back with prevIterator', async () => {
      const ids = await inParallel(N - 1, (i) => insertApp(api.database.db, `pg-${i}`));
      const fanApp = await api.svix.application.create({ name: 'fan', uid: 'fan' });
      const all = sorted([...ids, fanApp.id]);
      await checkList(
        'applications',
        (limit, order, iterator) => api.svix.application.list({ limit, order: ordering(order), iterator }),
        byId,
        all,
      );
      // Backwards from the end with prevIterator, pages of 7.
      let page = await api.svix.application.list({ limit: 7, order: Ordering.Ascending, iterator: all[N - 8]! });
      const back: string[] = [...page.data.map((a) => a.id)];
      while (page.prevIterator != null) {
        page = await api.svix.application.list({ limit: 7, order: Ordering.Ascending, iterator: page.prevIterator });
        if (page.data.length === 0) break;
        back.unshift(...page.data.map((a) => a.id));
      }
      assert.deepEqual(back, all);
    });

    test('endpoints, and the destinations of one message sent to all of them', async () => {
      const fan = await api.svix.application.get('fan');
      const ids = await inParallel(
        N,
        async (i) =>
          (await insertEndpoint(api.database.db, api.cipher, { appId: fan.id, url: `http://127.0.0.1:9/p${i}` })).id,
      );
      await checkList(
        'endpoints',
        (limit, order, iterator) => api.svix.endpoint.list('fan', { limit, order: ordering(order), iterator }),
        byId,
        sorted(ids),
      );
      const msg = await api.svix.message.create('fan', { eventType: 'pg.fan', payload: {} });
      await checkList(
        'destinations of a message',
        (limit, order, iterator) =>
          order === 'ascending'
            ? api.svix.messageAttempt.listAttemptedDestinations('fan', msg.id, { limit, iterator })
            : http(`/api/v1/app/fan/msg/${msg.id}/endpoint?${query(limit, order, iterator)}`),
        byId,
        sorted(ids),
      );
    });

    test('event types', async () => {
      const names = Array.from({ length: N }, (_, i) => `pg.type.${String(i).padStart(4, '0')}`);
      await api.database.db.query(`INSERT INTO event_types (name, description) SELECT unnest($1::text[]), 'x'`, [
        names,
      ]);
      await checkList(
        'event types',
        (limit, order, iterator) => api.svix.eventType.list({ limit, order: ordering(order), iterator }),
        (e) => (e as { name: string }).name,
        sorted(names),
      );
    });

    test('messages, the messages of an endpoint, and its dead letters', async () => {
      const app = await api.svix.application.create({ name: 'msgs', uid: 'msgs' });
      const ep = await api.svix.endpoint.create('msgs', { url: 'http://127.0.0.1:9/m', uid: 'msgs-ep' });
      const ids = await inParallel(
        N,
        async (i) => (await api.svix.message.create(app.id, { eventType: 'pg.msg', payload: { i } })).id,
      );
      const all = sorted(ids);
      await checkList(
        'messages',
        (limit, order, iterator) =>
          order === 'descending'
            ? api.svix.message.list('msgs', { limit, iterator })
            : http(`/api/v1/app/msgs/msg?${query(limit, order, iterator)}`),
        byId,
        all,
      );
      await checkList(
        'messages of an endpoint',
        (limit, order, iterator) =>
          order === 'descending'
            ? api.svix.messageAttempt.listAttemptedMessages('msgs', 'msgs-ep', { limit, iterator })
            : http(`/api/v1/app/msgs/endpoint/msgs-ep/msg?${query(limit, order, iterator)}`),
        byId,
        all,
      );
      await api.database.db.query(
        `UPDATE deliveries SET state = 'dead', dead_reason = 'exhausted' WHERE endpoint_id = $1`,
        [ep.id],
      );
      // Dead letters are ordered by delivery (the order they were made), not by message id.
      const byDelivery = (
        await api.database.db.query<{ message_id: string }>(
          'SELECT message_id FROM deliveries WHERE endpoint_id = $1 ORDER BY id',
          [ep.id],
        )
      ).rows.map((r) => r.message_id);
      assert.deepEqual(sorted(byDelivery), all);
      await checkList(
        'dead letters',
        (limit, order, iterator) =>
          http(`/api/v1/app/msgs/endpoint/msgs-ep/dead-letter?${query(limit, order, iterator)}`),
        (d) => (d as { msgId: string }).msgId,
        byDelivery,
      );
    });
  });
}
