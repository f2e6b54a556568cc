import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, Ordering, type ApplicationOut } from 'svix';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, TEST_MAX_BODY_BYTES, type ApiHarness } from './api-harness.ts';

for (const engine of ENGINES) {
  describe(`applications API through the svix client (${engine.name})`, () => {
    let api: ApiHarness;
    before(async () => {
      api = await startApi(engine.fresh);
    });
    after(async () => api?.close());

    test(
      'health answers 204 without a token, readiness and liveness ' + 'answer 200, metrics are Prometheus text',
      async () => {
        await api.svix.health.get();
        const health = await api.request('GET', '/api/v1/health', { token: null });
        assert.equal(health.status, 204);
        assert.equal((await api.request('GET', '/livez', { token: null })).status, 200);
        const ready = await api.request('GET', '/readyz', { token: null });
        assert.equal(ready.status, 200);
        assert.deepEqual(await ready.json(), { status: 'ready' });
        const metrics = await api.request('GET', '/metrics', { token: null });
        assert.equal(metrics.status, 200);
        assert.match(await metrics.text(), /tidings_messages_published_total/);
      },
    );

    test('the OpenAPI document is served and names the Svix routes', async () => {
      const res = await api.request('GET', '/api/v1/openapi.json', { token: null });
      assert.equal(res.status, 200);
      const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
      assert.match(doc.openapi, /^3\./);
      for (const path of [
        '/api/v1/app',
        '/api/v1/app/{appId}',
        '/api/v1/app/{appId}/endpoint/{endpointId}/secret',
        '/api/v1/app/{appId}/msg',
        '/api/v1/app/{appId}/attempt/msg/{msgId}',
        '/api/v1/app/{appId}/msg/{msgId}/endpoint/{endpointId}/timeline',
      ]) {
        assert.ok(path in doc.paths, `${path} is in the OpenAPI document`);
      }
    });

    test('create, get by id and by uid, update, patch and delete an application', async () => {
      const created = await api.svix.application.create({
        name: 'Acme',
        uid: 'acme-1',
        throttleRate: 7,
        metadata: { plan: 'gold' },
      });
      assert.match(created.id, /^app_[0-9A-Z]{26}$/);
      assert.equal(created.name, 'Acme');
      assert.equal(created.uid, 'acme-1');
      assert.equal(created.throttleRate, 7);
      assert.deepEqual(created.metadata, { plan: 'gold' });
      assert.ok(created.createdAt instanceof Date && !Number.isNaN(created.createdAt.valueOf()));

      assert.deepEqual(await api.svix.application.get(created.id), created);
      assert.deepEqual(await api.svix.application.get('acme-1'), created);

      const updated = await api.svix.application.upsert('acme-1', { name: 'Acme Inc', metadata: { plan: 'silver' } });
      assert.equal(updated.id, created.id);
      assert.equal(updated.name, 'Acme Inc');
      assert.equal(updated.uid, 'acme-1', 'a PUT without uid keeps it');
      assert.equal(updated.throttleRate, null);
      assert.deepEqual(updated.metadata, { plan: 'silver' });

      const patched = await api.svix.application.patch(created.id, { throttleRate: 3 });
      assert.equal(patched.name, 'Acme Inc');
      assert.equal(patched.throttleRate, 3);
      assert.deepEqual(patched.metadata, { plan: 'silver' });

      const renamed = await api.svix.application.patch('acme-1', { uid: 'acme-2' });
      assert.equal(renamed.uid, 'acme-2');
      assert.equal((await api.svix.application.get('acme-2')).id, created.id);

      await api.svix.application.delete('acme-2');
      await assert.rejects(
        api.svix.application.get(created.id),
        (e: ApiException<{ code: string }>) => e.code === 404 && e.body.code === 'not_found',
      );
    });

    test('PUT on an unknown uid creates the application (201); on an unknown app_ id it is 404', async () => {
      const created = await api.svix.application.upsert('made-by-put', { name: 'Put' });
      assert.equal(created.uid, 'made-by-put');
      assert.equal((await api.svix.application.get('made-by-put')).id, created.id);
      const res = await api.request('PUT', '/api/v1/app/app_00000000000000000000000000', {
        body: JSON.stringify({ name: 'x' }),
      });
      assert.equal(res.status, 404);
    });

    test('getOrCreate returns the existing application for a taken uid, create answers 409', async () => {
      const first = await api.svix.application.getOrCreate({ name: 'Goc', uid: 'goc' });
      const again = await api.svix.application.getOrCreate({ name: 'Other name', uid: 'goc' });
      assert.equal(again.id, first.id);
      assert.equal(again.name, 'Goc');
      const raw = await api.request('POST', '/api/v1/app?get_or_create=true', {
        body: JSON.stringify({ name: 'x', uid: 'goc' }),
      });
      assert.equal(raw.status, 200);
      assert.equal(((await raw.json()) as ApplicationOut).id, first.id);
      const conflict = await api.request('POST', '/api/v1/app', { body: JSON.stringify({ name: 'x', uid: 'goc' }) });
      assert.deepEqual(await errorOf(conflict), {
        status: 409,
        code: 'conflict',
        detail: 'An application with this uid already exists',
      });
    });

    test(
      'pagination visits 120 applications once each, in pages of ' + '50 and of 7, in both orders and backwards',
      async () => {
        const ids = new Set<string>();
        for (let i = 0; i < 120; i += 20) {
          const batch = await Promise.all(
            Array.from({ length: 20 }, (_, j) => api.svix.application.create({ name: `page-${i + j}` })),
          );
          for (const a of batch) ids.add(a.id);
        }
        const all = [...(await listAll(api, 250, Ordering.Ascending))];
        const expected = all.filter((id) => ids.has(id));
        assert.equal(expected.length, 120);
        assert.deepEqual(expected, [...expected].sort(), 'ascending is id order');
        for (const limit of [50, 7]) {
          const asc = await listAll(api, limit, Ordering.Ascending);
          assert.deepEqual(asc, all, `ascending, pages of ${limit}`);
          const desc = await listAll(api, limit, Ordering.Descending);
          assert.deepEqual(desc, [...all].reverse(), `descending, pages of ${limit}`);
        }
        // From the last page back to the first with prevIterator.
        const back: string[] = [];
        let page = await api.svix.application.list({ limit: 7, order: Ordering.Descending });
        let last = page;
        while (!last.done)
          last = await api.svix.application.list({ limit: 7, order: Ordering.Descending, iterator: last.iterator });
        let iterator = last.prevIterator ?? null;
        back.unshift(...last.data.map((a) => a.id));
        for (;;) {
          page = await api.svix.application.list({ limit: 7, order: Ordering.Descending, iterator });
          back.unshift(...page.data.map((a) => a.id));
          if (page.done) break;
          iterator = page.prevIterator ?? null;
        }
        assert.deepEqual(back, [...all].reverse(), 'prevIterator walks back over every page');
      },
    );

    test('a request without a token, with a malformed header or with an unknown token is 401', async () => {
      assert.deepEqual(await errorOf(await api.request('GET', '/api/v1/app', { token: null })), {
        status: 401,
        code: 'authentication_failed',
        detail: 'Missing or malformed "Authorization: Bearer <token>" header',
      });
      const malformed = await fetch(`${api.url}/api/v1/app`, { headers: { authorization: 'Basic abc' } });
      assert.equal(malformed.status, 401);
      assert.equal(malformed.headers.get('www-authenticate'), 'Bearer');
      assert.deepEqual(
        await errorOf(await api.request('GET', '/api/v1/app', { token: 'tidings_unknown_token_value' })),
        { status: 401, code: 'authentication_failed', detail: 'Unknown or revoked token' },
      );
    });

    test('validation failures are 422 with the failing fields in loc, and change nothing', async () => {
      const before = (await api.svix.application.list({ limit: 250 })).data.length;
      const res = await api.request('POST', '/api/v1/app', {
        body: JSON.stringify({ uid: 'bad uid!', metadata: { a: 1 } }),
      });
      const err = await errorOf(res);
      assert.equal(err.status, 422);
      assert.equal(err.code, 'validation');
      const locs = (err.detail as { loc: (string | number)[]; msg: string; type: string }[]).map((d) =>
        d.loc.join('.'),
      );
      assert.ok(locs.includes('body.name'), `name is reported: ${locs.join(', ')}`);
      assert.ok(locs.includes('body.uid'), `uid is reported: ${locs.join(', ')}`);
      assert.ok(locs.includes('body.metadata.a'), `metadata.a is reported: ${locs.join(', ')}`);
      const query = await errorOf(await api.request('GET', '/api/v1/app?limit=251'));
      assert.equal(query.status, 422);
      assert.deepEqual((query.detail as { loc: unknown[] }[])[0]?.loc, ['query', 'limit']);
      const iterator = await errorOf(await api.request('GET', '/api/v1/app?iterator=ep_123'));
      assert.deepEqual((iterator.detail as { loc: unknown[] }[])[0]?.loc, ['query', 'iterator']);
      const idShaped = await errorOf(
        await api.request('POST', '/api/v1/app', {
          body: JSON.stringify({ name: 'x', uid: 'app_01ARZ3NDEKTSV4RRFFQ69G5FAV' }),
        }),
      );
      assert.equal(idShaped.status, 422);
      assert.equal((await api.svix.application.list({ limit: 250 })).data.length, before);
      await assert.rejects(
        api.svix.application.create({ name: '' }),
        (e: ApiException<{ code: string }>) => e.code === 422 && e.body.code === 'validation',
      );
    });

    test(
      'malformed JSON is 400, a non-JSON content type is 415, an ' + 'oversized body is 413, an unknown route is 404',
      async () => {
        assert.deepEqual(
          (await errorOf(await api.request('POST', '/api/v1/app', { body: '{"name": "x",' }))).code,
          'bad_request',
        );
        assert.equal((await api.request('POST', '/api/v1/app', { body: '{"name": "x",' })).status, 400);
        const text = await api.request('POST', '/api/v1/app', {
          body: 'name=x',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        assert.deepEqual(
          { status: text.status, code: (await errorOf(text)).code },
          { status: 415, code: 'unsupported_media_type' },
        );
        const big = JSON.stringify({ name: 'x', metadata: { big: 'y'.repeat(TEST_MAX_BODY_BYTES) } });
        const large = await api.request('POST', '/api/v1/app', { body: big });
        assert.deepEqual(
          { status: large.status, code: (await errorOf(large)).code },
          { status: 413, code: 'payload_too_large' },
        );
        const missing = await api.request('GET', '/api/v1/nothing-here');
        assert.deepEqual(
          { status: missing.status, code: (await errorOf(missing)).code },
          { status: 404, code: 'not_found' },
        );
        const unknownApp = await api.request('GET', '/api/v1/app/no-such-app');
        assert.deepEqual(await errorOf(unknownApp), {
          status: 404,
          code: 'not_found',
          detail: 'Application not found',
        });
      },
    );

    test(
      'an application-scoped key sees only its application: others are 404 like missing ones, listing and ' +
        'creating are 403',
      async () => {
        const mine = await api.svix.application.create({ name: 'mine', uid: 'scoped-mine' });
        const theirs = await api.svix.application.create({ name: 'theirs', uid: 'scoped-theirs' });
        const token = await api.appKey(mine.id);
        assert.equal((await api.request('GET', `/api/v1/app/${mine.id}`, { token })).status, 200);
        for (const ref of [theirs.id, 'scoped-theirs', 'app_00000000000000000000000000']) {
          const res = await api.request('GET', `/api/v1/app/${ref}`, { token });
          assert.deepEqual(await errorOf(res), { status: 404, code: 'not_found', detail: 'Application not found' });
        }
        assert.equal((await api.request('GET', '/api/v1/app', { token })).status, 403);
        assert.equal(
          (await api.request('POST', '/api/v1/app', { token, body: JSON.stringify({ name: 'x' }) })).status,
          403,
        );
      },
    );

    test('every answer carries a request id; a caller-chosen one is echoed', async () => {
      const res = await api.request('GET', '/api/v1/app?limit=1', { headers: { 'x-request-id': 'trace-123' } });
      assert.equal(res.headers.get('x-request-id'), 'trace-123');
      const generated = await api.request('GET', '/api/v1/app?limit=1');
      assert.match(generated.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{16}$/);
    });
  });
}

/** Every application id, following iterators to the end. */
async function listAll(api: ApiHarness, limit: number, order: Ordering): Promise<string[]> {
  const out: string[] = [];
  let iterator: string | null = null;
  for (;;) {
    const page = await api.svix.application.list({ limit, order, iterator });
    assert.ok(page.data.length <= limit);
    out.push(...page.data.map((a) => a.id));
    if (page.done) return out;
    iterator = page.iterator;
  }
}
