/**
 * A poison id on the RabbitMQ transport (docs/guides/transports.md, "Poison ids"): a delivery whose claim keeps failing
 * is nacked alone each time, reaches the broker's delivery limit, is dead-lettered by the broker, and shows in Tidings
 * as a metric and a log line; its row stays pending; the other ids of its batches are leased. Real PostgreSQL and
 * RabbitMQ; the claim of one id fails by a store wrapper.
 */
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { after, before, test } from 'node:test';
import { createPgBrokerOutboxStore } from '../../src/adapters/postgres/delivery/broker-outbox-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { createRabbitMqTransport } from '../../src/adapters/rabbitmq/rabbitmq-transport.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createBrokerSource } from '../../src/app/dispatcher/broker-source.ts';
import { systemTimers } from '../../src/app/dispatcher/loop-timers.ts';
import { createOutboxPublisher } from '../../src/app/dispatcher/outbox-publisher.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { registerBrokerMetrics } from '../../src/observability/broker-metrics.ts';
import type { BrokerOutboxStore } from '../../src/ports/broker-outbox-store.ts';
import type { ClaimedDelivery } from '../../src/ports/delivery-store.ts';
import type { BrokerTransport } from '../../src/ports/broker.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { deferred } from '../support/deferred.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { recordingLogger } from '../support/logger.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { deleteTopology, RABBITMQ_URL, testPrefix } from '../support/rabbitmq.ts';

const DELIVERY_LIMIT = 3;
let t: TestDatabase;
const prefix = testPrefix();
const transports: BrokerTransport[] = [];
before(async () => {
  t = await freshServerDatabase();
});
after(async () => {
  for (const tr of transports) await tr.stop();
  await deleteTopology(prefix, 2);
  await t?.drop();
});

test(
  "a poison id is dead-lettered by the broker's delivery limit, counted and logged; its row stays pending; the " +
    'others are leased',
  async () => {
    const cipher = testCipher();
    const clock = new ManualClock();
    const appId = await insertApp(t.db);
    await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
    const publisher = createPublisher({
      messages: createPgMessageStore(t.db, cipher, () => undefined),
      clock,
      random: cryptoRandom,
    });
    for (let i = 0; i < 3; i++) {
      await runTx(t.db, (tx) =>
        publisher.publish(tx, {
          appId,
          eventType: 'poison.test',
          eventId: null,
          channels: null,
          tags: null,
          payload: Buffer.from('{}'),
          retentionHours: null,
        }),
      );
    }
    clock.advance(1);
    const ids = (
      await t.db.query<{ id: string }>('SELECT id FROM deliveries WHERE app_id = $1 ORDER BY id', [appId])
    ).rows.map((r) => String(r.id));
    const poison = ids[1]!;
    const make = () => {
      const tr = createRabbitMqTransport({
        prefix,
        shards: 2,
        deliveryLimit: DELIVERY_LIMIT,
        reconnectMinMs: 50,
        reconnectMaxMs: 500,
        publishTimeoutMs: 5_000,
        url: RABBITMQ_URL,
        connectionName: 'tidings-broker-poison',
      });
      transports.push(tr);
      return tr;
    };
    const pg = createPgBrokerOutboxStore(t.db, cipher);
    let poisonClaims = 0;
    const store: BrokerOutboxStore = {
      ...pg,
      async claimIds(input) {
        if (input.ids.includes(poison)) {
          if (input.ids.length === 1) poisonClaims += 1;
          throw new Error('the claim of this id fails every time');
        }
        return pg.claimIds(input);
      },
    };
    const outboxTransport = make();
    await outboxTransport.start({ waitForBroker: false });
    const consumerTransport = make();
    await consumerTransport.start({ waitForBroker: false });
    const registry = new Registry();
    const metrics = registerBrokerMetrics(registry, {
      state: () => consumerTransport.state(),
      depth: () => consumerTransport.depth(),
    });
    const logger = recordingLogger();
    const dead = deferred();
    const source = createBrokerSource({
      transport: consumerTransport,
      store,
      clock,
      maxInFlight: 10,
      sweepEveryMs: 1_000_000,
      logger,
      observer: {
        deadLettered: (letter) => {
          metrics.deadLettered(letter);
          dead.resolve();
        },
        nacked: metrics.nacked,
      },
    });
    // The dispatcher's loop, reduced: each wake-up takes (a failed take is simply taken again at the next one).
    const leased: ClaimedDelivery[] = [];
    let taking = Promise.resolve();
    const take = (): void => {
      taking = taking.then(async () => {
        const request = {
          dispatcherId: 'd',
          limit: 10,
          excludeEndpoints: [],
          leaseMs: 30_000,
          maxReclaims: 5,
          now: clock.sqlNow(),
          window: { share: 10, held: new Map<string, number>(), answering: [], unresponsive: [], budget: 10 },
        };
        for (let i = 0; i < 5; i++) {
          try {
            leased.push(...(await source.take!(request)).deliveries);
            return;
          } catch {
            // taken again at once: the failed ids are claimed alone from now on
          }
        }
      });
    };
    const disconnect = source.connect!({ wake: take, yours: () => undefined, room: () => null });
    const outbox = createOutboxPublisher({
      store: pg,
      transport: outboxTransport,
      clock,
      timers: systemTimers,
      logger,
      settings: { intervalMs: 60_000, batch: 100, endpointAhead: 8, sweepAfterMs: 60_000, maxReclaims: 5 },
    });
    assert.equal(await outbox.publishDue(), 3);
    const timer = setTimeout(() => dead.reject(new Error('no dead letter')), 20_000);
    await dead.promise;
    clearTimeout(timer);
    await taking;
    disconnect();
    assert.deepEqual(
      leased.map((d) => d.deliveryId).sort(),
      ids.filter((id) => id !== poison).sort(),
      'the others leased',
    );
    assert.equal(poisonClaims, DELIVERY_LIMIT, 'claimed alone once per delivery, up to the limit');
    const text = await registry.metrics();
    assert.match(text, /^tidings_broker_dead_lettered_total\{reason="delivery_limit"\} 1$/m);
    assert.match(text, new RegExp(`^tidings_broker_nacked_total ${DELIVERY_LIMIT}$`, 'm'));
    const line = logger.lines.find((l) => l.msg?.startsWith('broker dead-lettered a delivery id'));
    const logged = line?.obj as { deliveryId?: string; reason?: string } | undefined;
    assert.deepEqual(
      [logged?.deliveryId, logged?.reason, line?.level],
      [poison, 'delivery_limit', 'warn'],
      'one log line',
    );
    const row = await t.db.query<{ state: string }>('SELECT state FROM deliveries WHERE id = $1', [poison]);
    assert.equal(row.rows[0]?.state, 'pending', 'the row stays pending: the sweep publishes it again');
  },
);
