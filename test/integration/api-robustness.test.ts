/** Hostile request bodies get a coded 4xx, never a 500 (review findings). Runs on the PostgreSQL server. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { freshServerDatabase } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

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
    const answer = (await res.json()) as { code: string; detail: { loc: string[] }[] };
    assert.equal(answer.code, 'validation');
    assert.deepEqual(answer.detail[0]!.loc, ['body', 'payload']);
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
