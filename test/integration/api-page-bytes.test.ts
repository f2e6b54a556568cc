/**
 * A list answer is bounded in bytes (TIDINGS_MAX_PAGE_BYTES): a page ends early, with an iterator that the
 * official client follows to the rest, and payloads past the budget are not even read from the database;
 * content (payloads, response bodies, schemas) is in a list only when asked (`with_content`). Runs on both
 * engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPgMessageQueryStore } from '../../src/adapters/postgres/message/message-query-store.ts';
import { ENGINES } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const PAGE_BYTES = 64 * 1024;
const PAYLOAD_CHARS = 20_000;
const MESSAGES = 12;

interface ListAnswer {
  readonly data: { id: string; payload?: unknown; response?: string; schemas?: unknown }[];
  readonly iterator: string | null;
  readonly prevIterator: string | null;
  readonly done: boolean;
}

for (const engine of ENGINES) {
  describe(`list answers bounded in bytes (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    const published: string[] = [];
    before(async () => {
      api = await startApi(engine.fresh, {
        TIDINGS_MAX_PAGE_BYTES: String(PAGE_BYTES),
        TIDINGS_MAX_BODY_BYTES: String(256 * 1024),
      });
      appId = (await api.svix.application.create({ name: 'pages' })).id;
      for (let i = 0; i < MESSAGES; i++) {
        const res = await api.request('POST', `/api/v1/app/${appId}/msg`, {
          body: JSON.stringify({ eventType: 'page.one', payload: { i, pad: String(i % 10).repeat(PAYLOAD_CHARS) } }),
        });
        published.push(((await res.json()) as { id: string }).id);
      }
    });
    after(async () => api?.close());

    const list = async (query: string): Promise<{ answer: ListAnswer; bytes: number }> => {
      const res = await api.request('GET', `/api/v1/app/${appId}/msg?${query}`);
      const text = await res.text();
      assert.equal(res.status, 200, text.slice(0, 300));
      return { answer: JSON.parse(text) as ListAnswer, bytes: Buffer.byteLength(text) };
    };

    test(
      'a page of messages with content (limit=250) ends at TIDINGS_MAX_PAGE_BYTES with an iterator, and the ' +
        'official client walks every message once, in order, forward and back',
      async () => {
        const first = await list('limit=250&with_content=true');
        assert.ok(
          first.answer.data.length >= 1 && first.answer.data.length < MESSAGES,
          `${first.answer.data.length} messages on the first page`,
        );
        assert.ok(first.bytes <= PAGE_BYTES + PAYLOAD_CHARS + 1024, `${first.bytes} bytes`);
        assert.equal(first.answer.done, false);
        assert.equal(
          first.answer.iterator,
          first.answer.data.at(-1)?.id,
          'the iterator continues after the last message shown',
        );
        for (const m of first.answer.data)
          assert.equal((m.payload as { pad: string }).pad.length, PAYLOAD_CHARS, 'payloads whole');

        const seen: string[] = [];
        let iterator: string | null = null;
        for (let pages = 0; pages < 50; pages++) {
          const page = await api.svix.message.list(appId, {
            limit: 250,
            withContent: true,
            ...(iterator === null ? {} : { iterator }),
          });
          seen.push(...page.data.map((m) => m.id));
          for (const m of page.data) assert.equal((m.payload as { pad: string }).pad.length, PAYLOAD_CHARS);
          if (page.done) break;
          iterator = page.iterator ?? null;
        }
        assert.deepEqual(seen, [...published].reverse(), 'every message once, newest first');

        // Backward from the oldest: the pages before it, each within the budget, end at the newest.
        const back: string[] = [];
        let prev: string | null = `-${published[0]}`;
        for (let pages = 0; pages < 50 && prev !== null; pages++) {
          const { answer, bytes } = await list(`limit=250&with_content=true&iterator=${prev}`);
          assert.ok(bytes <= PAGE_BYTES + PAYLOAD_CHARS + 1024, `${bytes} bytes`);
          back.unshift(...answer.data.map((m) => m.id));
          if (answer.done) break;
          prev = answer.prevIterator;
        }
        assert.deepEqual(back, [...published].slice(1).reverse(), 'every later message once, going back');
      },
    );

    test(
      'payloads past the page budget are not read: the store returns the payloads of a prefix whose earlier ' +
        'bytes stay under the budget',
      async () => {
        const store = createPgMessageQueryStore(api.database.db, api.cipher);
        const all = await store.readPayloads(appId, published, 10 ** 9);
        assert.deepEqual(
          all.map((r) => r.id),
          published,
        );
        const cut = await store.readPayloads(appId, published, 3 * PAYLOAD_CHARS);
        assert.ok(cut.length >= 3 && cut.length <= 4, `${cut.length} read`);
        assert.deepEqual(
          cut.map((r) => r.id),
          published.slice(0, cut.length),
          'a prefix, in the order asked',
        );
        assert.deepEqual(JSON.parse(Buffer.from(cut[0]!.payload!).toString()).i, 0);
        assert.equal((await store.readPayloads(appId, published, 1)).length, 1, 'the first is always read');
      },
    );

    test(
      'without with_content a list carries no payloads, response bodies or schemas; one message still shows its ' +
        'payload',
      async () => {
        const { answer, bytes } = await list('limit=250');
        assert.equal(answer.data.length, MESSAGES, 'heads only: every message fits');
        assert.ok(answer.data.every((m) => JSON.stringify(m.payload) === '{}'));
        assert.ok(bytes < 16 * 1024, `${bytes} bytes`);
        const ep = await api.svix.endpoint.create(appId, { url: 'http://127.0.0.1:9/none' });
        const listed = await api.request('GET', `/api/v1/app/${appId}/endpoint/${ep.id}/msg`);
        assert.equal(listed.status, 200);
        await api.svix.eventType.create({ name: 'with.schema', description: 'd', schemas: { 1: { type: 'object' } } });
        const types = (await (await api.request('GET', '/api/v1/event-type')).json()) as ListAnswer;
        assert.ok(
          types.data.every((t) => t.schemas === null),
          'schemas only when asked',
        );
        const asked = (await (await api.request('GET', '/api/v1/event-type?with_content=true')).json()) as ListAnswer;
        assert.deepEqual(asked.data.find((t) => (t as unknown as { name: string }).name === 'with.schema')?.schemas, {
          1: { type: 'object' },
        });
        const one = (await (await api.request('GET', `/api/v1/app/${appId}/msg/${published[0]}`)).json()) as {
          payload: { i: number };
        };
        assert.equal(one.payload.i, 0);
      },
    );

    test(
      'a page of endpoints with large metadata ends at ' + 'TIDINGS_MAX_PAGE_BYTES too, and the client walks them all',
      async () => {
        const other = (await api.svix.application.create({ name: 'big endpoints' })).id;
        const ids: string[] = [];
        for (let i = 0; i < 6; i++)
          ids.push(
            (
              await api.svix.endpoint.create(other, {
                url: `http://127.0.0.1:9/${i}`,
                metadata: { pad: 'm'.repeat(PAYLOAD_CHARS) },
              })
            ).id,
          );
        const res = await api.request('GET', `/api/v1/app/${other}/endpoint?limit=250`);
        const text = await res.text();
        const page = JSON.parse(text) as ListAnswer;
        assert.ok(page.data.length < 6 && !page.done, `${page.data.length} endpoints, done ${page.done}`);
        assert.ok(Buffer.byteLength(text) <= PAGE_BYTES + PAYLOAD_CHARS + 1024);
        const seen: string[] = [];
        let iterator: string | null = null;
        for (let pages = 0; pages < 20; pages++) {
          const p = await api.svix.endpoint.list(other, { limit: 250, ...(iterator === null ? {} : { iterator }) });
          seen.push(...p.data.map((e) => e.id));
          if (p.done) break;
          iterator = p.iterator ?? null;
        }
        assert.deepEqual(seen, ids);
      },
    );
  });
}
