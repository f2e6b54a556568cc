/**
 * What another transaction deletes can never fail the record of a batch of outcomes: the other rows of the batch
 * are written whatever happened to one delivery's application or to the operational application.
 * - The operational application deleted (regression: after a DELETE of the application named by
 *   TIDINGS_OPERATIONAL_APP, every record batch with an operational event failed on the foreign key of its message,
 *   so other tenants' delivered messages stayed leased and were sent again, and a 410 endpoint stayed active, until
 *   a restart): its cached id is resolved again, and an application created again under the same uid gets the
 *   next events.
 * - The operational application deleted by a transaction that commits while the record waits for it (server only:
 *   two transactions at once): the record commits without the events.
 * - An application deleted while one of its deliveries is leased and recorded in a batch with another tenant's
 *   (server only): the deleted delivery is fenced out, the other is recorded.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import pg from 'pg';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgOperationalEvents } from '../../src/adapters/postgres/delivery/operational-events.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx, txClient } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createPublisher } from '../../src/app/publish.ts';
import type { AttemptRecord, ClaimedDelivery, DeliveryStore } from '../../src/ports/delivery-store.ts';
import type { MessageStore } from '../../src/ports/message-store.ts';
import type { OperationalEvent } from '../../src/ports/operational-events.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint, succeededRecord } from '../support/fixtures.ts';
import { ManualClock } from '../support/manual-clock.ts';

const cipher = testCipher();

/** A 410 Gone of a claimed delivery: dead at once, and its endpoint disabled. */
function gone(d: ClaimedDelivery): AttemptRecord {
  return {
    ...succeededRecord(d),
    succeeded: false,
    statusCode: 410,
    responseBody: '',
    errorKind: 'http_status',
    next: { next: 'dead', reason: 'gone' },
    disableEndpointReason: 'receiver answered 410 Gone',
  };
}

/**
 * The last scheduled attempt of a claimed delivery failed: dead as exhausted, which publishes
 * `message.attempt.exhausted`.
 */
function exhausted(d: ClaimedDelivery): AttemptRecord {
  return { ...gone(d), statusCode: 500, next: { next: 'dead', reason: 'exhausted' }, disableEndpointReason: null };
}

for (const engine of ENGINES) {
  describe(`record isolation on ${engine.name}`, () => {
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

    let uids = 0;
    /** An operational application with `uid` and one endpoint; its id. */
    async function operationalApp(uid: string): Promise<string> {
      const id = await insertApp(t.db, 'operations');
      await t.db.query('UPDATE applications SET uid = $2 WHERE id = $1', [id, uid]);
      await insertEndpoint(t.db, cipher, { appId: id, url: 'http://127.0.0.1:9/ops' });
      return id;
    }

    /**
     * Two tenants with one endpoint each, one message to each, the operational application and a store emitting to it.
     */
    async function world() {
      const uid = `operations-${engine.name}-${uids++}`;
      const opsApp = await operationalApp(uid);
      const messages = createPgMessageStore(t.db, cipher, () => undefined);
      const publisher = createPublisher({ messages, clock, random: cryptoRandom });
      const tenants: { appId: string; endpointId: string }[] = [];
      for (let i = 0; i < 2; i++) {
        const appId = await insertApp(t.db);
        const endpointId = (await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' })).id;
        tenants.push({ appId, endpointId });
      }
      const publish = async (appId: string) =>
        runTx(t.db, (tx) =>
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
      const dropped: string[] = [];
      const onDropped = (_: unknown, lost: readonly OperationalEvent[]) => {
        dropped.push(...lost.map((e) => e.type));
      };
      const storeOf = (into: MessageStore) =>
        createPgDeliveryStore(t.db, cipher, {
          operational: createPgOperationalEvents(uid, into, clock, cryptoRandom, { onDropped }),
          policy: {
            breakerThreshold: 1000,
            breakerCooldownMs: 1000,
            breakerMaxCooldownMs: 1000,
            autoDisableAfterMs: 86_400_000,
          },
        });
      const events = async (appId: string) =>
        (
          await t.db.query<{ type: string }>('SELECT event_type AS type FROM messages WHERE app_id = $1 ORDER BY id', [
            appId,
          ])
        ).rows.map((r) => r.type);
      return { uid, opsApp, tenants, publish, store: storeOf(messages), storeOf, events, dropped };
    }

    const claimAll = async (store: DeliveryStore, limit: number): Promise<readonly ClaimedDelivery[]> =>
      (await store.claim({ dispatcherId: 'A', limit, leaseMs: 30_000, maxReclaims: 5, now: clock.sqlNow() }))
        .deliveries;

    const stateOf = async (id: string): Promise<string> =>
      (await t.db.query<{ state: string }>('SELECT state FROM deliveries WHERE id = $1', [id])).rows[0]!.state;
    const statusOf = async (endpointId: string): Promise<string> =>
      (await t.db.query<{ status: string }>('SELECT status FROM endpoints WHERE id = $1', [endpointId])).rows[0]!
        .status;

    test(
      'deleting the operational application fails no record batch; one created again under its uid gets the next ' +
        'events (regression: every batch with an event failed until a restart)',
      async () => {
        const w = await world();
        const [first, second] = w.tenants as [(typeof w.tenants)[0], (typeof w.tenants)[0]];
        // An event while the operational application exists: its id is now cached.
        await w.publish(first.appId);
        const [warm] = await claimAll(w.store, 10);
        await w.store.recordAttempts([exhausted(warm!)], clock.sqlNow());
        assert.deepEqual(await w.events(w.opsApp), ['message.attempt.exhausted']);

        await t.db.query('DELETE FROM applications WHERE id = $1', [w.opsApp]);
        await w.publish(first.appId);
        await w.publish(second.appId);
        const claimed = await claimAll(w.store, 10);
        assert.equal(claimed.length, 2);
        const byApp = (appId: string) => claimed.find((d) => d.appId === appId)!;
        const result = await w.store.recordAttempts(
          [gone(byApp(first.appId)), succeededRecord(byApp(second.appId))],
          clock.sqlNow(),
        );
        assert.equal(result.recorded.length, 2, 'both outcomes are recorded');
        assert.equal(
          await stateOf(byApp(second.appId).deliveryId),
          'succeeded',
          "the other tenant's delivery is not sent again",
        );
        assert.equal(await statusOf(first.endpointId), 'disabled', 'the 410 endpoint is disabled');

        const again = await operationalApp(w.uid);
        await w.publish(second.appId);
        const [last] = await claimAll(w.store, 10);
        await w.store.recordAttempts([exhausted(last!)], clock.sqlNow());
        assert.deepEqual(
          await w.events(again),
          ['message.attempt.exhausted'],
          'the application created again gets the event',
        );
        assert.deepEqual(
          w.dropped,
          [],
          'a deleted operational application is no failure: its events are not stored, nothing is dropped',
        );
      },
    );

    test(
      'an operational event whose statement fails rolls back alone: the record commits and the events are told ' +
        'dropped',
      async () => {
        const w = await world();
        const [first, second] = w.tenants as [(typeof w.tenants)[0], (typeof w.tenants)[0]];
        // A message store whose insert the database refuses, as any statement of the events might be.
        const refused: MessageStore = {
          insert: async (tx) => {
            await txClient(tx).query('SELECT 1 / 0');
            throw new Error('not reached');
          },
          insertKeyed: async () => null,
        };
        const store = w.storeOf(refused);
        await w.publish(first.appId);
        await w.publish(second.appId);
        const claimed = await claimAll(store, 10);
        const byApp = (appId: string) => claimed.find((d) => d.appId === appId)!;
        const result = await store.recordAttempts(
          [gone(byApp(first.appId)), succeededRecord(byApp(second.appId))],
          clock.sqlNow(),
        );
        assert.equal(result.recorded.length, 2, 'both outcomes are recorded');
        assert.equal(await stateOf(byApp(second.appId).deliveryId), 'succeeded');
        assert.equal(await statusOf(first.endpointId), 'disabled', 'the 410 endpoint is disabled');
        assert.deepEqual(w.dropped, ['endpoint.disabled']);
      },
    );

    test(
      'an application deleted before the record of its leased delivery fails nothing of the batch: that outcome ' +
        'is fenced out',
      async () => {
        const w = await world();
        const [first, second] = w.tenants as [(typeof w.tenants)[0], (typeof w.tenants)[0]];
        await w.publish(first.appId);
        await w.publish(second.appId);
        const claimed = await claimAll(w.store, 10);
        const byApp = (appId: string) => claimed.find((d) => d.appId === appId)!;
        await t.db.query('DELETE FROM applications WHERE id = $1', [first.appId]);
        const result = await w.store.recordAttempts(
          [gone(byApp(first.appId)), succeededRecord(byApp(second.appId))],
          clock.sqlNow(),
        );
        assert.deepEqual(result, {
          recorded: [byApp(second.appId).deliveryId],
          fencedOut: [byApp(first.appId).deliveryId],
        });
        assert.equal(await stateOf(byApp(second.appId).deliveryId), 'succeeded');
      },
    );

    if (engine.name !== 'server') return;

    /**
     * Runs `record` while another connection holds `hold` (statements of a transaction left open), commits that
     * transaction once the record waits for one of its locks, and returns the record's result.
     */
    async function whileHeld<T>(hold: readonly [string, unknown[]][], record: () => Promise<T>): Promise<T> {
      const holder = new pg.Client({ connectionString: t.url! });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        for (const [sql, params] of hold) await holder.query(sql, params);
        const running = record();
        running.catch(() => undefined);
        const waiting =
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
        for (let polls = 0; (await t.db.query(waiting)).rowCount === 0; polls++) {
          if (polls >= 10_000) assert.fail('the record never waited for the deleting transaction');
          await new Promise((resolve) => setImmediate(resolve));
        }
        await holder.query('COMMIT');
        return await running;
      } finally {
        await holder.end();
      }
    }

    test(
      '(server only) the operational application deleted by a transaction that commits while the record waits ' +
        'for it fails nothing of the record',
      async () => {
        const w = await world();
        const [first, second] = w.tenants as [(typeof w.tenants)[0], (typeof w.tenants)[0]];
        await w.publish(first.appId);
        await w.publish(second.appId);
        const claimed = await claimAll(w.store, 10);
        const byApp = (appId: string) => claimed.find((d) => d.appId === appId)!;
        const result = await whileHeld([['DELETE FROM applications WHERE id = $1', [w.opsApp]]], () =>
          w.store.recordAttempts([gone(byApp(first.appId)), succeededRecord(byApp(second.appId))], clock.sqlNow()),
        );
        assert.equal(result.recorded.length, 2, 'both outcomes are recorded');
        assert.equal(await stateOf(byApp(second.appId).deliveryId), 'succeeded');
        assert.equal(await statusOf(first.endpointId), 'disabled');
        assert.deepEqual(w.dropped, ['endpoint.disabled'], 'the event the deletion refused is told dropped');
      },
    );

    test(
      '(server only) an application deleted while its delivery is leased fails nothing of the batch it is ' +
        'recorded in',
      async () => {
        const w = await world();
        const [first, second] = w.tenants as [(typeof w.tenants)[0], (typeof w.tenants)[0]];
        await w.publish(first.appId);
        await w.publish(second.appId);
        const claimed = await claimAll(w.store, 10);
        const byApp = (appId: string) => claimed.find((d) => d.appId === appId)!;
        const result = await whileHeld([['DELETE FROM applications WHERE id = $1', [first.appId]]], () =>
          w.store.recordAttempts(
            [succeededRecord(byApp(first.appId)), succeededRecord(byApp(second.appId))],
            clock.sqlNow(),
          ),
        );
        assert.deepEqual(result, {
          recorded: [byApp(second.appId).deliveryId],
          fencedOut: [byApp(first.appId).deliveryId],
        });
        assert.equal(await stateOf(byApp(second.appId).deliveryId), 'succeeded');
      },
    );
  });
}
