import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ApiException,
  MessageStatus,
  MessageStatusText,
  MessageAttemptTriggerType,
  Ordering,
  StatusCodeClass,
} from 'svix';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

/** A payload with odd whitespace, key order, an escaped and a non-ASCII string, and an integer beyond 2^53. */
const ODD_PAYLOAD =
  '{ "zeta" :1,\n\t"alpha": [1 ,2.50, -0e3 ],  "big": 12345678901234567890, "s": "caf\\u00e9 ☕", "nested": ' +
  '{"b":true,"a":null} }';

for (const engine of ENGINES) {
  describe(`messages and attempts API through the svix client (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    before(async () => {
      api = await startApi(engine.fresh);
      appId = (await api.svix.application.create({ name: 'messages', uid: 'msg-app' })).id;
    });
    after(async () => api?.close());

    test('create, get by id and by eventId, with and without content', async () => {
      const created = await api.svix.message.create('msg-app', {
        eventType: 'user.signup',
        eventId: 'evt-1',
        payload: { email: 'a@example.com', n: 1 },
        channels: ['eu'],
        tags: ['t1'],
      });
      assert.match(created.id, /^msg_[0-9A-Z]{26}$/);
      assert.equal(created.eventType, 'user.signup');
      assert.equal(created.eventId, 'evt-1');
      assert.deepEqual(created.channels, ['eu']);
      assert.deepEqual(created.tags, ['t1']);
      assert.deepEqual(created.payload, {}, 'the svix client asks without content');
      assert.ok(Math.abs(created.timestamp.valueOf() - Date.now()) < 60_000);

      const full = await api.svix.message.get(appId, created.id, { withContent: true });
      assert.deepEqual(full.payload, { email: 'a@example.com', n: 1 });
      assert.deepEqual({ ...full, payload: {} }, created);
      assert.equal((await api.svix.message.get('msg-app', 'evt-1', { withContent: true })).id, created.id);
      assert.deepEqual((await api.svix.message.get(appId, created.id)).payload, {});

      const withContent = await api.svix.message.create(
        appId,
        { eventType: 'user.signup', payload: { k: 'v' } },
        { withContent: true },
      );
      assert.deepEqual(withContent.payload, { k: 'v' });
      await assert.rejects(
        api.svix.message.get(appId, 'no-such-event'),
        (e: ApiException<{ code: string }>) => e.code === 404 && e.body.code === 'not_found',
      );
    });

    test('the payload survives byte for byte: in the create answer, the get answer and the stored row', async () => {
      const body = `{"eventType":"order.created","payload":${ODD_PAYLOAD},"eventId":"exact-bytes"}`;
      const res = await api.request('POST', `/api/v1/app/${appId}/msg`, { body });
      assert.equal(res.status, 202);
      const created = await res.text();
      assert.ok(created.includes(`"payload":${ODD_PAYLOAD}`), created);
      const id = (JSON.parse(created) as { id: string }).id;

      const got = await (await api.request('GET', `/api/v1/app/${appId}/msg/${id}`)).text();
      assert.ok(got.includes(`"payload":${ODD_PAYLOAD}`), got);
      assert.doesNotThrow(() => JSON.parse(got));

      const listed = await (await api.request('GET', `/api/v1/app/${appId}/msg?limit=250&with_content=true`)).text();
      assert.ok(listed.includes(`"payload":${ODD_PAYLOAD}`));

      const row = await api.database.db.query<{ payload: Buffer; payload_key_id: string }>(
        'SELECT payload, payload_key_id FROM messages WHERE id = $1',
        [id],
      );
      const stored = row.rows[0]!;
      assert.equal(
        stored.payload.includes(Buffer.from('12345678901234567890')),
        false,
        'the payload is encrypted at rest',
      );
      assert.deepEqual(api.cipher.decrypt(stored.payload_key_id, stored.payload, id), Buffer.from(ODD_PAYLOAD, 'utf8'));
    });

    test('a payload as deep as TIDINGS_MAX_JSON_DEPTH allows is accepted and answered byte for byte', async () => {
      // The body is level 1, the payload level 2, its arrays levels 3 to 128 (the default limit).
      const deep = `{"d":${'['.repeat(126)}${']'.repeat(126)}}`;
      const res = await api.request('POST', `/api/v1/app/${appId}/msg?with_content=true`, {
        body: `{"eventType":"deep.nesting","payload":${deep}}`,
      });
      assert.equal(res.status, 202, await res.clone().text());
      const created = await res.text();
      assert.ok(created.endsWith(`"payload":${deep}}`), created.slice(0, 200));
      const id = (JSON.parse(created) as { id: string }).id;
      const got = await (await api.request('GET', `/api/v1/app/${appId}/msg/${id}`)).text();
      assert.ok(got.endsWith(`"payload":${deep}}`), got.slice(0, 200));
    });

    test('list filters by event type, channel, tag and time, newest first, and pages in both orders', async () => {
      const app = await api.svix.application.create({ name: 'list' });
      const made: string[] = [];
      for (let i = 0; i < 9; i++) {
        made.push(
          (
            await api.svix.message.create(app.id, {
              eventType: i % 3 === 0 ? 'a.x' : 'b.y',
              payload: { i },
              channels: i % 2 === 0 ? ['even'] : ['odd'],
              tags: [`tag${i % 3}`],
            })
          ).id,
        );
      }
      const newestFirst = [...made].sort().reverse();
      const collect = async (options: Parameters<ApiHarness['svix']['message']['list']>[1] = {}) => {
        const out: string[] = [];
        let iterator: string | null = null;
        for (;;) {
          const page = await api.svix.message.list(app.id, { ...options, limit: 4, iterator });
          out.push(...page.data.map((m) => m.id));
          if (page.done) return out;
          iterator = page.iterator;
        }
      };
      assert.deepEqual(await collect(), newestFirst);
      const ascending = (await (
        await api.request('GET', `/api/v1/app/${app.id}/msg?order=ascending&limit=250`)
      ).json()) as { data: { id: string }[] };
      assert.deepEqual(
        ascending.data.map((m) => m.id),
        [...made].sort(),
      );
      assert.equal((await collect({ eventTypes: ['a.x'] })).length, 3);
      assert.equal((await collect({ eventTypes: ['a.x', 'b.y'] })).length, 9);
      assert.equal((await collect({ channel: 'even' })).length, 5);
      assert.equal((await collect({ tag: 'tag1' })).length, 3);
      const all = await api.svix.message.list(app.id, { limit: 250, withContent: true });
      assert.deepEqual(
        all.data.map((m) => (m.payload as { i: number }).i),
        [8, 7, 6, 5, 4, 3, 2, 1, 0],
      );
      const pivot = all.data[4]!.timestamp;
      const before = await collect({ before: pivot });
      const after = await collect({ after: pivot });
      assert.ok(before.length + after.length <= 9 && before.length >= 1 && after.length >= 1);
      assert.ok(before.every((id) => !after.includes(id)));
    });

    test(
      'validation: payload required and unique, event type required, retention fields exclusive — 422 with loc, ' +
        'nothing stored',
      async () => {
        const count = async () =>
          Number((await api.database.db.query<{ n: string }>('SELECT count(*) AS n FROM messages')).rows[0]!.n);
        const before = await count();
        const cases: [string, (string | number)[]][] = [
          ['{"eventType":"a.b"}', ['body', 'payload']],
          ['{"eventType":"a.b","payload":{"x":1},"payload":{"x":2}}', ['body', 'payload']],
          ['{"payload":{}}', ['body', 'eventType']],
          ['{"eventType":"bad type!","payload":{}}', ['body', 'eventType']],
          [
            '{"eventType":"a.b","payload":{},"payloadRetentionHours":1,"payloadRetentionPeriod":1}',
            ['body', 'payloadRetentionHours'],
          ],
          ['{"eventType":"a.b","payload":{},"channels":["ok","not ok"]}', ['body', 'channels', 1]],
        ];
        for (const [body, loc] of cases) {
          const err = await errorOf(
            await api.request('POST', `/api/v1/app/${appId}/msg`, {
              body,
              headers: { 'idempotency-key': randomUUID() },
            }),
          );
          assert.equal(err.status, 422, body);
          assert.equal(err.code, 'validation', body);
          assert.ok(
            (err.detail as { loc: unknown[] }[]).some((d) => JSON.stringify(d.loc) === JSON.stringify(loc)),
            `${body}: ${JSON.stringify(err.detail)}`,
          );
        }
        assert.equal(
          (await api.request('POST', `/api/v1/app/${appId}/msg`, { body: '{"eventType":"a.b","payload":{' })).status,
          400,
        );
        assert.equal(await count(), before);
      },
    );

    test(
      'a field outside MessageIn, or a transformationsParams key Tidings does not carry out, is refused with 422 ' +
        'naming it and stores nothing; retention and application creation are honoured',
      async () => {
        const count = async () =>
          Number((await api.database.db.query<{ n: string }>('SELECT count(*) AS n FROM messages')).rows[0]!.n);
        const before = await count();
        for (const [extra, loc] of [
          [{ somethingNew: true }, ['body', 'somethingNew']],
          [{ transformationsParams: { rawPayload: 'r', x: 1 } }, ['body', 'transformationsParams', 'x']],
          [
            { transformationsParams: { rawPayload: 'r', headers: { 'x-custom': 'v' } } },
            ['body', 'transformationsParams', 'headers', 'x-custom'],
          ],
        ] as const) {
          const err = await errorOf(
            await api.request('POST', '/api/v1/app/auto-created/msg', {
              body: JSON.stringify({ eventType: 'a.b', payload: {}, application: { name: 'Auto' }, ...extra }),
            }),
          );
          assert.equal(err.status, 422, JSON.stringify(extra));
          assert.equal(err.code, 'validation');
          assert.deepEqual(
            (err.detail as { loc: unknown[] }[]).map((d) => d.loc),
            [loc],
          );
        }
        assert.equal(await count(), before, 'nothing stored');
        const res = await api.request('POST', '/api/v1/app/auto-created/msg', {
          body: JSON.stringify({
            eventType: 'a.b',
            payload: {},
            deliverAt: null,
            transformationsParams: null,
            payloadRetentionPeriod: 2,
            application: { name: 'Auto' },
          }),
        });
        assert.equal(res.status, 202);
        const { id } = (await res.json()) as { id: string };
        const app = await api.svix.application.get('auto-created');
        assert.equal(app.name, 'Auto');
        const row = await api.database.db.query<{ retention_hours: number; app_id: string }>(
          'SELECT retention_hours, app_id FROM messages WHERE id = $1',
          [id],
        );
        assert.deepEqual(row.rows[0], { retention_hours: 48, app_id: app.id });
        assert.equal(
          (await api.request('POST', '/api/v1/app/not-created/msg', { body: '{"eventType":"a.b","payload":{}}' }))
            .status,
          404,
        );
      },
    );

    test(
      'a NUL character in a text field is 422 validation, with or without an Idempotency-Key, and stores nothing ' +
        '(regression: it was a 500)',
      async () => {
        const count = async () =>
          Number((await api.database.db.query<{ n: string }>('SELECT count(*) AS n FROM messages')).rows[0]!.n);
        const before = await count();
        for (const headers of [{}, { 'idempotency-key': randomUUID() }]) {
          const err = await errorOf(
            await api.request('POST', `/api/v1/app/${appId}/msg`, {
              body: '{"eventType":"a.b","eventId":"nul\\u0000id","payload":{}}',
              headers,
            }),
          );
          assert.equal(err.status, 422);
          assert.equal(err.code, 'validation');
        }
        assert.equal(await count(), before);
        assert.equal(
          (await api.request('POST', `/api/v1/app/${appId}/msg`, { body: '{"eventType":"a.b","payload":{}}' })).status,
          202,
          'the next request is served',
        );
      },
    );

    test('a reused eventId is 409 and stores nothing', async () => {
      await api.svix.message.create(appId, { eventType: 'a.b', eventId: 'once', payload: {} });
      await assert.rejects(
        api.svix.message.create(appId, { eventType: 'a.b', eventId: 'once', payload: { other: 1 } }),
        (e: ApiException<{ code: string }>) => e.code === 409 && e.body.code === 'conflict',
      );
    });

    test(
      'Idempotency-Key: same request → same answer marked ' + 'replayed; other body → 422; keys are per route',
      async () => {
        const key = `k-${randomUUID()}`;
        const body = `{"eventType":"pay.done","payload":${ODD_PAYLOAD}}`;
        const first = await api.request('POST', `/api/v1/app/${appId}/msg`, {
          body,
          headers: { 'idempotency-key': key },
        });
        const second = await api.request('POST', `/api/v1/app/${appId}/msg`, {
          body,
          headers: { 'idempotency-key': key },
        });
        assert.equal(first.status, 202);
        assert.equal(second.status, 202);
        assert.equal(second.headers.get('idempotent-replayed'), 'true');
        const [a, b] = [await first.text(), await second.text()];
        assert.equal(b, a, 'the replayed answer is byte-identical, payload included');
        const other = await api.request('POST', `/api/v1/app/${appId}/msg`, {
          body: '{"eventType":"pay.done","payload":{}}',
          headers: { 'idempotency-key': key },
        });
        assert.deepEqual((await errorOf(other)).code, 'idempotency_key_mismatch');
        assert.equal(other.status, 422);
        const rows = await api.database.db.query('SELECT 1 FROM messages WHERE event_type = $1', ['pay.done']);
        assert.equal(rows.rowCount, 1);

        // The same key on another route is another key.
        const appAnswer = await api.request('POST', '/api/v1/app', {
          body: '{"name":"idem"}',
          headers: { 'idempotency-key': key },
        });
        assert.equal(appAnswer.status, 201);
        // Through the client: an explicit key twice gives one object.
        const c1 = await api.svix.application.create({ name: 'idem-client' }, { idempotencyKey: key + '-c' });
        const c2 = await api.svix.application.create({ name: 'idem-client' }, { idempotencyKey: key + '-c' });
        assert.deepEqual(c2, c1);
        const e1 = await api.svix.endpoint.create(
          c1.id,
          { url: 'http://127.0.0.1:9/' },
          { idempotencyKey: key + '-e' },
        );
        const e2 = await api.svix.endpoint.create(
          c1.id,
          { url: 'http://127.0.0.1:9/' },
          { idempotencyKey: key + '-e' },
        );
        assert.equal(e2.id, e1.id);
        const m1 = await api.svix.message.create(
          c1.id,
          { eventType: 'a.b', payload: { z: 1 } },
          { idempotencyKey: key + '-m', withContent: true },
        );
        const m2 = await api.svix.message.create(
          c1.id,
          { eventType: 'a.b', payload: { z: 1 } },
          { idempotencyKey: key + '-m', withContent: true },
        );
        assert.deepEqual(m2, m1);
      },
    );

    test(
      'twenty concurrent identical publishes with one Idempotency-Key make one message, and every answer carries ' +
        'its id',
      async () => {
        const key = `race-${randomUUID()}`;
        const body = '{"eventType":"race.run","payload":{"n":20}}';
        const answers = await Promise.all(
          Array.from({ length: 20 }, () =>
            api.request('POST', `/api/v1/app/${appId}/msg`, { body, headers: { 'idempotency-key': key } }),
          ),
        );
        const bodies = await Promise.all(
          answers.map(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } })),
        );
        assert.deepEqual(
          new Set(bodies.map((b) => b.status)),
          new Set([202]),
          JSON.stringify(bodies.filter((b) => b.status !== 202)),
        );
        const ids = new Set(bodies.map((b) => b.body.id));
        assert.equal(ids.size, 1);
        const rows = await api.database.db.query<{ id: string }>('SELECT id FROM messages WHERE event_type = $1', [
          'race.run',
        ]);
        assert.deepEqual(
          rows.rows.map((r) => r.id),
          [...ids],
        );
      },
    );

    test('attempts: list by message and by endpoint with filters, get one, and the delivery timeline', async () => {
      const app = await api.svix.application.create({ name: 'attempts', uid: 'att-app' });
      const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/hook', uid: 'att-ep' });
      const msg = await api.svix.message.create(app.id, {
        eventType: 'a.b',
        eventId: 'att-evt',
        payload: { x: 1 },
        channels: ['c1'],
        tags: ['tg'],
      });
      const dispatcher = 'test-dispatcher';
      const attemptIds: string[] = [];
      // First attempt fails with 503 and is retried at once; the second succeeds.
      for (const [i, outcome] of [
        [1, 503],
        [2, 200],
      ] as const) {
        const claim = await api.deliveries.claim({
          dispatcherId: dispatcher,
          limit: 100,
          leaseMs: 60_000,
          maxReclaims: 5,
          now: null,
        });
        const mine = claim.deliveries.find((d) => d.messageId === msg.id);
        assert.ok(mine, `attempt ${i} claims the delivery`);
        const attemptId = `atmpt_${String(i).padStart(26, '0')}`;
        attemptIds.push(attemptId);
        const res = await api.deliveries.recordAttempts(
          [
            {
              deliveryId: mine.deliveryId,
              fencingToken: mine.fencingToken,
              dispatcherId: dispatcher,
              endpointId: ep.id,
              attemptId,
              attemptNumber: i,
              trigger: 'scheduled',
              url: mine.url,
              succeeded: outcome === 200,
              statusCode: outcome,
              responseBody: outcome === 200 ? 'ok' : 'unavailable',
              location: null,
              errorKind: outcome === 200 ? null : 'http_status',
              errorDetail: null,
              durationMs: 12 * i,
              next: outcome === 200 ? { next: 'succeeded' } : { next: 'retry', delayMs: 0 },
              throttleEndpointMs: null,
              disableEndpointReason: null,
            },
          ],
          null,
        );
        assert.deepEqual(res.fencedOut, []);
      }

      const byMsg = await api.svix.messageAttempt.listByMsg('att-app', 'att-evt', { withContent: true });
      assert.deepEqual(
        byMsg.data.map((a) => a.id),
        [...attemptIds].reverse(),
        'newest first',
      );
      const [ok, failed] = byMsg.data;
      assert.equal(ok!.status, MessageStatus.Success);
      assert.equal(ok!.statusText, MessageStatusText.Success);
      assert.equal(ok!.responseStatusCode, 200);
      assert.equal(ok!.response, 'ok');
      assert.equal(ok!.responseDurationMs, 24);
      assert.equal(ok!.triggerType, MessageAttemptTriggerType.Scheduled);
      assert.equal(ok!.msgId, msg.id);
      assert.equal(ok!.endpointId, ep.id);
      assert.equal(ok!.url, 'http://127.0.0.1:9/hook');
      assert.equal(failed!.status, MessageStatus.Fail);
      assert.equal(failed!.responseStatusCode, 503);
      assert.equal(failed!.response, 'unavailable');
      assert.equal(
        (await api.svix.messageAttempt.listByMsg(app.id, msg.id)).data[0]!.response,
        '',
        'without content the response is left out',
      );

      assert.deepEqual(
        (await api.svix.messageAttempt.listByMsg(app.id, msg.id, { status: MessageStatus.Fail })).data.map((a) => a.id),
        [attemptIds[0]],
      );
      assert.deepEqual(
        (
          await api.svix.messageAttempt.listByMsg(app.id, msg.id, { statusCodeClass: StatusCodeClass.Code2xx })
        ).data.map((a) => a.id),
        [attemptIds[1]],
      );
      assert.deepEqual(
        (await api.svix.messageAttempt.listByMsg(app.id, msg.id, { endpointId: 'att-ep' })).data.length,
        2,
      );
      assert.deepEqual((await api.svix.messageAttempt.listByMsg(app.id, msg.id, { channel: 'other' })).data.length, 0);

      const byEp = await api.svix.messageAttempt.listByEndpoint(app.id, 'att-ep', { withMsg: true, limit: 1 });
      assert.deepEqual(
        byEp.data.map((a) => a.id),
        [attemptIds[1]],
      );
      assert.equal(byEp.done, false);
      assert.equal(byEp.data[0]!.msg?.eventId, 'att-evt');
      const rest = await api.svix.messageAttempt.listByEndpoint(app.id, ep.id, { iterator: byEp.iterator, limit: 1 });
      assert.deepEqual(
        rest.data.map((a) => a.id),
        [attemptIds[0]],
      );
      assert.deepEqual(
        (await api.svix.messageAttempt.listByEndpoint(app.id, ep.id, { order: Ordering.Ascending } as never)).data
          .length,
        2,
      );
      assert.equal((await api.svix.messageAttempt.listByEndpoint(app.id, ep.id, { tag: 'tg' })).data.length, 2);
      assert.equal(
        (await api.svix.messageAttempt.listByEndpoint(app.id, ep.id, { eventTypes: ['other.type'] })).data.length,
        0,
      );

      const one = await api.svix.messageAttempt.get(app.id, 'att-evt', attemptIds[0]!);
      assert.equal(one.id, attemptIds[0]);
      assert.equal(one.responseStatusCode, 503);
      await assert.rejects(
        api.svix.messageAttempt.get(app.id, msg.id, 'atmpt_00000000000000000000000099'),
        (e: ApiException<unknown>) => e.code === 404,
      );

      const timeline = (await (
        await api.request('GET', `/api/v1/app/att-app/msg/att-evt/endpoint/att-ep/timeline`)
      ).json()) as {
        deliveryState: string;
        attemptCount: number;
        data: { state: string; statusCode: number | null; dispatcherId: string | null }[];
      };
      assert.equal(timeline.deliveryState, 'succeeded');
      assert.equal(timeline.attemptCount, 2);
      assert.deepEqual(
        timeline.data.map((r) => r.state),
        ['pending', 'leased', 'pending', 'leased', 'succeeded'],
      );
      assert.equal(timeline.data.at(-1)!.statusCode, 200);
      assert.equal(timeline.data.at(-1)!.dispatcherId, dispatcher);
      const paged = (await (
        await api.request('GET', `/api/v1/app/att-app/msg/att-evt/endpoint/att-ep/timeline?limit=2&order=descending`)
      ).json()) as { data: { state: string }[]; done: boolean };
      assert.deepEqual(
        paged.data.map((r) => r.state),
        ['succeeded', 'leased'],
      );
      assert.equal(paged.done, false);
    });
  });
}
