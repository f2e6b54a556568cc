/**
 * A publish hands its new deliveries to the dispatcher of its own process already leased
 * (docs/adr/0018-publish-hands-off-leases.md): the real message store and publish statement on both engines, with a
 * recording hand-off standing for the dispatcher, and the real delivery store for what happens to such a lease
 * afterwards (fenced record, reclaim after a lost hand-off). The last part runs Tidings in this process and counts,
 * from the timeline, the deliveries that went out without a claim.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runAutocommit, runTx } from '../../src/adapters/postgres/tx.ts';
import type { ClaimedDelivery } from '../../src/ports/delivery-store.ts';
import type { Handoff, HandoffOffer } from '../../src/ports/handoff.ts';
import type { NewMessage } from '../../src/ports/message-store.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint, succeededRecord } from '../support/fixtures.ts';
import { startInProcessWorld } from '../support/in-process.ts';
import { ManualClock } from '../support/manual-clock.ts';

const LEASE_MS = 30_000;
const cipher = testCipher();
let serial = 0;

function message(appId: string, fields: Partial<NewMessage> = {}): NewMessage {
  serial += 1;
  return {
    id: `msg_handoff${String(serial).padStart(19, '0')}`,
    appId,
    eventId: null,
    eventType: 'invoice.paid',
    channels: null,
    tags: null,
    payload: Buffer.from(`{"n":${serial}}`),
    retentionHours: null,
    ...fields,
  };
}

/** A hand-off that offers `room` per listed endpoint and `slots` in all, and keeps what each statement adopted. */
function recordingHandoff(endpointIds: readonly string[], room: number, slots: number) {
  const offers: number[] = [];
  const adopted: { offer: HandoffOffer; deliveries: readonly ClaimedDelivery[] }[] = [];
  const handoff: Handoff = {
    offer(messages) {
      offers.push(messages);
      return {
        dispatcherId: 'local',
        leaseMs: LEASE_MS,
        slots,
        endpointIds,
        room: endpointIds.map(() => room),
        leaseFromMs: 0,
      };
    },
    adopt(offer, deliveries) {
      adopted.push({ offer, deliveries });
    },
  };
  return { handoff, offers, adopted, leased: () => adopted.flatMap((a) => a.deliveries) };
}

for (const engine of ENGINES) {
  describe(`publish hand-off on ${engine.name}`, () => {
    let t: TestDatabase;
    const clock = new ManualClock();
    before(async () => {
      t = await engine.fresh();
    });
    after(async () => {
      await t.drop();
    });
    // Each test claims only its own deliveries.
    beforeEach(async () => {
      await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
    });

    const publish = (store: ReturnType<typeof createPgMessageStore>, m: NewMessage) =>
      runAutocommit(t.db, (tx) => store.insert(tx, m, clock.sqlNow()));

    test(
      'a delivery due now to an offered endpoint is committed leased, fencing token 1, with its published and ' +
        'claimed timeline rows, and adopted with its payload and keys',
      async () => {
        const appId = await insertApp(t.db);
        const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
        const h = recordingHandoff([ep.id], 10, 10);
        const store = createPgMessageStore(t.db, cipher, () => undefined, { handoff: h.handoff });
        const m = message(appId);
        const result = await publish(store, m);
        assert.equal(result.deliveries, 1);
        assert.deepEqual(h.offers, [1]);
        const [d] = h.leased();
        assert.ok(d !== undefined, 'the delivery was handed off');
        assert.equal(h.adopted.length, 1);
        assert.equal(d.fencingToken, '1');
        assert.equal(d.dispatcherId, 'local');
        assert.equal(d.endpointId, ep.id);
        assert.equal(d.messageId, m.id);
        assert.equal(d.attemptNumber, 1);
        assert.equal(d.url, 'http://127.0.0.1:9/a');
        assert.deepEqual(Buffer.from(d.payload), Buffer.from(m.payload));
        assert.equal(d.signingKeys.length, 1);
        const row = (
          await t.db.query<{ state: string; dispatcher_id: string; fencing_token: string; lease_ms: number }>(
            'SELECT state, dispatcher_id, fencing_token, round(extract(epoch FROM lease_expires_at - created_at) ' +
              '* 1000)::int AS lease_ms FROM deliveries WHERE id = $1',
            [d.deliveryId],
          )
        ).rows[0]!;
        assert.deepEqual(row, { state: 'leased', dispatcher_id: 'local', fencing_token: '1', lease_ms: LEASE_MS });
        const timeline = (
          await t.db.query<{
            state: string;
            reason: string;
            dispatcher_id: string | null;
            fencing_token: string | null;
            wait_ms: string | null;
            since_publish_ms: string;
          }>(
            'SELECT state, reason, dispatcher_id, fencing_token, wait_ms, since_publish_ms FROM delivery_events ' +
              'WHERE delivery_id = $1 ORDER BY id',
            [d.deliveryId],
          )
        ).rows;
        assert.deepEqual(timeline, [
          {
            state: 'pending',
            reason: 'published',
            dispatcher_id: null,
            fencing_token: null,
            wait_ms: null,
            since_publish_ms: '0',
          },
          {
            state: 'leased',
            reason: 'claimed',
            dispatcher_id: 'local',
            fencing_token: '1',
            wait_ms: '0',
            since_publish_ms: '0',
          },
        ]);
        // The lease is an ordinary one: its record is fenced by token 1 and settles the delivery.
        const deliveries = createPgDeliveryStore(t.db, cipher);
        const recorded = await deliveries.recordAttempts([succeededRecord(d)], clock.sqlNow());
        assert.deepEqual(recorded.recorded, [d.deliveryId]);
      },
    );

    test(
      'each endpoint takes at most its room and the statement at ' + 'most its slots; the rest stay pending and due',
      async () => {
        const appId = await insertApp(t.db);
        const a = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
        const b = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/b' });
        /** Three messages in one grouped statement under `h`: the deliveries it leased, per endpoint. */
        const groupOfThree = async (h: ReturnType<typeof recordingHandoff>): Promise<Map<string, number>> => {
          const store = createPgMessageStore(t.db, cipher, () => undefined, {
            handoff: h.handoff,
            limits: { maxBatch: 3, maxInFlight: 1 },
          });
          const results = await Promise.all([1, 2, 3].map(() => publish(store, message(appId))));
          assert.deepEqual(
            results.map((r) => r.deliveries),
            [2, 2, 2],
          );
          assert.deepEqual(h.offers, [3], 'one grouped statement of three messages');
          const perEndpoint = new Map<string, number>();
          for (const d of h.leased()) perEndpoint.set(d.endpointId, (perEndpoint.get(d.endpointId) ?? 0) + 1);
          return perEndpoint;
        };
        assert.deepEqual(
          await groupOfThree(recordingHandoff([a.id, b.id], 1, 10)),
          new Map([
            [a.id, 1],
            [b.id, 1],
          ]),
          'room 1 per endpoint',
        );
        const bySlots = await groupOfThree(recordingHandoff([a.id, b.id], 10, 3));
        assert.equal(
          [...bySlots.values()].reduce((x, y) => x + y, 0),
          3,
          'three slots',
        );
        const states = (
          await t.db.query<{ state: string; n: number }>(
            `SELECT state, count(*)::int AS n FROM deliveries WHERE app_id = $1 GROUP BY state ORDER BY state`,
            [appId],
          )
        ).rows;
        assert.deepEqual(states, [
          { state: 'leased', n: 5 },
          { state: 'pending', n: 7 },
        ]);
        // The pending ones are claimed as ever.
        const claimed = await createPgDeliveryStore(t.db, cipher).claim({
          dispatcherId: 'other',
          limit: 20,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: clock.sqlNow(),
        });
        assert.equal(claimed.deliveries.length, 7);
      },
    );

    test(
      'no lease for an endpoint not offered, gated (in-flight cap, rate limit, breaker not closed), throttled, ' +
        'paused or disabled, nor for a scheduled message',
      async () => {
        const appId = await insertApp(t.db);
        const names = ['unlisted', 'capped', 'limited', 'open', 'throttled', 'paused', 'disabled'] as const;
        const ids = new Map<string, string>();
        for (const name of names)
          ids.set(name, (await insertEndpoint(t.db, cipher, { appId, url: `http://127.0.0.1:9/${name}` })).id);
        await t.db.query('UPDATE endpoints SET max_in_flight = 5 WHERE id = $1', [ids.get('capped')]);
        await t.db.query('UPDATE endpoints SET rate_limit_per_s = 5 WHERE id = $1', [ids.get('limited')]);
        await t.db.query(`UPDATE endpoints SET breaker_state = 'open', breaker_open_until = $2 WHERE id = $1`, [
          ids.get('open'),
          new Date(clock.nowMs() + 60_000),
        ]);
        await t.db.query('UPDATE endpoints SET throttled_until = $2 WHERE id = $1', [
          ids.get('throttled'),
          new Date(clock.nowMs() + 60_000),
        ]);
        await t.db.query(`UPDATE endpoints SET status = 'paused' WHERE id = $1`, [ids.get('paused')]);
        await t.db.query(`UPDATE endpoints SET status = 'disabled' WHERE id = $1`, [ids.get('disabled')]);
        const offered = names.filter((n) => n !== 'unlisted').map((n) => ids.get(n)!);
        const h = recordingHandoff(offered, 10, 100);
        const store = createPgMessageStore(t.db, cipher, () => undefined, { handoff: h.handoff });
        await publish(store, message(appId));
        await publish(store, message(appId, { deliverAt: new Date(clock.nowMs() + 60_000) }));
        assert.deepEqual(h.leased(), []);
        assert.equal(h.adopted.length, 2, 'each statement gave its room back');
        const states = (
          await t.db.query<{ state: string; n: number }>(
            `SELECT state, count(*)::int AS n FROM deliveries WHERE app_id = $1 GROUP BY state ORDER BY state`,
            [appId],
          )
        ).rows;
        assert.deepEqual(states, [
          { state: 'pending', n: 12 },
          { state: 'skipped', n: 2 },
        ]);
      },
    );

    test(
      "a publish inside a caller's transaction asks for no offer; " + 'a failed statement gives its room back',
      async () => {
        const appId = await insertApp(t.db);
        const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
        const h = recordingHandoff([ep.id], 10, 10);
        const store = createPgMessageStore(t.db, cipher, () => undefined, { handoff: h.handoff });
        await runTx(t.db, (tx) => store.insert(tx, message(appId), clock.sqlNow()));
        assert.deepEqual(h.offers, []);
        await assert.rejects(
          publish(store, message('app_doesnotexist')),
          (error: Error & { code?: string }) => error.code === 'not_found',
        );
        assert.deepEqual(h.offers, [1]);
        assert.deepEqual(
          h.adopted.map((a) => a.deliveries.length),
          [0],
        );
      },
    );

    test(
      'a leased row that cannot be read (a secret that does not decrypt) fails no publish: its room is given ' +
        'back and its lease stays for a claim',
      async () => {
        const appId = await insertApp(t.db);
        const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
        await t.db.query(`UPDATE endpoints SET secret = '\\x00'::bytea WHERE id = $1`, [ep.id]);
        const h = recordingHandoff([ep.id], 10, 10);
        const store = createPgMessageStore(t.db, cipher, () => undefined, { handoff: h.handoff });
        const result = await publish(store, message(appId));
        assert.equal(result.deliveries, 1);
        assert.deepEqual(
          h.adopted.map((a) => a.deliveries.length),
          [0],
        );
        const states = (await t.db.query<{ state: string }>('SELECT state FROM deliveries WHERE app_id = $1', [appId]))
          .rows;
        assert.deepEqual(states, [{ state: 'leased' }]);
      },
    );

    test(
      'a hand-off lost after its commit (the process died) is reclaimed once its lease expires, and the lost ' +
        "lease's record is fenced out",
      async () => {
        const appId = await insertApp(t.db);
        const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
        const h = recordingHandoff([ep.id], 10, 10);
        const store = createPgMessageStore(t.db, cipher, () => undefined, { handoff: h.handoff });
        await publish(store, message(appId));
        const [lost] = h.leased();
        assert.ok(lost !== undefined);
        const deliveries = createPgDeliveryStore(t.db, cipher);
        const during = await deliveries.claim({
          dispatcherId: 'other',
          limit: 10,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: clock.sqlNow(),
        });
        assert.equal(during.deliveries.length, 0, 'the lease holds while it lasts');
        const later = new Date(clock.nowMs() + LEASE_MS + 1);
        const taken = await deliveries.claim({
          dispatcherId: 'other',
          limit: 10,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: later,
        });
        assert.equal(taken.deliveries.length, 1);
        assert.equal(taken.deliveries[0]!.deliveryId, lost.deliveryId);
        assert.equal(taken.deliveries[0]!.fencingToken, '2');
        assert.equal(taken.reclaimed, 1);
        const stale = await deliveries.recordAttempts([succeededRecord(lost)], later);
        assert.deepEqual(stale.fencedOut, [lost.deliveryId]);
        const fresh = await deliveries.recordAttempts([succeededRecord(taken.deliveries[0]!)], later);
        assert.deepEqual(fresh.recorded, [lost.deliveryId]);
      },
    );
  });
}

describe('publish hand-off in one process (serve)', () => {
  /** Deliveries of `appId` whose claimed row has the instant of their published row: leased by the publish itself. */
  const handedOff = async (db: TestDatabase['db'], appId: string): Promise<{ handed: number; total: number }> =>
    (
      await db.query<{ handed: number; total: number }>(
        `
    SELECT count(*) FILTER (WHERE c.at = p.at)::int AS handed, count(*)::int AS total
    FROM deliveries d
    JOIN delivery_events p ON p.delivery_id = d.id AND p.reason = 'published'
    JOIN delivery_events c ON c.delivery_id = d.id AND c.reason = 'claimed'
    WHERE d.app_id = $1 AND d.state = 'succeeded'`,
        [appId],
      )
    ).rows[0]!;

  for (const handoff of ['true', 'false']) {
    test(
      `TIDINGS_PUBLISH_HANDOFF=${handoff}: 200 messages are each delivered once; ` +
        `${handoff === 'true' ? 'most' : 'none'} without a claim`,
      async () => {
        const world = await startInProcessWorld({ TIDINGS_PUBLISH_HANDOFF: handoff });
        try {
          const app = await world.svix.application.create({ name: 'handoff' });
          await world.endpoint(app.id, '/h');
          // The first attempt shows the endpoint answers; until then its deliveries are claimed.
          await world.svix.message.create(app.id, { eventType: 'first', payload: { n: 0 } });
          await world.receiver.waitForCount(1, 10_000);
          const ids = await Promise.all(
            Array.from({ length: 200 }, (_, i) =>
              world.svix.message.create(app.id, { eventType: 'load', payload: { n: i + 1 } }).then((m) => m.id),
            ),
          );
          assert.equal(new Set(ids).size, 200);
          await world.receiver.waitForCount(201, 30_000);
          const got = (await world.receiver.requests()).map((r) => r.webhookId);
          assert.equal(got.length, 201);
          assert.ok(
            (await world.receiver.requests()).every((r) => r.signatureValid === true),
            'every signature valid',
          );
          assert.equal(new Set(got).size, 201, 'each message delivered once');
          await world.tidings.dispatcher!.dispatcher.drained();
          const counts = await handedOff(world.database.db, app.id);
          assert.equal(counts.total, 201);
          if (handoff === 'true') assert.ok(counts.handed >= 100, `handed off: ${counts.handed} of 201`);
          else assert.equal(counts.handed, 0);
        } finally {
          await world.stop();
        }
      },
    );
  }
});
