/** Hostile request bodies get a coded 4xx, never a 500 (review findings). Runs on the PostgreSQL server. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { freshServerDatabase } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

let api: ApiHarness;
before(async () => {
  api = await startApi(freshServerDatabase);
});
after(async () => {
  await api?.close();
});

test(
  'a payload nested thousands of levels deep is refused with 422 ' + 'naming the payload, and nothing is stored',
  async () => {
    const app = await api.svix.application.create({ name: 'deep' });
    const depth = 20_000;
    const body = `{"eventType":"deep","payload":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const res = await api.request('POST', `/api/v1/app/${app.id}/msg`, { body });
    assert.equal(res.status, 422);
    const answer = (await res.json()) as { code: string; detail: { loc: (string | number)[]; msg: string }[] };
    assert.equal(answer.code, 'validation');
    // The first array past TIDINGS_MAX_JSON_DEPTH (128; the body is level 1): the payload's, 127 arrays in.
    assert.deepEqual(answer.detail[0]!.loc, ['body', 'payload', ...Array.from({ length: 127 }, () => 0)]);
    assert.match(answer.detail[0]!.msg, /deeper than 128 levels .*TIDINGS_MAX_JSON_DEPTH/);
    assert.equal(
      (await api.database.db.query('SELECT count(*)::int AS n FROM messages WHERE app_id = $1', [app.id])).rows[0]!.n,
      0,
    );
  },
);

test('a malformed JSON body is a 400 that quotes nothing of the body', async () => {
  const res = await api.request('POST', '/api/v1/app', {
    body: '{"name": "x", "secret": whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  });
  assert.equal(res.status, 400);
  const text = await res.text();
  assert.doesNotMatch(text, /whsec_/);
});

test('TIDINGS_MAX_JSON_DEPTH: a body at the limit is accepted byte for byte, one level deeper is refused', async () => {
  const app = await api.svix.application.create({ name: 'depth-limit' });
  // The body is level 1, the payload object level 2, its arrays levels 3 to 128.
  const at = `{"d":${'['.repeat(126)}${']'.repeat(126)}}`;
  const ok = await api.request('POST', `/api/v1/app/${app.id}/msg?with_content=true`, {
    body: `{"eventType":"deep","payload":${at}}`,
  });
  assert.equal(ok.status, 202);
  assert.ok((await ok.text()).endsWith(`"payload":${at}}`));
  const over = `{"d":${'['.repeat(127)}${']'.repeat(127)}}`;
  const err = await errorOf(
    await api.request('POST', `/api/v1/app/${app.id}/msg`, { body: `{"eventType":"deep","payload":${over}}` }),
  );
  const detail = err.detail as { loc: (string | number)[]; type: string }[];
  assert.deepEqual([err.status, detail[0]!.loc.length, detail[0]!.type], [422, 129, 'value_error.too_deep']);
  // Any body, any route: an application's metadata nested 20,000 deep is refused before a model sees it.
  const meta = `{"name":"m","metadata":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`;
  const refused = await errorOf(await api.request('POST', '/api/v1/app', { body: meta }));
  assert.deepEqual(
    [refused.status, (refused.detail as { loc: string[] }[])[0]!.loc.slice(0, 3)],
    [422, ['body', 'metadata', 'a']],
  );
});

test('payloads nested 50,000 deep stored before the limit: payload field searches and filters skip them', async () => {
  // As before TIDINGS_MAX_JSON_DEPTH existed (or with it raised): such payloads are in the delivery log.
  const open = await startApi(freshServerDatabase, {
    TIDINGS_MAX_JSON_DEPTH: '1000000',
    TIDINGS_MAX_BODY_BYTES: String(1024 * 1024),
  });
  try {
    const app = await open.svix.application.create({ name: 'stored-deep' });
    const ep = await open.svix.endpoint.create(app.id, { url: 'https://hooks.example/deep' });
    const put = await open.request('PUT', `/api/v1/app/${app.id}/endpoint/${ep.id}/filter`, {
      body: '{"filter":{"payload":{"amount":200}}}',
    });
    assert.equal(put.status, 200);
    const after = new Date(Date.now() - 60_000).toISOString();
    const deep = `{"a":${'['.repeat(50_000)}${']'.repeat(50_000)},"amount":200}`;
    const published: string[] = [];
    for (const payload of [deep, '{"amount":200}', `{"amount":${'{"x":'.repeat(50_000)}1${'}'.repeat(50_000)}}`]) {
      const res = await open.request('POST', `/api/v1/app/${app.id}/msg`, {
        body: `{"eventType":"x","payload":${payload}}`,
      });
      assert.equal(res.status, 202, await res.clone().text());
      published.push(((await res.json()) as { id: string }).id);
    }
    const inApp = `/api/v1/app/${app.id}`;
    for (const kind of ['msg', 'delivery']) {
      const res = await open.request(
        'GET',
        `${inApp}/search/${kind}?after=${after}&payload_field=amount&payload_value=200`,
      );
      const text = await res.text();
      assert.equal(res.status, 200, text);
      const ids = (JSON.parse(text) as { data: { id?: string; msgId?: string }[] }).data.map((d) => d.msgId ?? d.id);
      assert.deepEqual(ids.sort(), published.slice(0, 2).sort(), kind);
    }
    // The filter read the deep payload at publish: the first two matched it, the third (amount an object) did not.
    const filtered = await open.request('GET', `${inApp}/msg/${published[2]}/filtered-endpoint`);
    assert.equal(filtered.status, 200);
    assert.match(await filtered.text(), new RegExp(ep.id));
    const read = await open.request('GET', `${inApp}/msg/${published[0]}`);
    assert.equal(read.status, 200);
  } finally {
    await open.close();
  }
});
