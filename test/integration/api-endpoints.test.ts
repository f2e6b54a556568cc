import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, Ordering } from 'svix';
import { Webhook } from 'standardwebhooks';
import { decodeSecret } from '../../src/domain/signing.ts';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

const RECEIVER = 'http://127.0.0.1:9/hook';

interface TimelineBody {
  deliveryState: string;
  data: { state: string; reason: string | null }[];
}

for (const engine of ENGINES) {
  describe(`endpoints API through the svix client (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    before(async () => {
      api = await startApi(engine.fresh);
      appId = (await api.svix.application.create({ name: 'endpoints', uid: 'ep-app' })).id;
    });
    after(async () => api?.close());

    test('create with a generated secret; get, get by uid, get secret; the secret is stored encrypted', async () => {
      const ep = await api.svix.endpoint.create('ep-app', {
        url: RECEIVER,
        description: 'orders',
        uid: 'orders',
        eventTypes: ['order.created', 'order.paid'],
        channels: ['eu'],
        metadata: { team: 'billing' },
        headers: { 'X-Custom': 'yes' },
        throttleRate: 10,
      });
      assert.match(ep.id, /^ep_[0-9A-Z]{26}$/);
      assert.equal(ep.url, RECEIVER);
      assert.equal(ep.description, 'orders');
      assert.equal(ep.uid, 'orders');
      assert.deepEqual(ep.eventTypes, ['order.created', 'order.paid']);
      assert.deepEqual(ep.channels, ['eu']);
      assert.equal(ep.disabled, false);
      assert.equal(ep.throttleRate, 10);
      assert.deepEqual(ep.metadata, { team: 'billing' });
      assert.deepEqual(await api.svix.endpoint.get(appId, ep.id), ep);
      assert.deepEqual(await api.svix.endpoint.get('ep-app', 'orders'), ep);

      const raw = (await (await api.request('GET', `/api/v1/app/${appId}/endpoint/orders`)).json()) as Record<
        string,
        unknown
      >;
      assert.deepEqual(raw.headers, { 'x-custom': 'yes' });
      assert.deepEqual(raw.filterTypes, ['order.created', 'order.paid']);
      assert.equal(raw.version, 1);
      assert.equal('secret' in raw, false, 'the endpoint body never carries the secret');

      const { key } = await api.svix.endpoint.getSecret('ep-app', 'orders');
      assert.match(key, /^whsec_[A-Za-z0-9+/]{32}$/);
      assert.equal(decodeSecret(key).length, 24);
      // The secret signs as the public verifier expects.
      const wh = new Webhook(key);
      const body = '{"a":1}';
      // One instant for the signature and its header: read twice, the clock could cross a second between them.
      const at = new Date();
      const sig = wh.sign('msg_x', at, body);
      assert.doesNotThrow(() =>
        wh.verify(body, {
          'webhook-id': 'msg_x',
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': sig,
        }),
      );

      const row = await api.database.db.query<{ secret: Buffer; secret_key_id: string }>(
        'SELECT secret, secret_key_id FROM endpoints WHERE id = $1',
        [ep.id],
      );
      assert.equal(row.rows[0]!.secret_key_id, 'test1');
      assert.equal(row.rows[0]!.secret.includes(Buffer.from(key.slice(6))), false, 'no plaintext secret in the row');
      assert.equal(api.cipher.decrypt('test1', row.rows[0]!.secret, ep.id).toString('utf8'), key);
    });

    test('a given secret is kept (with or without whsec_); an invalid one is 422 on body.secret', async () => {
      const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
      const a = await api.svix.endpoint.create(appId, { url: RECEIVER, secret });
      assert.equal((await api.svix.endpoint.getSecret(appId, a.id)).key, secret);
      const b = await api.svix.endpoint.create(appId, {
        url: RECEIVER,
        secret: Buffer.alloc(24, 3).toString('base64'),
      });
      assert.equal(
        (await api.svix.endpoint.getSecret(appId, b.id)).key,
        'whsec_' + Buffer.alloc(24, 3).toString('base64'),
      );
      for (const bad of ['whsec_short', 'whsec_' + Buffer.alloc(8).toString('base64'), 'whsec_not*base64!!']) {
        const err = await errorOf(
          await api.request('POST', `/api/v1/app/${appId}/endpoint`, {
            body: JSON.stringify({ url: RECEIVER, secret: bad }),
          }),
        );
        assert.equal(err.status, 422);
        assert.deepEqual((err.detail as { loc: unknown[] }[])[0]?.loc, ['body', 'secret']);
      }
    });

    test('URLs refused by the egress policy are 422 url_not_allowed', async () => {
      for (const url of [
        'http://10.0.0.1/hook',
        'ftp://example.com/x',
        'http://user:pw@example.com/',
        'not a url',
        'http://169.254.169.254/latest',
      ]) {
        const err = await errorOf(
          await api.request('POST', `/api/v1/app/${appId}/endpoint`, { body: JSON.stringify({ url }) }),
        );
        assert.equal(err.status, 422, url);
        assert.equal(err.code, 'url_not_allowed', url);
      }
      const ep = await api.svix.endpoint.create(appId, { url: RECEIVER });
      await assert.rejects(
        api.svix.endpoint.patch(appId, ep.id, { url: 'http://192.168.1.1/' }),
        (e: ApiException<{ code: string }>) => e.code === 422 && e.body.code === 'url_not_allowed',
      );
    });

    test('reserved or malformed custom headers are 422 naming the header', async () => {
      for (const [name, value] of [
        ['webhook-signature', 'x'],
        ['Content-Length', '1'],
        ['bad name', 'x'],
        ['x-ok', 'line\r\nbreak'],
      ] as const) {
        const err = await errorOf(
          await api.request('POST', `/api/v1/app/${appId}/endpoint`, {
            body: JSON.stringify({ url: RECEIVER, headers: { [name]: value } }),
          }),
        );
        assert.equal(err.status, 422, name);
        assert.deepEqual((err.detail as { loc: unknown[] }[])[0]?.loc, ['body', 'headers', name]);
      }
    });

    test('uid conflicts are 409; a uid shaped like an endpoint id is 422', async () => {
      await api.svix.endpoint.create(appId, { url: RECEIVER, uid: 'dup' });
      await assert.rejects(
        api.svix.endpoint.create(appId, { url: RECEIVER, uid: 'dup' }),
        (e: ApiException<{ code: string }>) => e.code === 409 && e.body.code === 'conflict',
      );
      const err = await errorOf(
        await api.request('POST', `/api/v1/app/${appId}/endpoint`, {
          body: JSON.stringify({ url: RECEIVER, uid: 'ep_01ARZ3NDEKTSV4RRFFQ69G5FAV' }),
        }),
      );
      assert.equal(err.status, 422);
    });

    test('update (PUT) replaces, creates on an unknown uid; patch changes only the given fields', async () => {
      const ep = await api.svix.endpoint.create(appId, {
        url: RECEIVER,
        uid: 'put-me',
        description: 'd',
        channels: ['a'],
        metadata: { k: 'v' },
      });
      const put = await api.svix.endpoint.upsert(appId, 'put-me', {
        url: 'http://127.0.0.1:10/other',
        eventTypes: ['x.y'],
      });
      assert.equal(put.id, ep.id);
      assert.equal(put.url, 'http://127.0.0.1:10/other');
      assert.equal(put.description, '');
      assert.equal(put.channels, null);
      assert.deepEqual(put.eventTypes, ['x.y']);
      assert.deepEqual(put.metadata, {});
      assert.equal(put.uid, 'put-me');

      const patched = await api.svix.endpoint.patch(appId, ep.id, { description: 'patched', channels: ['b', 'c'] });
      assert.equal(patched.description, 'patched');
      assert.deepEqual(patched.channels, ['b', 'c']);
      assert.deepEqual(patched.eventTypes, ['x.y']);
      assert.equal(patched.url, 'http://127.0.0.1:10/other');
      const cleared = await api.svix.endpoint.patch(appId, ep.id, { eventTypes: null });
      assert.equal(cleared.eventTypes, null);

      const created = await api.svix.endpoint.upsert(appId, 'fresh-by-put', { url: RECEIVER });
      assert.equal(created.uid, 'fresh-by-put');
      assert.match((await api.svix.endpoint.getSecret(appId, 'fresh-by-put')).key, /^whsec_/);
      const missing = await api.request('PUT', `/api/v1/app/${appId}/endpoint/ep_00000000000000000000000000`, {
        body: JSON.stringify({ url: RECEIVER }),
      });
      assert.equal(missing.status, 404);
    });

    test('list pages through endpoints in both orders', async () => {
      const app = await api.svix.application.create({ name: 'many endpoints' });
      const made = await Promise.all(
        Array.from({ length: 12 }, () => api.svix.endpoint.create(app.id, { url: RECEIVER })),
      );
      const ids = made.map((e) => e.id).sort();
      for (const order of [Ordering.Ascending, Ordering.Descending]) {
        const seen: string[] = [];
        let iterator: string | null = null;
        for (;;) {
          const page = await api.svix.endpoint.list(app.id, { limit: 5, order, iterator });
          seen.push(...page.data.map((e) => e.id));
          if (page.done) break;
          iterator = page.iterator;
        }
        assert.deepEqual(seen, order === Ordering.Ascending ? ids : [...ids].reverse());
      }
    });

    test('disabling moves pending deliveries to skipped with a timeline row; re-enabling does not resend', async () => {
      const ep = await api.svix.endpoint.create(appId, { url: RECEIVER, uid: 'to-disable' });
      const msg = await api.svix.message.create(appId, { eventType: 'thing.happened', payload: { n: 1 } });
      const disabled = await api.svix.endpoint.patch(appId, 'to-disable', { disabled: true });
      assert.equal(disabled.disabled, true);
      const timeline = (await (
        await api.request('GET', `/api/v1/app/${appId}/msg/${msg.id}/endpoint/to-disable/timeline`)
      ).json()) as TimelineBody;
      assert.equal(timeline.deliveryState, 'skipped');
      assert.deepEqual(
        timeline.data.map((r) => [r.state, r.reason]),
        [
          ['pending', 'published'],
          ['skipped', 'endpoint_disabled'],
        ],
      );
      const enabled = await api.svix.endpoint.patch(appId, ep.id, { disabled: false });
      assert.equal(enabled.disabled, false);
      const state = await api.database.db.query<{ state: string }>(
        'SELECT state FROM deliveries WHERE endpoint_id = $1',
        [ep.id],
      );
      assert.deepEqual(
        state.rows.map((r) => r.state),
        ['skipped'],
      );
      const history = await api.database.db.query<{ kind: string; reason: string | null }>(
        'SELECT kind, reason FROM endpoint_events WHERE endpoint_id = $1 ORDER BY id',
        [ep.id],
      );
      assert.deepEqual(history.rows, [
        { kind: 'disabled', reason: 'disabled_by_api' },
        { kind: 'enabled', reason: null },
      ]);
    });

    test(
      'deleting cancels pending deliveries with a timeline row, in ' + 'the same transaction; the endpoint is gone',
      async () => {
        const ep = await api.svix.endpoint.create(appId, { url: RECEIVER, uid: 'to-delete' });
        const msg = await api.svix.message.create(appId, { eventType: 'thing.happened', payload: { n: 2 } });
        await api.svix.endpoint.delete(appId, 'to-delete');
        await assert.rejects(
          api.svix.endpoint.get(appId, ep.id),
          (e: ApiException<{ code: string }>) => e.code === 404,
        );
        await assert.rejects(
          api.svix.endpoint.getSecret(appId, ep.id),
          (e: ApiException<{ code: string }>) => e.code === 404,
        );
        const timeline = (await (
          await api.request('GET', `/api/v1/app/${appId}/msg/${msg.id}/endpoint/${ep.id}/timeline`)
        ).json()) as TimelineBody;
        assert.equal(timeline.deliveryState, 'canceled');
        assert.deepEqual(
          timeline.data.map((r) => [r.state, r.reason]),
          [
            ['pending', 'published'],
            ['canceled', 'endpoint_deleted'],
          ],
        );
        // The uid is free again, and a new message makes no delivery for the deleted endpoint.
        await api.svix.endpoint.create(appId, { url: RECEIVER, uid: 'to-delete' });
        const next = await api.svix.message.create(appId, { eventType: 'thing.happened', payload: { n: 3 } });
        const rows = await api.database.db.query(
          'SELECT 1 FROM deliveries WHERE message_id = $1 AND endpoint_id = $2',
          [next.id, ep.id],
        );
        assert.equal(rows.rowCount, 0);
      },
    );

    test("a scoped key cannot reach another application's endpoints", async () => {
      const other = await api.svix.application.create({ name: 'other' });
      const ep = await api.svix.endpoint.create(other.id, { url: RECEIVER });
      const token = await api.appKey(appId);
      for (const path of [
        `/api/v1/app/${other.id}/endpoint`,
        `/api/v1/app/${other.id}/endpoint/${ep.id}`,
        `/api/v1/app/${other.id}/endpoint/${ep.id}/secret`,
      ]) {
        assert.deepEqual(await errorOf(await api.request('GET', path, { token })), {
          status: 404,
          code: 'not_found',
          detail: 'Application not found',
        });
      }
      assert.equal((await api.request('GET', `/api/v1/app/${appId}/endpoint/${ep.id}`, { token })).status, 404);
    });
  });
}
