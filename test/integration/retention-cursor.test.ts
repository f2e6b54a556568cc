/**
 * The payload-expiry scan's cursor (src/adapters/postgres/message/retention-store.ts) on both engines: messages that
 * share one created_at with microseconds (as the messages of one transaction do) are each read once, batch after
 * batch, never read again because the cursor was cut to milliseconds.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPgRetentionStore } from '../../src/adapters/postgres/message/retention-store.ts';
import { ENGINES } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

for (const engine of ENGINES) {
  describe(`payload-expiry cursor (${engine.name})`, () => {
    let api: ApiHarness;
    before(async () => {
      api = await startApi(engine.fresh);
    });
    after(async () => api?.close());

    test('messages sharing one instant with microseconds are read once each, two per batch', async () => {
      const app = await api.svix.application.create({ name: 'cursor' });
      await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/' });
      for (let i = 0; i < 3; i++) await api.svix.message.create(app.id, { eventType: 'a.b', payload: { i } });
      // Pending deliveries keep the payloads: every batch reads its two messages and expunges none.
      await api.database.db.query(
        `UPDATE messages SET created_at = '2020-01-01 00:00:00.123456+00', retention_hours = 1 WHERE app_id = $1`,
        [app.id],
      );
      const store = createPgRetentionStore(api.database.db);
      const batch = (cursor: Parameters<typeof store.expirePayloads>[0]['cursor']) =>
        store.expirePayloads({ retentionHours: 1, defaultHours: 1, batch: 2, cursor, now: null });
      const first = await batch(null);
      assert.equal(first.read, 2);
      const second = await batch(first.cursor);
      assert.equal(second.read, 1, 'the third message only, not the first two again');
      const third = await batch(second.cursor);
      assert.equal(third.read, 0, 'the scan ends');
    });
  });
}
