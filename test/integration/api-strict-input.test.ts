/**
 * Input that one reader would take one way and another reader another way is refused, and what the contract
 * allows is accepted in every form it allows: RFC 3339 instants in all their spellings; no duplicate or
 * prototype keys in a body; a field and its older name only with one value; integers in a query in plain
 * decimal; and a refusal by a setting names the setting. Runs on the PostgreSQL server (validation only).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freshServerDatabase } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

interface Issue {
  readonly loc: readonly (string | number)[];
  readonly msg: string;
}

/** The answer of a raw request: its status, code and 422 issues (empty for another detail). */
async function answer(
  res: Response,
): Promise<{ status: number; code: string; issues: readonly Issue[]; text: string }> {
  const text = await res.text();
  const body = JSON.parse(text) as { code?: string; detail?: unknown };
  return {
    status: res.status,
    code: body.code ?? '',
    issues: Array.isArray(body.detail) ? (body.detail as Issue[]) : [],
    text,
  };
}

describe('input with one meaning', () => {
  let api: ApiHarness;
  let appId: string;
  before(async () => {
    api = await startApi(freshServerDatabase);
    appId = (await api.svix.application.create({ name: 'strict' })).id;
  });
  after(async () => api?.close());

  const rows = async (table: string): Promise<number> =>
    (await api.database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

  test(
    'deliverAt accepts every RFC 3339 form (lower-case t and z, any fraction, -00:00, a leap second), and so do ' +
      'the instant filters of a list',
    async () => {
      for (const [given, stored] of [
        ['2020-01-01t10:00:00z', '2020-01-01T10:00:00.000Z'],
        ['2020-01-01T10:00:00.123456789Z', '2020-01-01T10:00:00.123Z'],
        ['2020-01-01T12:00:00+02:00', '2020-01-01T10:00:00.000Z'],
        ['2020-01-01T10:00:00-00:00', '2020-01-01T10:00:00.000Z'],
        ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
        ['2017-01-01t00:59:60.5+01:00', '2017-01-01T00:00:00.500Z'],
      ] as const) {
        const res = await api.request('POST', `/api/v1/app/${appId}/msg`, {
          body: JSON.stringify({ eventType: 'at.one', payload: {}, deliverAt: given }),
        });
        const body = (await res.json()) as { deliverAt: string };
        assert.equal(res.status, 202, given);
        assert.equal(body.deliverAt, stored, given);
      }
      for (const refused of [
        '2020-01-01T10:00Z',
        '2020-01-01 10:00:00Z',
        '2016-12-31T10:59:60Z',
        '2020-02-30T10:00:00Z',
        '2020-01-01T10:00:00+0200',
      ]) {
        const res = await answer(
          await api.request('POST', `/api/v1/app/${appId}/msg`, {
            body: JSON.stringify({ eventType: 'at.one', payload: {}, deliverAt: refused }),
          }),
        );
        assert.equal(res.status, 422, refused);
        assert.deepEqual(res.issues[0]?.loc, ['body', 'deliverAt'], refused);
      }
      const listed = await api.request(
        'GET',
        `/api/v1/app/${appId}/msg?before=2099-01-01t00:00:00z&after=1999-12-31t23:59:60z`,
      );
      assert.equal(listed.status, 200);
      assert.equal(((await listed.json()) as { data: unknown[] }).data.length, 6);
    },
  );

  test(
    'a duplicate JSON key or a __proto__ key anywhere in a body, payload included, is refused with 422 naming it ' +
      'instead of being dropped silently, and nothing is stored',
    async () => {
      const apps = await rows('applications');
      const messages = await rows('messages');
      for (const [path, body, loc] of [
        ['/api/v1/app', '{"name":"first","name":"second"}', ['body', 'name']],
        ['/api/v1/app', '{"name":"x","__proto__":{"uid":"shadow"}}', ['body', '__proto__']],
        ['/api/v1/app', '{"name":"x","metadata":{"k":"1","\\u006b":"2"}}', ['body', 'metadata', 'k']],
        [
          `/api/v1/app/${appId}/msg`,
          '{"eventType":"dup.one","payload":{"amount":1,"amount":1000}}',
          ['body', 'payload', 'amount'],
        ],
        [
          `/api/v1/app/${appId}/msg`,
          '{"eventType":"dup.one","payload":{"list":[{"__proto__":{"admin":true}}]}}',
          ['body', 'payload', 'list', 0, '__proto__'],
        ],
        [
          `/api/v1/app/${appId}/msg`,
          '{"eventType":"dup.one","payload":{"constructor":{"prototype":{"admin":true}}}}',
          ['body', 'payload', 'constructor'],
        ],
        [
          `/api/v1/app/${appId}/endpoint`,
          '{"url":"http://127.0.0.1:9/a","eventTypes":["a.b"],"eventTypes":null}',
          ['body', 'eventTypes'],
        ],
      ] as const) {
        const res = await answer(await api.request('POST', path, { body }));
        assert.equal(res.status, 422, body);
        assert.equal(res.code, 'validation', body);
        assert.deepEqual(res.issues[0]?.loc, loc, body);
      }
      assert.equal(await rows('applications'), apps, 'no application was stored');
      assert.equal(await rows('messages'), messages, 'no message was stored');
      const fine = await api.request('POST', `/api/v1/app/${appId}/msg`, {
        body: '{"eventType":"dup.one","payload":{"a":{"a":1},"b":"{\\"a\\":1,\\"a\\":2}"}}',
      });
      assert.equal(fine.status, 202, 'equal keys in different objects, and a string holding JSON text, are fine');
    },
  );

  test(
    'filterTypes beside eventTypes and rateLimit beside throttleRate are refused with 422 naming both when they ' +
      'differ, on every write; the same value under both names is accepted',
    async () => {
      const ep = await api.svix.endpoint.create(appId, { url: 'http://127.0.0.1:9/alias' });
      const writes: readonly (readonly [string, string, object, string, string])[] = [
        [
          'POST',
          `/api/v1/app/${appId}/endpoint`,
          { url: 'http://127.0.0.1:9/a', eventTypes: ['a.b'], filterTypes: ['c.d'] },
          'filterTypes',
          'eventTypes',
        ],
        [
          'PUT',
          `/api/v1/app/${appId}/endpoint/${ep.id}`,
          { url: 'http://127.0.0.1:9/a', throttleRate: 5, rateLimit: 6 },
          'rateLimit',
          'throttleRate',
        ],
        [
          'PATCH',
          `/api/v1/app/${appId}/endpoint/${ep.id}`,
          { eventTypes: null, filterTypes: ['c.d'] },
          'filterTypes',
          'eventTypes',
        ],
        ['POST', '/api/v1/app', { name: 'rates', throttleRate: 5, rateLimit: null }, 'rateLimit', 'throttleRate'],
        ['PATCH', `/api/v1/app/${appId}`, { throttleRate: 5, rateLimit: 6 }, 'rateLimit', 'throttleRate'],
        [
          'POST',
          '/api/v1/app/new-app/msg',
          { eventType: 'a.b', payload: {}, application: { name: 'n', uid: 'new-app', throttleRate: 1, rateLimit: 2 } },
          'rateLimit',
          'throttleRate',
        ],
      ];
      for (const [method, path, body, older, current] of writes) {
        const res = await answer(await api.request(method, path, { body: JSON.stringify(body) }));
        assert.equal(res.status, 422, `${method} ${path} ${JSON.stringify(body)}`);
        const issue = res.issues.find((i) => i.loc.at(-1) === older);
        assert.ok(issue !== undefined, `${method} ${path}: ${res.text}`);
        assert.match(issue.msg, new RegExp(`${older}.*${current}`));
      }
      assert.equal(
        (await api.svix.endpoint.get(appId, ep.id)).throttleRate,
        null,
        'the refused writes changed nothing',
      );
      const same = await api.request('POST', `/api/v1/app/${appId}/endpoint`, {
        body: JSON.stringify({
          url: 'http://127.0.0.1:9/b',
          eventTypes: ['a.b', 'c.d'],
          filterTypes: ['c.d', 'a.b'],
          throttleRate: 3,
          rateLimit: 3,
        }),
      });
      assert.equal(same.status, 201);
      assert.deepEqual(((await same.json()) as { eventTypes: string[] }).eventTypes, ['a.b', 'c.d']);
    },
  );

  test(
    'an integer in a query string is read only in plain decimal without leading zeros: limit=0x10, 1e1, +16, ' +
      '16.0, " 16" and 010 are refused with 422 naming the parameter',
    async () => {
      for (const query of [
        'limit=0x10',
        'limit=1e1',
        'limit=%2B16',
        'limit=16.0',
        'limit=%2016',
        'limit=0b10',
        'limit=',
        'limit=1&limit=2',
        'limit=010',
        'limit=00',
        'limit=0016',
      ]) {
        const res = await answer(await api.request('GET', `/api/v1/app?${query}`));
        assert.equal(res.status, 422, query);
        assert.deepEqual(res.issues[0]?.loc, ['query', 'limit'], query);
      }
      const ep = await api.svix.endpoint.create(appId, { url: 'http://127.0.0.1:9/q' });
      for (const path of [
        `/api/v1/app/${appId}/attempt/endpoint/${ep.id}?status=0x0`,
        `/api/v1/app/${appId}/attempt/endpoint/${ep.id}?status_code_class=2e2`,
        `/api/v1/app/${appId}/endpoint/${ep.id}/msg?status=1.0`,
        `/api/v1/app/${appId}/attempt/endpoint/${ep.id}?status=00`,
        `/api/v1/app/${appId}/attempt/endpoint/${ep.id}?status_code_class=0200`,
        `/api/v1/app/${appId}/endpoint/${ep.id}/msg?status=01`,
        `/api/v1/app/${appId}/msg?limit=05`,
        `/api/v1/app/${appId}/attempt/endpoint/${ep.id}?limit=010`,
      ]) {
        const res = await answer(await api.request('GET', path));
        assert.equal(res.status, 422, path);
        assert.match(res.issues[0]?.msg ?? '', /plain decimal digits, without leading zeros/, path);
      }
      const leading = await answer(await api.request('GET', '/api/v1/app?limit=016'));
      assert.deepEqual([leading.status, leading.issues[0]?.loc], [422, ['query', 'limit']], 'no leading zeros');
      assert.equal((await api.request('GET', '/api/v1/app?limit=16')).status, 200);
      for (const limit of ['99999999999999999999', '9'.repeat(400)]) {
        const huge = await answer(await api.request('GET', `/api/v1/app?limit=${limit}`));
        assert.deepEqual([huge.status, huge.issues[0]?.loc], [422, ['query', 'limit']]);
        assert.match(huge.issues[0]?.msg ?? '', /<=250/, 'digits too many for a number exceed the maximum');
      }
      assert.equal(
        (await api.request('GET', `/api/v1/app/${appId}/attempt/endpoint/${ep.id}?status=2&status_code_class=500`))
          .status,
        200,
      );
    },
  );

  test('a NUL character in a path parameter is 422 at that parameter, not at the body', async () => {
    for (const ref of ['..%00', 'ep%00x']) {
      const res = await answer(await api.request('GET', `/api/v1/app/${appId}/endpoint/${ref}`));
      assert.equal(res.status, 422, ref);
      assert.deepEqual(res.issues[0]?.loc, ['path', 'endpointId'], ref);
      assert.match(res.issues[0]?.msg ?? '', /NUL/);
    }
  });

  test(
    'a refusal by a setting names it: an endpoint URL refused by the egress policy names ' +
      'TIDINGS_EGRESS_ALLOWLIST (not its ranges), an unknown event type refused by TIDINGS_STRICT_EVENT_TYPES ' +
      'names that',
    async () => {
      for (const url of ['http://10.0.0.1/hook', 'http://[::ffff:192.168.1.1]/hook', 'http://[fd00::1]/hook']) {
        const res = await answer(
          await api.request('POST', `/api/v1/app/${appId}/endpoint`, { body: JSON.stringify({ url }) }),
        );
        assert.equal(res.code, 'url_not_allowed', url);
        assert.match(res.issues[0]?.msg ?? '', /TIDINGS_EGRESS_ALLOWLIST/, url);
        assert.doesNotMatch(res.text, /127\.0\.0\.1\/32/, "the operator's ranges are not shown");
      }
      const scheme = await answer(
        await api.request('POST', `/api/v1/app/${appId}/endpoint`, {
          body: JSON.stringify({ url: 'ftp://example.com/' }),
        }),
      );
      assert.doesNotMatch(
        scheme.issues[0]?.msg ?? '',
        /TIDINGS_EGRESS_ALLOWLIST/,
        'a refusal no setting can lift names none',
      );
      const strict = await startApi(freshServerDatabase, { TIDINGS_STRICT_EVENT_TYPES: 'true' });
      try {
        const res = await answer(
          await strict.request('POST', '/api/v1/app', { body: JSON.stringify({ name: 'strict' }) }),
        );
        const unknown = await answer(
          await strict.request('POST', `/api/v1/app/${JSON.parse(res.text).id}/endpoint`, {
            body: JSON.stringify({ url: 'http://127.0.0.1:9/s', eventTypes: ['nope.type'] }),
          }),
        );
        assert.equal(unknown.status, 422);
        assert.match(
          unknown.issues[0]?.msg ?? '',
          /TIDINGS_STRICT_EVENT_TYPES/,
          'a refusal by the strict event-type setting names it',
        );
      } finally {
        await strict.close();
      }
    },
  );
});
