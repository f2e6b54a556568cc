/**
 * The dispatcher loop over the real stores and the real HTTP sender, on both engines: reclaim after a
 * vanished dispatcher (time moved by the test clock), heartbeat that finds its lease lost, graceful stop
 * that releases leases, and free-slot claiming.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createHttpSender } from '../../src/adapters/http-sender/http-sender.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createDispatcher, type Dispatcher, type DispatcherSettings } from '../../src/app/dispatcher/dispatcher.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/domain/retry-schedule.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { deferred } from '../support/deferred.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { silentLogger } from '../support/logger.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

const LEASE_MS = 30_000;

for (const engine of ENGINES) {
  describe(`dispatcher on ${engine.name}`, () => {
    let t: TestDatabase;
    let receiver: TestReceiver;
    let sender: Sender;
    const cipher = testCipher();
    const clock = new ManualClock();

    before(async () => {
      t = await engine.fresh();
      receiver = await startTestReceiver();
      sender = createHttpSender({
        connectTimeoutMs: 2000,
        headersTimeoutMs: 5000,
        bodyTimeoutMs: 5000,
        deadlineMs: 10_000,
        maxResponseBytes: 65536,
        responsePrefixBytes: 1024,
        maxSocketsPerOrigin: 16,
        egressAllowlist: ['127.0.0.1/32'],
        userAgent: 'test',
      });
    });
    after(async () => {
      await sender.close();
      await receiver.stop();
      await t.drop();
    });
    beforeEach(async () => {
      await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
      await receiver.reset();
    });

    const settings = (dispatcherId: string, more: Partial<DispatcherSettings> = {}): DispatcherSettings => ({
      dispatcherId,
      concurrency: 8,
      claimBatch: 8,
      leaseMs: LEASE_MS,
      maxReclaims: 5,
      pollIntervalMs: 50,
      shutdownGraceMs: 0,
      retryPolicy: DEFAULT_RETRY_POLICY,
      ...more,
    });

    async function publish(path: string, count: number): Promise<{ appId: string; secret: string }> {
      const appId = await insertApp(t.db);
      const ep = await insertEndpoint(t.db, cipher, { appId, url: receiver.url(path) });
      await receiver.setSecret(path, ep.secret);
      const publisher = createPublisher({
        messages: createPgMessageStore(t.db, cipher, () => undefined),
        clock,
        random: cryptoRandom,
      });
      for (let i = 0; i < count; i++) {
        await runTx(t.db, (tx) =>
          publisher.publish(tx, {
            appId,
            eventType: 'e',
            eventId: null,
            channels: null,
            tags: null,
            payload: Buffer.from(`{"i":${i}}`),
            retentionHours: null,
          }),
        );
      }
      return { appId, secret: ep.secret };
    }

    function dispatcher(
      dispatcherId: string,
      observer: Parameters<typeof createDispatcher>[0]['observer'] = {},
      s: Sender = sender,
      more: Partial<DispatcherSettings> = {},
    ): Dispatcher {
      return createDispatcher({
        store: createPgDeliveryStore(t.db, cipher),
        sender: s,
        clock,
        random: cryptoRandom,
        logger: silentLogger,
        settings: settings(dispatcherId, more),
        observer,
      });
    }

    test(
      'a dispatcher that vanishes after its claim is replaced once the lease expires: the other reclaims, ' +
        'delivers, and counts the reclaim',
      async () => {
        await publish('/vanish', 1);
        const store = createPgDeliveryStore(t.db, cipher);
        const gone = await store.claim({
          dispatcherId: 'gone',
          limit: 8,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: clock.sqlNow(),
        });
        assert.equal(gone.deliveries.length, 1);
        let reclaimed = 0;
        const b = dispatcher('B', {
          claimed: (_n, r) => {
            reclaimed += r;
          },
        });
        assert.equal(await b.tick(), 0, 'nothing is claimable while the lease lives');
        clock.advance(LEASE_MS + 1);
        assert.equal(await b.tick(), 1);
        await b.drained();
        assert.equal(reclaimed, 1);
        const seen = await receiver.waitForCount(1, 10_000);
        assert.equal(seen[0]!.webhookId, gone.deliveries[0]!.messageId);
        assert.equal(seen[0]!.signatureMatches, true);
        const row = (
          await t.db.query('SELECT state, attempt_count FROM deliveries WHERE id = $1', [
            gone.deliveries[0]!.deliveryId,
          ])
        ).rows[0];
        assert.deepEqual(row, { state: 'succeeded', attempt_count: 1 });
      },
    );

    test('a dispatcher whose lease was taken over learns it at the heartbeat, aborts, and writes nothing', async () => {
      await publish('/stall', 1);
      const gate = deferred<void>();
      const sent = deferred<void>();
      // A sender that holds the request until the test lets it go (the dispatcher is "stalled").
      const stalled: Sender = {
        send: async (req, signal) => {
          sent.resolve();
          await Promise.race([
            gate.promise,
            new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve())),
          ]);
          return sender.send(req, signal);
        },
        close: async () => undefined,
      };
      let lost = 0;
      let fenced = 0;
      const a = dispatcher(
        'A',
        {
          leasesLost: (n) => {
            lost += n;
          },
          fencedOut: (n) => {
            fenced += n;
          },
        },
        stalled,
      );
      assert.equal(await a.tick(), 1);
      await sent.promise;
      clock.advance(LEASE_MS + 1);
      const b = dispatcher('B');
      assert.equal(await b.tick(), 1, 'B reclaims the expired lease');
      await b.drained();
      const lostIds = await a.heartbeat();
      assert.equal(lostIds.length, 1);
      assert.equal(lost, 1);
      gate.resolve();
      await a.drained();
      assert.equal(fenced, 0, 'an abandoned attempt is not even offered to the store');
      const attempts = (
        await t.db.query(
          `SELECT a.dispatcher_id FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.id = $1`,
          [lostIds[0]],
        )
      ).rows;
      assert.deepEqual(attempts, [{ dispatcher_id: 'B' }], 'only the newer lease recorded an attempt');
      assert.equal((await receiver.requests()).length, 1, 'the aborted request never reached the receiver');
    });

    test(
      'graceful stop releases the leases of attempts that do not finish within the grace period, without ' +
        'charging an attempt',
      async () => {
        const { appId } = await publish('/slow', 2);
        await receiver.script('/slow', [], { stall: true });
        const a = dispatcher('A');
        assert.equal(await a.tick(), 2);
        await receiver.waitForCount(2, 10_000);
        await a.stop();
        const rows = (
          await t.db.query(`SELECT state, attempt_count, dispatcher_id FROM deliveries WHERE app_id = $1 ORDER BY id`, [
            appId,
          ])
        ).rows;
        assert.deepEqual(rows, [
          { state: 'pending', attempt_count: 0, dispatcher_id: null },
          { state: 'pending', attempt_count: 0, dispatcher_id: null },
        ]);
        const reasons = (
          await t.db.query(
            'SELECT count(*)::int AS n FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE ' +
              `d.app_id = $1 AND e.reason = 'released'`,
            [appId],
          )
        ).rows[0]!;
        assert.equal(reasons.n, 2);
      },
    );

    test(
      'claims fill free slots only: with concurrency 3, a backlog ' + 'of 5 is claimed 3 then 2 as slots free up',
      async () => {
        await publish('/slots', 5);
        await receiver.script('/slots', [{ delayMs: 300 }, { delayMs: 300 }, { delayMs: 300 }], { status: 200 });
        // One endpoint may take the whole window here (share 1, no reserve): this test is about free slots.
        const a = dispatcher('A', {}, sender, {
          concurrency: 3,
          claimBatch: 3,
          endpointWindowShare: 1,
          windowReserve: 0,
        });
        assert.equal(await a.tick(), 3);
        assert.equal(await a.tick(), 0, 'no free slot: nothing claimed');
        await a.drained();
        assert.equal(await a.tick(), 2);
        await a.drained();
        assert.equal((await receiver.requests()).length, 5);
      },
    );
  });
}
