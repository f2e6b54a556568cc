/**
 * Publish lookups cached per API process and confirmed by the publish statement
 * (docs/adr/0006-round-trips-and-wake-ups.md, "Publish lookups are cached and confirmed"), on both engines.
 * Two APIs run over one database, as two processes would: A publishes and keeps what it looked up; B changes
 * the event type or the application in between. A's next publish must obey the change — the new schema, the
 * archive, the uid now naming another application, the deletion — on the path without a key (autocommit)
 * and on the keyed path (the svix client sends a key with every POST: the grouped keyed publish), and a
 * message refused as stale is stored exactly once when it is published again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const TOTAL_SCHEMA = { type: 'object', properties: { total: { type: 'integer' } }, required: ['total'] };

for (const engine of ENGINES) {
  describe(`publish lookups cached in one API process, changed through another (${engine.name})`, () => {
    let a: ApiHarness;
    let b: ApiHarness;
    before(async () => {
      a = await startApi(engine.fresh);
      b = await startApi(engine.fresh, {}, { database: a.database });
    });
    after(async () => {
      await b?.close();
      await a?.close();
    });

    /** Publishes through A, without a key (`keyed` false) or with one; resolves to the status and the body. */
    const publish = async (appRef: string, eventType: string, payload: unknown, keyed: boolean) => {
      const response = await a.request('POST', `/api/v1/app/${appRef}/msg`, {
        body: JSON.stringify({ eventType, payload }),
        headers: keyed ? { 'idempotency-key': `k-${Math.random().toString(36).slice(2)}` } : {},
      });
      const body = (await response.json()) as { id?: string; code?: string; detail?: unknown };
      return { status: response.status, body };
    };
    /** Ids of the messages stored in application `appId`. */
    const messageIds = async (appId: string) =>
      (await a.svix.message.list(appId, { limit: 250 })).data.map((m) => m.id).sort();

    for (const keyed of [false, true]) {
      const path = keyed ? 'keyed (grouped)' : 'without a key';

      test(
        `${path}: a schema registered, then changed, through the ` + 'other API is enforced on the next publish',
        async () => {
          const type = `order.paid.${keyed ? 'k' : 'p'}`;
          const app = await b.svix.application.create({ name: 'shop' });
          const unregistered = await publish(app.id, type, { total: 'three' }, keyed);
          assert.equal(unregistered.status, 202, 'not registered: accepted, and its absence kept');
          await b.svix.eventType.create({ name: type, description: 'paid', schemas: { 1: TOTAL_SCHEMA } });
          const refused = await publish(app.id, type, { total: 'three' }, keyed);
          assert.equal(refused.status, 422);
          assert.deepEqual((refused.body.detail as { loc: unknown[] }[])[0]!.loc, ['body', 'payload', 'total']);
          const accepted = await publish(app.id, type, { total: 3 }, keyed);
          assert.equal(accepted.status, 202);
          // A now holds the type with the integer schema; B asks for a string.
          await b.svix.eventType.patch(type, {
            schemas: { 1: { ...TOTAL_SCHEMA, properties: { total: { type: 'string' } } } },
          });
          assert.equal((await publish(app.id, type, { total: 3 }, keyed)).status, 422);
          const again = await publish(app.id, type, { total: 'three' }, keyed);
          assert.equal(again.status, 202);
          assert.deepEqual(
            await messageIds(app.id),
            [unregistered.body.id, accepted.body.id, again.body.id].sort(),
            'every accepted message stored once, no refused one',
          );
        },
      );

      test(`${path}: an event type archived through the other API is refused at body.eventType`, async () => {
        const type = `order.void.${keyed ? 'k' : 'p'}`;
        const app = await b.svix.application.create({ name: 'shop' });
        await b.svix.eventType.create({ name: type, description: 'voided' });
        assert.equal((await publish(app.id, type, {}, keyed)).status, 202);
        await b.svix.eventType.delete(type);
        const refused = await publish(app.id, type, {}, keyed);
        assert.equal(refused.status, 422);
        assert.deepEqual((refused.body.detail as { loc: unknown[] }[])[0]!.loc, ['body', 'eventType']);
        // Deleted for good and registered again: a new revision, never the one A holds.
        await b.svix.eventType.delete(type, { expunge: true });
        await b.svix.eventType.create({ name: type, description: 'again', schemas: { 1: TOTAL_SCHEMA } });
        assert.equal((await publish(app.id, type, {}, keyed)).status, 422);
        assert.equal((await messageIds(app.id)).length, 1);
      });

      test(`${path}: a uid given to another application through the other API names that one at once`, async () => {
        const uid = `shop-${keyed ? 'k' : 'p'}`;
        const first = await b.svix.application.create({ name: 'first', uid });
        const before = await publish(uid, 'item.sold', {}, keyed);
        assert.equal(before.status, 202);
        await b.svix.application.patch(first.id, { uid: `${uid}-old` });
        const second = await b.svix.application.create({ name: 'second', uid });
        const afterMove = await publish(uid, 'item.sold', {}, keyed);
        assert.equal(afterMove.status, 202);
        assert.deepEqual(await messageIds(first.id), [before.body.id]);
        assert.deepEqual(await messageIds(second.id), [afterMove.body.id]);
      });

      test(`${path}: an application deleted through the other API is not found, by id or by uid`, async () => {
        const uid = `gone-${keyed ? 'k' : 'p'}`;
        const app = await b.svix.application.create({ name: 'gone', uid });
        assert.equal((await publish(app.id, 'item.sold', {}, keyed)).status, 202);
        assert.equal((await publish(uid, 'item.sold', {}, keyed)).status, 202);
        await b.svix.application.delete(app.id);
        for (const ref of [app.id, uid]) {
          const refused = await publish(ref, 'item.sold', {}, keyed);
          assert.equal(refused.status, 404, ref);
          assert.equal(refused.body.code, 'not_found');
        }
        const count = await a.database.db.query<{ n: string }>('SELECT count(*) AS n FROM messages WHERE app_id = $1', [
          app.id,
        ]);
        assert.equal(count.rows[0]!.n, '0');
      });
    }
  });
}
