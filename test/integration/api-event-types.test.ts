/**
 * Event types through the official svix client (docs/adr/0003-svix-compatibility.md), on both engines: create, list,
 * get, update (PUT), patch, delete (archive; expunge); JSON Schemas per event type and the 422 for a payload that
 * violates one; archived types refused for new messages; the Svix subscription check under
 * TIDINGS_STRICT_EVENT_TYPES; error bodies of each 4xx.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, Ordering } from 'svix';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

const INVOICE_SCHEMA = {
  type: 'object',
  properties: {
    invoice: { type: 'integer' },
    amount: { type: 'number', minimum: 0 },
    paidAt: { type: 'string', format: 'date-time' },
  },
  required: ['invoice', 'amount'],
  examples: [
    { invoice: 1, amount: 10 },
    { invoice: 2, amount: 20 },
  ],
};

/** The `{code, detail}` of a failed svix client call. */
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

for (const engine of ENGINES) {
  describe(`event types through the svix client (${engine.name})`, () => {
    let api: ApiHarness;
    before(async () => {
      api = await startApi(engine.fresh);
    });
    after(async () => api?.close());

    test(
      'create, get, list (with and without content), upsert, ' + 'patch, archive, unarchive by create, expunge',
      async () => {
        const created = await api.svix.eventType.create({
          name: 'invoice.paid',
          description: 'An invoice was paid',
          schemas: { 1: INVOICE_SCHEMA },
          groupName: 'billing',
          featureFlags: ['beta'],
        });
        assert.equal(created.name, 'invoice.paid');
        assert.equal(created.description, 'An invoice was paid');
        assert.equal(created.archived, false);
        assert.equal(created.deprecated, false);
        assert.deepEqual(created.schemas, { 1: INVOICE_SCHEMA });
        assert.equal(created.groupName, 'billing');
        assert.deepEqual(created.featureFlags, ['beta']);
        assert.ok(created.createdAt instanceof Date && !Number.isNaN(created.createdAt.valueOf()));
        assert.deepEqual(await api.svix.eventType.get('invoice.paid'), created);

        const again = await refusal(api.svix.eventType.create({ name: 'invoice.paid', description: 'twice' }));
        assert.deepEqual(again, {
          status: 409,
          body: { code: 'conflict', detail: 'An event type named "invoice.paid" already exists' },
        });

        await api.svix.eventType.create({ name: 'invoice.voided', description: 'voided' });
        const listed = await api.svix.eventType.list();
        assert.deepEqual(
          listed.data.map((e) => e.name),
          ['invoice.paid', 'invoice.voided'],
        );
        assert.equal(listed.data[0]!.schemas, null, 'the svix client asks without content: no schemas');
        assert.deepEqual((await api.svix.eventType.list({ withContent: true })).data[0]!.schemas, {
          1: INVOICE_SCHEMA,
        });
        assert.deepEqual(
          (await api.svix.eventType.list({ order: Ordering.Descending })).data.map((e) => e.name),
          ['invoice.voided', 'invoice.paid'],
        );

        // PUT: 201 when it creates, 200 when it overwrites (every field).
        const put = await api.request('PUT', '/api/v1/event-type/user.created', {
          body: JSON.stringify({ description: 'made by PUT' }),
        });
        assert.equal(put.status, 201);
        const upserted = await api.svix.eventType.upsert('user.created', {
          description: 'overwritten',
          deprecated: true,
        });
        assert.equal(upserted.description, 'overwritten');
        assert.equal(upserted.deprecated, true);
        assert.equal(upserted.groupName, null);

        const patched = await api.svix.eventType.patch('invoice.paid', { description: 'patched' });
        assert.equal(patched.description, 'patched');
        assert.deepEqual(patched.schemas, { 1: INVOICE_SCHEMA }, 'a patch keeps the fields it does not name');
        assert.equal((await api.svix.eventType.patch('invoice.paid', { schemas: null })).schemas, null);
        await api.svix.eventType.patch('invoice.paid', { schemas: { 1: INVOICE_SCHEMA } });

        // Delete archives: still readable, hidden from the list unless asked.
        await api.svix.eventType.delete('invoice.voided');
        assert.equal((await api.svix.eventType.get('invoice.voided')).archived, true);
        assert.deepEqual(
          (await api.svix.eventType.list()).data.map((e) => e.name),
          ['invoice.paid', 'user.created'],
        );
        assert.deepEqual(
          (await api.svix.eventType.list({ includeArchived: true })).data.map((e) => e.name),
          ['invoice.paid', 'invoice.voided', 'user.created'],
        );
        // Create unarchives an archived one, overwriting it (Svix: description and schemas are not kept).
        const revived = await api.svix.eventType.create({ name: 'invoice.voided', description: 'back' });
        assert.equal(revived.archived, false);
        assert.equal(revived.description, 'back');
        // Expunge deletes the row.
        await api.svix.eventType.delete('invoice.voided', { expunge: true });
        assert.deepEqual(await refusal(api.svix.eventType.get('invoice.voided')), {
          status: 404,
          body: { code: 'not_found', detail: 'Event type not found' },
        });
        assert.deepEqual(await refusal(api.svix.eventType.delete('invoice.voided')), {
          status: 404,
          body: { code: 'not_found', detail: 'Event type not found' },
        });
        assert.deepEqual(await refusal(api.svix.eventType.patch('no.such', { description: 'x' })), {
          status: 404,
          body: { code: 'not_found', detail: 'Event type not found' },
        });
      },
    );

    test('bad input is 422 with the failing field and changes nothing', async () => {
      const cases: [object, (string | number)[]][] = [
        [{ name: 'bad name!', description: 'x' }, ['body', 'name']],
        [{ name: 'ok.name' }, ['body', 'description']],
        [{ name: 'ok.name', description: 'x', schemas: { v1: { type: 'object' } } }, ['body', 'schemas', 'v1']],
        [{ name: 'ok.name', description: 'x', schemas: { 1: { type: 12 } } }, ['body', 'schemas', '1']],
        [{ name: 'ok.name', description: 'x', schemas: { 1: 'not a schema' } }, ['body', 'schemas', '1']],
      ];
      for (const [body, loc] of cases) {
        const err = await errorOf(await api.request('POST', '/api/v1/event-type', { body: JSON.stringify(body) }));
        assert.equal(err.status, 422, JSON.stringify(body));
        assert.equal(err.code, 'validation');
        assert.deepEqual((err.detail as { loc: unknown[] }[])[0]?.loc, loc, JSON.stringify(err.detail));
      }
      assert.equal((await api.request('GET', '/api/v1/event-type/ok.name')).status, 404, 'nothing was stored');
    });

    test(
      'a payload violating the latest schema version is refused with 422 naming its first violation; nothing is ' +
        'stored',
      async () => {
        const app = await api.svix.application.create({ name: 'schemas' });
        await api.svix.eventType.upsert('order.placed', { description: 'x', schemas: { 1: INVOICE_SCHEMA } });
        const count = async () =>
          Number(
            (
              await api.database.db.query<{ n: string }>('SELECT count(*) AS n FROM messages WHERE event_type = $1', [
                'order.placed',
              ])
            ).rows[0]!.n,
          );

        const ok = await api.svix.message.create(app.id, {
          eventType: 'order.placed',
          payload: { invoice: 7, amount: 1.5, paidAt: '2026-01-02T03:04:05Z' },
        });
        assert.match(ok.id, /^msg_/);

        const bad = await refusal(
          api.svix.message.create(app.id, {
            eventType: 'order.placed',
            payload: { invoice: 'seven', amount: -1, paidAt: 'yesterday' },
          }),
        );
        assert.equal(bad.status, 422);
        assert.equal(bad.body.code, 'validation');
        const locs = (bad.body.detail as { loc: (string | number)[]; type: string }[]).map((d) => d.loc.join('.'));
        assert.equal(locs.length, 1, 'the check stops at the first violation (its work and its answer are bounded)');
        assert.ok(['body.payload.amount', 'body.payload.invoice', 'body.payload.paidAt'].includes(locs[0]!), locs[0]);
        const missing = await refusal(
          api.svix.message.create(app.id, { eventType: 'order.placed', payload: { invoice: 1 } }),
        );
        assert.deepEqual(missing.body.detail, [
          {
            loc: ['body', 'payload', 'amount'],
            msg: "must have required property 'amount'",
            type: 'value_error.jsonschema.required',
          },
        ]);
        const notObject = await refusal(
          api.svix.message.create(app.id, { eventType: 'order.placed', payload: [1, 2] }),
        );
        assert.deepEqual((notObject.body.detail as { loc: unknown[] }[])[0]?.loc, ['body', 'payload']);
        assert.equal(await count(), 1, 'refused messages were not stored');

        // A new version is the one checked.
        await api.svix.eventType.patch('order.placed', {
          schemas: { 1: INVOICE_SCHEMA, 2: { type: 'object', required: ['orderId'] } },
        });
        assert.equal(
          (
            await refusal(
              api.svix.message.create(app.id, { eventType: 'order.placed', payload: { invoice: 1, amount: 1 } }),
            )
          ).status,
          422,
        );
        await api.svix.message.create(app.id, { eventType: 'order.placed', payload: { orderId: 'o-1' } });

        // No schema, or no registered event type: any JSON object (as Svix).
        await api.svix.message.create(app.id, { eventType: 'never.registered', payload: { any: 'thing' } });

        // An archived event type takes no new messages.
        await api.svix.eventType.delete('order.placed');
        const archived = await refusal(
          api.svix.message.create(app.id, { eventType: 'order.placed', payload: { orderId: 'o-2' } }),
        );
        assert.deepEqual(archived, {
          status: 422,
          body: {
            code: 'validation',
            detail: [{ loc: ['body', 'eventType'], msg: 'event type "order.placed" is archived', type: 'value_error' }],
          },
        });
        assert.equal(await count(), 2);
      },
    );

    test('a key scoped to an application may read the catalog but not change it (403)', async () => {
      const app = await api.svix.application.create({ name: 'scoped' });
      const token = await api.appKey(app.id);
      const forbidden = { code: 'insufficient access', detail: 'This credential may not use this route' };
      assert.deepEqual(
        await errorOf(
          await api.request('POST', '/api/v1/event-type', {
            token,
            body: JSON.stringify({ name: 'x.y', description: 'x' }),
          }),
        ),
        { status: 403, ...forbidden },
      );
      assert.deepEqual(
        await errorOf(
          await api.request('PUT', '/api/v1/event-type/x.y', { token, body: JSON.stringify({ description: 'x' }) }),
        ),
        { status: 403, ...forbidden },
      );
      assert.deepEqual(
        await errorOf(
          await api.request('PATCH', '/api/v1/event-type/invoice.paid', {
            token,
            body: JSON.stringify({ description: 'x' }),
          }),
        ),
        { status: 403, ...forbidden },
      );
      assert.deepEqual(await errorOf(await api.request('DELETE', '/api/v1/event-type/invoice.paid', { token })), {
        status: 403,
        ...forbidden,
      });
      assert.equal((await api.request('GET', '/api/v1/event-type', { token })).status, 200);
      assert.equal((await api.svix.eventType.get('invoice.paid')).archived, false, 'unchanged');
    });
  });

  describe(`Svix subscription check with TIDINGS_STRICT_EVENT_TYPES=true (${engine.name})`, () => {
    let api: ApiHarness;
    before(async () => {
      api = await startApi(engine.fresh, { TIDINGS_STRICT_EVENT_TYPES: 'true' });
    });
    after(async () => api?.close());

    test('endpoint filterTypes must name registered, unarchived event types (422 at body.eventTypes)', async () => {
      const app = await api.svix.application.create({ name: 'strict' });
      await api.svix.eventType.create({ name: 'known.type', description: 'x' });
      await api.svix.eventType.create({ name: 'old.type', description: 'x' });
      await api.svix.eventType.delete('old.type');
      const ep = await api.svix.endpoint.create(app.id, {
        url: 'http://127.0.0.1:9/strict',
        eventTypes: ['known.type'],
      });
      assert.deepEqual(ep.eventTypes, ['known.type']);
      const expected = {
        status: 422,
        body: {
          code: 'validation',
          detail: [
            {
              loc: ['body', 'eventTypes'],
              msg:
                'These event types do not exist (or are archived), and TIDINGS_STRICT_EVENT_TYPES=true refuses ' +
                'them: nope.type, old.type',
              type: 'value_error',
            },
          ],
        },
      };
      assert.deepEqual(
        await refusal(
          api.svix.endpoint.create(app.id, {
            url: 'http://127.0.0.1:9/strict',
            eventTypes: ['known.type', 'nope.type', 'old.type'],
          }),
        ),
        expected,
      );
      assert.deepEqual(
        await refusal(api.svix.endpoint.patch(app.id, ep.id, { eventTypes: ['nope.type', 'old.type'] })),
        expected,
      );
      assert.deepEqual(
        await refusal(
          api.svix.endpoint.upsert(app.id, ep.id, {
            url: 'http://127.0.0.1:9/strict',
            eventTypes: ['nope.type', 'old.type'],
          }),
        ),
        expected,
      );
      assert.deepEqual((await api.svix.endpoint.get(app.id, ep.id)).eventTypes, ['known.type'], 'unchanged');
      assert.equal((await api.svix.endpoint.list(app.id)).data.length, 1);
      // Endpoints without a filter need no catalog.
      await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/all' });
    });
  });
}
