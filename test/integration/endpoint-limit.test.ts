/**
 * TIDINGS_MAX_ENDPOINTS_PER_APP (PostgreSQL server, through the official client): one application holds at
 * most that many live endpoints, also under concurrent creation, so one publish fans out to at most that many
 * deliveries; the refusal names the limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException } from 'svix';
import { freshServerDatabase } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const CAP = 3;

describe('endpoints per application', () => {
  let api: ApiHarness;
  before(async () => {
    api = await startApi(freshServerDatabase, { TIDINGS_MAX_ENDPOINTS_PER_APP: String(CAP) });
  });
  after(async () => api?.close());

  test(
    'one endpoint past TIDINGS_MAX_ENDPOINTS_PER_APP is refused 409 endpoint_limit_reached naming the limit; ' +
      'deleting one makes room',
    async () => {
      const app = await api.svix.application.create({ name: 'capped' });
      const ids: string[] = [];
      for (let i = 0; i < CAP; i++)
        ids.push((await api.svix.endpoint.create(app.id, { url: `http://127.0.0.1:9/${i}` })).id);
      const error = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/over' }).then(
        () => assert.fail('created past the cap'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof ApiException);
      assert.equal(error.code, 409);
      assert.equal((error.body as { code: string }).code, 'endpoint_limit_reached');
      assert.match((error.body as { detail: string }).detail, /at most 3 \(TIDINGS_MAX_ENDPOINTS_PER_APP\)/);
      // The upsert path (PUT with a new uid) is the same creation.
      const put = await api.request('PUT', `/api/v1/app/${app.id}/endpoint/new-by-put`, {
        body: JSON.stringify({ url: 'http://127.0.0.1:9/put' }),
      });
      assert.equal(put.status, 409);
      await api.svix.endpoint.delete(app.id, ids[0]!);
      assert.match((await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/again' })).id, /^ep_/);
    },
  );

  test(
    'twenty concurrent creations in one application leave ' + 'exactly TIDINGS_MAX_ENDPOINTS_PER_APP endpoints',
    async () => {
      const app = await api.svix.application.create({ name: 'race' });
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => api.svix.endpoint.create(app.id, { url: `http://127.0.0.1:9/r${i}` })),
      );
      const created = results.filter((r) => r.status === 'fulfilled').length;
      const refused = results.filter(
        (r) => r.status === 'rejected' && r.reason instanceof ApiException && r.reason.code === 409,
      ).length;
      assert.equal(created, CAP);
      assert.equal(refused, 20 - CAP);
      const rows = await api.database.db.query<{ n: string }>(
        'SELECT count(*) AS n FROM endpoints WHERE app_id = $1 AND deleted_at IS NULL',
        [app.id],
      );
      assert.equal(Number(rows.rows[0]?.n), CAP);
    },
  );
});
