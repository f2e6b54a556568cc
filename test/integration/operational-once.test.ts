/**
 * Operational webhooks are published once per transition, in the transaction that makes it: an endpoint
 * disabled by two 410s recorded at once (two dispatchers), or by a 410 and an auto-disable in one batch,
 * yields one `endpoint.disabled` message and one timeline row.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { createPgOperationalEvents } from '../../src/adapters/postgres/delivery/operational-events.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createPublisher } from '../../src/app/publish.ts';
import type { AttemptRecord, ClaimedDelivery } from '../../src/ports/delivery-store.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { ManualClock } from '../support/manual-clock.ts';

const cipher = testCipher();

function gone(d: ClaimedDelivery): AttemptRecord {
  return {
    deliveryId: d.deliveryId,
    fencingToken: d.fencingToken,
    dispatcherId: d.dispatcherId,
    endpointId: d.endpointId,
    attemptId: `atmpt_${d.deliveryId}_${d.fencingToken}`,
    attemptNumber: d.attemptNumber,
    trigger: 'scheduled',
    url: d.url,
    succeeded: false,
    statusCode: 410,
    responseBody: '',
    location: null,
    errorKind: 'http_status',
    errorDetail: null,
    durationMs: 1,
    next: { next: 'dead', reason: 'gone' },
    throttleEndpointMs: null,
    disableEndpointReason: 'receiver answered 410 Gone',
  };
}

for (const engine of ENGINES) {
  describe(`operational events once per transition on ${engine.name}`, () => {
    let t: TestDatabase;
    const clock = new ManualClock();
    before(async () => {
      t = await engine.fresh();
    });
    after(async () => {
      await t.drop();
    });
    beforeEach(async () => {
      await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
    });

    async function world(count: number) {
      const opsApp = await insertApp(t.db, 'operations');
      await insertEndpoint(t.db, cipher, { appId: opsApp, url: 'http://127.0.0.1:9/ops' });
      const appId = await insertApp(t.db);
      const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
      const messages = createPgMessageStore(t.db, cipher, () => undefined);
      const publisher = createPublisher({ messages, clock, random: cryptoRandom });
      for (let i = 0; i < count; i++) {
        await runTx(t.db, (tx) =>
          publisher.publish(tx, {
            appId,
            eventType: 'e',
            eventId: null,
            channels: null,
            tags: null,
            payload: Buffer.from('{}'),
            retentionHours: null,
          }),
        );
      }
      const operational = createPgOperationalEvents(opsApp, messages, clock, cryptoRandom);
      const store = (autoDisableAfterMs = 86_400_000) =>
        createPgDeliveryStore(t.db, cipher, {
          operational,
          policy: { breakerThreshold: 1000, breakerCooldownMs: 1000, breakerMaxCooldownMs: 1000, autoDisableAfterMs },
        });
      const disabled = async () => ({
        events: (
          await t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM messages WHERE app_id = $1 AND event_type = 'endpoint.disabled'`,
            [opsApp],
          )
        ).rows[0]!.n,
        rows: (
          await t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM endpoint_events WHERE endpoint_id = $1 AND kind = 'disabled'`,
            [ep.id],
          )
        ).rows[0]!.n,
      });
      return { ep, store, disabled };
    }

    test('two 410s of one endpoint recorded at once by two dispatchers publish one endpoint.disabled', async () => {
      const w = await world(2);
      const s1 = w.store();
      const s2 = w.store();
      const a = await s1.claim({ dispatcherId: 'A', limit: 1, leaseMs: 30_000, maxReclaims: 5, now: clock.sqlNow() });
      const b = await s2.claim({ dispatcherId: 'B', limit: 1, leaseMs: 30_000, maxReclaims: 5, now: clock.sqlNow() });
      assert.equal(a.deliveries.length + b.deliveries.length, 2);
      const results = await Promise.all([
        s1.recordAttempts([gone(a.deliveries[0]!)], clock.sqlNow()),
        s2.recordAttempts([gone(b.deliveries[0]!)], clock.sqlNow()),
      ]);
      assert.equal(results.flatMap((r) => r.recorded).length, 2, 'both outcomes are recorded');
      assert.deepEqual(await w.disabled(), { events: 1, rows: 1 });
    });

    test('a 410 and an auto-disable in one batch publish one endpoint.disabled', async () => {
      const w = await world(3);
      const s = w.store(1000);
      const first = await s.claim({
        dispatcherId: 'A',
        limit: 1,
        leaseMs: 30_000,
        maxReclaims: 5,
        now: clock.sqlNow(),
      });
      const d0 = first.deliveries[0]!;
      await s.recordAttempts(
        [{ ...gone(d0), statusCode: 500, next: { next: 'retry', delayMs: 0 }, disableEndpointReason: null }],
        clock.sqlNow(),
      );
      clock.advance(5000); // failing for longer than the auto-disable period
      const batch = await s.claim({
        dispatcherId: 'A',
        limit: 2,
        leaseMs: 30_000,
        maxReclaims: 5,
        now: clock.sqlNow(),
      });
      assert.equal(batch.deliveries.length, 2);
      const [x, y] = batch.deliveries as [ClaimedDelivery, ClaimedDelivery];
      await s.recordAttempts(
        [gone(x), { ...gone(y), statusCode: 500, next: { next: 'retry', delayMs: 0 }, disableEndpointReason: null }],
        clock.sqlNow(),
      );
      assert.deepEqual(await w.disabled(), { events: 1, rows: 1 });
    });
  });
}
