/**
 * The rest of the Svix endpoint and message API through the official svix client (docs/adr/0003-svix-compatibility.md),
 * on both engines: endpoint headers (sensitive ones encrypted), secret rotation (rows and claims; the end-to-end
 * proof with receivers is test/e2e/svix-replay.test.ts), stats, send-example, expunge content, the
 * destinations of a message, the messages of an endpoint, message list filters, and the error bodies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, MessageStatus, MessageStatusText } from 'svix';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

const URL_A = 'http://127.0.0.1:9/a';

async function refusal(call: Promise<unknown>): Promise<{ status: number; body: { code: string; detail: unknown } }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiException)
      return { status: error.code, body: error.body as { code: string; detail: unknown } };
    throw error;
  }
  assert.fail('the call was expected to fail');
}

const NOT_FOUND = (what: string) => ({ status: 404, body: { code: 'not_found', detail: `${what} not found` } });

for (const engine of ENGINES) {
  describe(`endpoint and message extras through the svix client (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    before(async () => {
      api = await startApi(engine.fresh);
      appId = (await api.svix.application.create({ name: 'extras', uid: 'extras' })).id;
    });
    after(async () => api?.close());

    /** Sets the state of the delivery of `msgId` to `endpointId` (what the dispatcher would have done). */
    const setState = (msgId: string, endpointId: string, state: string) =>
      api.database.db.query('UPDATE deliveries SET state = $3 WHERE message_id = $1 AND endpoint_id = $2', [
        msgId,
        endpointId,
        state,
      ]);

    test(
      'headers: get (sensitive ones named, never shown), set, patch; credentials stored encrypted and sent with ' +
        'every request',
      async () => {
        const ep = await api.svix.endpoint.create(appId, {
          url: URL_A,
          uid: 'hdr',
          headers: { 'X-Custom': 'one', Authorization: 'Bearer s3cret' },
        });
        assert.deepEqual(await api.svix.endpoint.getHeaders(appId, 'hdr'), {
          headers: { 'x-custom': 'one' },
          sensitive: ['authorization'],
        });
        const raw = await (await api.request('GET', `/api/v1/app/${appId}/endpoint/${ep.id}`)).text();
        assert.ok(!raw.includes('s3cret'), 'the endpoint never shows a sensitive header');
        const row = async () =>
          (
            await api.database.db.query<{
              headers: Record<string, string>;
              sensitive_headers: Buffer | null;
              sensitive_headers_key: string | null;
            }>('SELECT headers, sensitive_headers, sensitive_headers_key FROM endpoints WHERE id = $1', [ep.id])
          ).rows[0]!;
        const stored = await row();
        assert.deepEqual(stored.headers, { 'x-custom': 'one' });
        assert.ok(
          stored.sensitive_headers !== null && !stored.sensitive_headers.includes(Buffer.from('s3cret')),
          'ciphertext, not the value',
        );
        assert.deepEqual(
          JSON.parse(
            api.cipher.decrypt(stored.sensitive_headers_key!, stored.sensitive_headers, ep.id).toString('utf8'),
          ),
          { authorization: 'Bearer s3cret' },
        );

        await api.svix.endpoint.setHeaders(appId, ep.id, { headers: { 'X-A': '1', 'X-Auth-Token': 'tok' } });
        assert.deepEqual(await api.svix.endpoint.getHeaders(appId, ep.id), {
          headers: { 'x-a': '1' },
          sensitive: ['x-auth-token'],
        });
        await api.svix.endpoint.patchHeaders(appId, ep.id, {
          headers: { 'X-B': '2', Authorization: 'Bearer t2' },
          deleteHeaders: ['x-a'],
        });
        assert.deepEqual(await api.svix.endpoint.getHeaders(appId, ep.id), {
          headers: { 'x-b': '2' },
          sensitive: ['authorization', 'x-auth-token'],
        });
        // Svix's older patch form: a null value removes the header.
        assert.equal(
          (
            await api.request('PATCH', `/api/v1/app/${appId}/endpoint/${ep.id}/headers`, {
              body: '{"headers":{"x-auth-token":null}}',
            })
          ).status,
          204,
        );
        assert.deepEqual(await api.svix.endpoint.getHeaders(appId, ep.id), {
          headers: { 'x-b': '2' },
          sensitive: ['authorization'],
        });

        // The dispatcher's claim sends plain and sensitive headers alike.
        const msg = await api.svix.message.create(appId, { eventType: 'hdr.test', payload: {} });
        const claim = await api.deliveries.claim({
          dispatcherId: 'hdr-dispatcher',
          limit: 100,
          leaseMs: 60_000,
          maxReclaims: 5,
          now: null,
        });
        const mine = claim.deliveries.find((d) => d.messageId === msg.id && d.endpointId === ep.id);
        assert.deepEqual(mine?.headers, { 'x-b': '2', authorization: 'Bearer t2' });
        await api.database.db.query(
          `UPDATE deliveries SET state = 'succeeded', dispatcher_id = NULL WHERE message_id = $1`,
          [msg.id],
        );

        const reserved = await refusal(api.svix.endpoint.setHeaders(appId, ep.id, { headers: { 'Webhook-Id': 'x' } }));
        assert.equal(reserved.status, 422);
        assert.deepEqual((reserved.body.detail as { loc: unknown[] }[])[0]?.loc, ['body', 'headers', 'Webhook-Id']);
        const badName = await refusal(api.svix.endpoint.patchHeaders(appId, ep.id, { headers: { 'bad name': 'x' } }));
        assert.equal(badName.status, 422);
        assert.deepEqual(
          await api.svix.endpoint.getHeaders(appId, ep.id),
          { headers: { 'x-b': '2' }, sensitive: ['authorization'] },
          'refused writes changed nothing',
        );
        assert.deepEqual(await refusal(api.svix.endpoint.getHeaders(appId, 'no-such-ep')), NOT_FOUND('Endpoint'));
        assert.deepEqual(
          await refusal(api.svix.endpoint.setHeaders(appId, 'no-such-ep', { headers: {} })),
          NOT_FOUND('Endpoint'),
        );
      },
    );

    test(
      'rotate secret: a new secret, the old one kept for the grace period, both used to sign; a given key and ' +
        'grace',
      async () => {
        const ep = await api.svix.endpoint.create(appId, { url: URL_A, uid: 'rot' });
        const first = (await api.svix.endpoint.getSecret(appId, 'rot')).key;
        await api.svix.endpoint.rotateSecret(appId, 'rot');
        const second = (await api.svix.endpoint.getSecret(appId, 'rot')).key;
        assert.notEqual(second, first);
        assert.match(second, /^whsec_[A-Za-z0-9+/]{32}$/);
        const row = async () =>
          (
            await api.database.db.query<{ previous_secret: Buffer; previous_secret_key_id: string; grace_s: number }>(
              'SELECT previous_secret, previous_secret_key_id, extract(epoch FROM previous_secret_until - ' +
                'clock_timestamp())::float8 AS grace_s FROM endpoints WHERE id = $1',
              [ep.id],
            )
          ).rows[0]!;
        let r = await row();
        assert.equal(api.cipher.decrypt(r.previous_secret_key_id, r.previous_secret, ep.id).toString('utf8'), first);
        assert.ok(
          r.grace_s > 24 * 3600 - 60 && r.grace_s <= 24 * 3600,
          `default grace is 24 h (TIDINGS_SECRET_ROTATION_GRACE), was ${r.grace_s} s`,
        );

        // The claim signs with both while the grace period runs.
        const msg = await api.svix.message.create(appId, { eventType: 'rot.test', payload: {} });
        const claimed = (
          await api.deliveries.claim({
            dispatcherId: 'rot-dispatcher',
            limit: 100,
            leaseMs: 60_000,
            maxReclaims: 5,
            now: null,
          })
        ).deliveries.find((d) => d.messageId === msg.id && d.endpointId === ep.id);
        assert.equal(claimed?.signingKeys.length, 2);
        await api.database.db.query(
          `UPDATE deliveries SET state = 'succeeded', dispatcher_id = NULL WHERE message_id = $1`,
          [msg.id],
        );

        const given = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
        await api.svix.endpoint.rotateSecret(
          appId,
          ep.id,
          { key: given, gracePeriodSeconds: 60 },
          { idempotencyKey: 'rotate-once' },
        );
        // The same Idempotency-Key again: the stored answer, no second rotation.
        await api.svix.endpoint.rotateSecret(
          appId,
          ep.id,
          { key: given, gracePeriodSeconds: 60 },
          { idempotencyKey: 'rotate-once' },
        );
        assert.equal((await api.svix.endpoint.getSecret(appId, ep.id)).key, given);
        r = await row();
        assert.equal(
          api.cipher.decrypt(r.previous_secret_key_id, r.previous_secret, ep.id).toString('utf8'),
          second,
          'rotated once: the previous secret is the second, not the given one',
        );
        assert.ok(r.grace_s > 0 && r.grace_s <= 60);

        const bad = await refusal(api.svix.endpoint.rotateSecret(appId, ep.id, { key: 'whsec_short' }));
        assert.equal(bad.status, 422);
        assert.deepEqual((bad.body.detail as { loc: unknown[] }[])[0]?.loc, ['body', 'key']);
        const long = await refusal(api.svix.endpoint.rotateSecret(appId, ep.id, { gracePeriodSeconds: 8 * 24 * 3600 }));
        assert.equal(long.status, 422);
        assert.deepEqual((long.body.detail as { loc: unknown[] }[])[0]?.loc, ['body', 'gracePeriodSeconds']);
        assert.equal((await api.svix.endpoint.getSecret(appId, ep.id)).key, given, 'refused rotations changed nothing');
        assert.deepEqual(await refusal(api.svix.endpoint.rotateSecret(appId, 'no-such-ep')), NOT_FOUND('Endpoint'));
      },
    );

    test('stats count deliveries by status, within a window', async () => {
      const app = await api.svix.application.create({ name: 'stats' });
      const ep = await api.svix.endpoint.create(app.id, { url: URL_A });
      const ids: string[] = [];
      for (let i = 0; i < 7; i++)
        ids.push((await api.svix.message.create(app.id, { eventType: 'st.x', payload: { i } })).id);
      const states = ['succeeded', 'succeeded', 'dead', 'leased', 'canceled', 'skipped', 'pending'];
      for (const [i, state] of states.entries()) await setState(ids[i]!, ep.id, state);
      assert.deepEqual(await api.svix.endpoint.getStats(app.id, ep.id), {
        success: 2,
        pending: 1,
        sending: 1,
        fail: 1,
        canceled: 1,
      });
      const raw = (await (await api.request('GET', `/api/v1/app/${app.id}/endpoint/${ep.id}/stats`)).json()) as Record<
        string,
        number
      >;
      assert.equal(raw.skipped, 1, 'Tidings shows skipped apart');
      // Window: the last three messages only.
      const third = (
        await api.database.db.query<{ created_at: Date }>('SELECT created_at FROM messages WHERE id = $1', [ids[4]])
      ).rows[0]!.created_at;
      assert.deepEqual(await api.svix.endpoint.getStats(app.id, ep.id, { since: third }), {
        success: 0,
        pending: 1,
        sending: 0,
        fail: 0,
        canceled: 1,
      });
      assert.deepEqual(await api.svix.endpoint.getStats(app.id, ep.id, { until: third }), {
        success: 2,
        pending: 0,
        sending: 1,
        fail: 1,
        canceled: 0,
      });
      const inverted = await refusal(
        api.svix.endpoint.getStats(app.id, ep.id, {
          since: new Date('2030-01-01T00:00:00Z'),
          until: new Date('2020-01-01T00:00:00Z'),
        }),
      );
      assert.deepEqual(inverted, {
        status: 422,
        body: {
          code: 'validation',
          detail: [{ loc: ['query', 'since'], msg: 'since must not be after until', type: 'value_error' }],
        },
      });
      assert.deepEqual(await refusal(api.svix.endpoint.getStats(app.id, 'no-such-ep')), NOT_FOUND('Endpoint'));
    });

    test('send-example publishes the schema example to that endpoint only', async () => {
      const app = await api.svix.application.create({ name: 'example' });
      const target = await api.svix.endpoint.create(app.id, { url: URL_A });
      const other = await api.svix.endpoint.create(app.id, { url: URL_A });
      await api.svix.eventType.upsert('ex.sample', {
        description: 'x',
        schemas: { 1: { type: 'object', examples: [{ n: 0 }, { n: 1, list: [1, 2] }] } },
      });
      const msg = await api.svix.endpoint.sendExample(app.id, target.id, { eventType: 'ex.sample', exampleIndex: 1 });
      assert.equal(msg.eventType, 'ex.sample');
      assert.deepEqual(msg.payload, { n: 1, list: [1, 2] });
      const deliveries = (
        await api.database.db.query<{ endpoint_id: string; state: string }>(
          'SELECT endpoint_id, state FROM deliveries WHERE message_id = $1',
          [msg.id],
        )
      ).rows;
      assert.deepEqual(deliveries, [{ endpoint_id: target.id, state: 'pending' }], 'one delivery, to the target only');
      assert.ok(other.id !== target.id);
      assert.deepEqual(
        (await api.svix.endpoint.sendExample(app.id, target.id, { eventType: 'ex.sample' })).payload,
        { n: 0 },
        'the first example by default',
      );
      await api.svix.eventType.upsert('ex.plain', { description: 'no schema' });
      assert.deepEqual((await api.svix.endpoint.sendExample(app.id, target.id, { eventType: 'ex.plain' })).payload, {});

      assert.deepEqual(await refusal(api.svix.endpoint.sendExample(app.id, target.id, { eventType: 'ex.unknown' })), {
        status: 422,
        body: {
          code: 'validation',
          detail: [{ loc: ['body', 'eventType'], msg: 'no event type named "ex.unknown"', type: 'value_error' }],
        },
      });
      assert.deepEqual(
        await refusal(api.svix.endpoint.sendExample(app.id, target.id, { eventType: 'ex.sample', exampleIndex: 2 })),
        {
          status: 422,
          body: {
            code: 'validation',
            detail: [{ loc: ['body', 'exampleIndex'], msg: 'the schema has 2 example(s)', type: 'value_error' }],
          },
        },
      );
      await api.svix.endpoint.patch(app.id, other.id, { disabled: true });
      assert.deepEqual(await refusal(api.svix.endpoint.sendExample(app.id, other.id, { eventType: 'ex.sample' })), {
        status: 409,
        body: { code: 'conflict', detail: 'The endpoint is disabled; enable it before sending an example' },
      });
      assert.deepEqual(
        await refusal(api.svix.endpoint.sendExample(app.id, 'no-such-ep', { eventType: 'ex.sample' })),
        NOT_FOUND('Endpoint'),
      );
    });

    test('expunge content erases the payload and keeps the history', async () => {
      const app = await api.svix.application.create({ name: 'expunge' });
      await api.svix.endpoint.create(app.id, { url: URL_A });
      const msg = await api.svix.message.create(app.id, {
        eventType: 'ex.secret',
        eventId: 'exp-1',
        payload: { ssn: '123-45-6789' },
      });
      await api.svix.message.expungeContent(app.id, 'exp-1');
      await api.svix.message.expungeContent(app.id, msg.id);
      const got = await api.svix.message.get(app.id, msg.id, { withContent: true });
      assert.deepEqual(got.payload, {});
      assert.equal(got.eventId, 'exp-1');
      const row = (
        await api.database.db.query<{
          payload: Buffer | null;
          payload_key_id: string | null;
          expunged: boolean;
          deliveries: number;
        }>(
          'SELECT payload, payload_key_id, payload_expunged_at IS NOT NULL AS expunged, (SELECT count(*)::int ' +
            'FROM deliveries WHERE message_id = m.id) AS deliveries FROM messages m WHERE id = $1',
          [msg.id],
        )
      ).rows[0]!;
      assert.deepEqual(row, { payload: null, payload_key_id: null, expunged: true, deliveries: 1 });
      assert.deepEqual(await refusal(api.svix.message.expungeContent(app.id, 'no-such-msg')), NOT_FOUND('Message'));
    });

    test('the destinations of a message and the messages of an endpoint, with their delivery status', async () => {
      const app = await api.svix.application.create({ name: 'dest', uid: 'dest' });
      const eps = [];
      for (let i = 0; i < 4; i++) eps.push(await api.svix.endpoint.create(app.id, { url: URL_A, uid: `dest-${i}` }));
      const msg = await api.svix.message.create(app.id, {
        eventType: 'd.one',
        eventId: 'dest-msg',
        payload: { p: 1 },
        channels: ['eu'],
        tags: ['t1'],
      });
      await setState(msg.id, eps[0]!.id, 'succeeded');
      await setState(msg.id, eps[1]!.id, 'dead');
      await api.database.db.query(
        `UPDATE deliveries SET next_attempt_at = '2099-01-01T00:00:00Z' WHERE message_id = $1 AND endpoint_id = $2`,
        [msg.id, eps[2]!.id],
      );
      await api.svix.endpoint.delete(app.id, eps[3]!.id);

      const dest = await api.svix.messageAttempt.listAttemptedDestinations('dest', 'dest-msg');
      assert.deepEqual(
        dest.data.map((d) => d.id),
        eps
          .slice(0, 3)
          .map((e) => e.id)
          .sort(),
        'live endpoints, by id',
      );
      const byId = new Map(dest.data.map((d) => [d.id, d]));
      assert.equal(byId.get(eps[0]!.id)!.status, MessageStatus.Success);
      assert.equal(byId.get(eps[0]!.id)!.statusText, MessageStatusText.Success);
      assert.equal(byId.get(eps[1]!.id)!.status, MessageStatus.Fail);
      assert.equal(byId.get(eps[2]!.id)!.status, MessageStatus.Pending);
      assert.deepEqual(byId.get(eps[2]!.id)!.nextAttempt, new Date('2099-01-01T00:00:00Z'));
      assert.equal(byId.get(eps[0]!.id)!.nextAttempt, null);
      assert.equal(byId.get(eps[0]!.id)!.url, URL_A);
      const page = await api.svix.messageAttempt.listAttemptedDestinations(app.id, msg.id, { limit: 2 });
      assert.equal(page.data.length, 2);
      assert.equal(page.done, false);
      const rest = await api.svix.messageAttempt.listAttemptedDestinations(app.id, msg.id, {
        limit: 2,
        iterator: page.iterator,
      });
      assert.equal(rest.data.length, 1);
      assert.equal(rest.done, true);
      assert.deepEqual(
        await refusal(api.svix.messageAttempt.listAttemptedDestinations(app.id, 'no-such-msg')),
        NOT_FOUND('Message'),
      );

      // The messages of one endpoint.
      const ep = eps[0]!;
      const second = await api.svix.message.create(app.id, { eventType: 'd.two', payload: { p: 2 }, channels: ['us'] });
      await setState(second.id, ep.id, 'dead');
      const all = await api.svix.messageAttempt.listAttemptedMessages(app.id, 'dest-0', { withContent: true });
      assert.deepEqual(
        all.data.map((m) => m.id),
        [second.id, msg.id],
        'newest first',
      );
      assert.deepEqual(
        all.data.map((m) => m.status),
        [MessageStatus.Fail, MessageStatus.Success],
      );
      assert.deepEqual(all.data[1]!.payload, { p: 1 });
      assert.deepEqual(
        (await api.svix.messageAttempt.listAttemptedMessages(app.id, ep.id)).data[1]!.payload,
        {},
        'the svix client asks without content',
      );
      assert.deepEqual(
        (await api.svix.messageAttempt.listAttemptedMessages(app.id, ep.id, { status: MessageStatus.Fail })).data.map(
          (m) => m.id,
        ),
        [second.id],
      );
      assert.deepEqual(
        (await api.svix.messageAttempt.listAttemptedMessages(app.id, ep.id, { channel: 'eu' })).data.map((m) => m.id),
        [msg.id],
      );
      assert.deepEqual(
        (await api.svix.messageAttempt.listAttemptedMessages(app.id, ep.id, { tag: 't1' })).data.map((m) => m.id),
        [msg.id],
      );
      assert.deepEqual(
        (await api.svix.messageAttempt.listAttemptedMessages(app.id, ep.id, { eventTypes: ['d.two'] })).data.map(
          (m) => m.id,
        ),
        [second.id],
      );
      assert.deepEqual(
        (await api.svix.messageAttempt.listAttemptedMessages(app.id, ep.id, { before: second.timestamp })).data.map(
          (m) => m.id,
        ),
        [msg.id],
      );
      assert.deepEqual(
        (await api.svix.messageAttempt.listAttemptedMessages(app.id, ep.id, { after: msg.timestamp })).data.map(
          (m) => m.id,
        ),
        [second.id],
      );
      assert.deepEqual(
        await refusal(api.svix.messageAttempt.listAttemptedMessages(app.id, 'no-such-ep')),
        NOT_FOUND('Endpoint'),
      );
      // Canceled shows as canceled with expanded statuses (the client's default), as success without.
      await setState(msg.id, ep.id, 'canceled');
      assert.equal(
        (await api.svix.messageAttempt.listAttemptedMessages(app.id, ep.id)).data[1]!.status,
        MessageStatus.Canceled,
      );
      const legacy = (await (await api.request('GET', `/api/v1/app/${app.id}/endpoint/${ep.id}/msg`)).json()) as {
        data: { status: number; deliveryState: string }[];
      };
      assert.deepEqual(
        legacy.data.map((m) => [m.status, m.deliveryState]),
        [
          [2, 'dead'],
          [0, 'canceled'],
        ],
      );
    });

    test('message list filters: event types, channel, tag, before and after', async () => {
      const app = await api.svix.application.create({ name: 'filters' });
      const a = await api.svix.message.create(app.id, { eventType: 'f.a', payload: {}, channels: ['c1'], tags: ['x'] });
      const b = await api.svix.message.create(app.id, { eventType: 'f.b', payload: {}, channels: ['c2'] });
      const c = await api.svix.message.create(app.id, { eventType: 'f.a', payload: {}, tags: ['y'] });
      const ids = async (o: Parameters<ApiHarness['svix']['message']['list']>[1]) =>
        (await api.svix.message.list(app.id, o)).data.map((m) => m.id);
      assert.deepEqual(await ids({}), [c.id, b.id, a.id]);
      assert.deepEqual(await ids({ eventTypes: ['f.a'] }), [c.id, a.id]);
      assert.deepEqual(await ids({ channel: 'c2' }), [b.id]);
      assert.deepEqual(await ids({ tag: 'y' }), [c.id]);
      assert.deepEqual(await ids({ before: b.timestamp }), [a.id]);
      assert.deepEqual(await ids({ after: b.timestamp }), [c.id]);
      const bad = await errorOf(await api.request('GET', `/api/v1/app/${app.id}/msg?before=yesterday`));
      assert.equal(bad.status, 422);
      assert.deepEqual((bad.detail as { loc: unknown[] }[])[0]?.loc, ['query', 'before']);
    });
  });
}
