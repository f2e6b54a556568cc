/**
 * The work-source contract's fixture for any broker transport (work-source-contract.ts): the transport's outbox
 * publisher, broker sources and fenced claim by id over PostgreSQL. A transport's test passes its factory and cleanup.
 */
import { createPgBrokerOutboxStore } from '../../src/adapters/postgres/delivery/broker-outbox-store.ts';
import { createBrokerSource } from '../../src/app/dispatcher/broker-source.ts';
import { systemTimers } from '../../src/app/dispatcher/loop-timers.ts';
import { createOutboxPublisher } from '../../src/app/dispatcher/outbox-publisher.ts';
import type { BrokerItem, BrokerOptions, BrokerTransport } from '../../src/ports/broker.ts';
import { silentLogger } from '../support/logger.ts';
import { testPrefix } from '../support/rabbitmq.ts';
import { waitFor, type TransportUnderTest } from './work-source-contract.ts';

/** `at` 457 µs later, as text with microseconds (what PostgreSQL reads as a timestamptz). */
function withMicroseconds(at: Date | null): Date | null {
  if (at === null) return null;
  return `${at.toISOString().slice(0, -1)}457Z` as unknown as Date;
}

/**
 * A broker transport's fixture: one transport publishes for the outbox, each source consumes through one of its own;
 * `received` counts the messages of each id the sources got, `expected` the messages published for it.
 */
export function brokerFixture(
  name: string,
  make: (options: BrokerOptions) => BrokerTransport,
  cleanup: (prefix: string, shards: number) => Promise<void>,
): TransportUnderTest {
  return {
    name,
    async open(db, cipher, clock) {
      const options: BrokerOptions = {
        prefix: testPrefix(),
        shards: 2,
        deliveryLimit: 5,
        reconnectMinMs: 50,
        reconnectMaxMs: 500,
        publishTimeoutMs: 5_000,
      };
      const outboxStore = createPgBrokerOutboxStore(db, cipher);
      const publisher = make(options);
      await publisher.start({ waitForBroker: false });
      const expected = new Map<string, number>();
      const received = new Map<string, number>();
      const waits = new Set<() => void>();
      let published: string[] = [];
      let failNext = false;
      let swept = 0;
      const count = (map: Map<string, number>, id: string): void => {
        map.set(id, (map.get(id) ?? 0) + 1);
      };
      const recording: BrokerTransport = {
        ...publisher,
        name: publisher.name,
        publish: async (items) => {
          if (failNext) {
            failNext = false;
            return { confirmed: [], failed: items.map((i) => i.deliveryId) };
          }
          const outcome = await publisher.publish(items);
          for (const id of outcome.confirmed) {
            count(expected, id);
            published.push(id);
          }
          return outcome;
        },
      };
      const outbox = createOutboxPublisher({
        store: outboxStore,
        transport: recording,
        // The database clock has microseconds and a stamp in whole milliseconds would hide a stamp compared in
        // milliseconds: the outbox stamps 0.457 ms after the test clock's instant.
        clock: { sqlNow: () => withMicroseconds(clock.sqlNow()) },
        timers: systemTimers,
        logger: silentLogger,
        observer: {
          published: (_count, n) => {
            swept += n;
          },
        },
        settings: { intervalMs: 60_000, batch: 100, endpointAhead: 8, sweepAfterMs: 60_000, maxReclaims: 5 },
      });
      let sources: BrokerTransport[] = [];
      return {
        source(dispatcherId) {
          const transport = make(options);
          sources.push(transport);
          void transport.start();
          const counted: BrokerTransport = {
            ...transport,
            name: transport.name,
            consume: (o) =>
              transport.consume({
                ...o,
                onMessage: (m) => {
                  count(received, m.deliveryId);
                  o.onMessage(m);
                  for (const w of waits) w();
                },
              }),
          };
          return createBrokerSource({
            transport: counted,
            store: outboxStore,
            clock,
            maxInFlight: 50,
            sweepEveryMs: 0,
            logger: silentLogger.child({ dispatcherId }),
          });
        },
        async pump() {
          published = [];
          await outbox.publishDue();
          return published;
        },
        async arrived(ids) {
          const w = waitFor(
            () => ids.every((id) => (received.get(id) ?? 0) >= (expected.get(id) ?? 0)),
            `messages of ${ids.join(',')}`,
          );
          waits.add(w.poke);
          try {
            await w.done;
          } finally {
            waits.delete(w.poke);
          }
        },
        failNextPublish() {
          failNext = true;
        },
        sweptCount: () => swept,
        async duplicate(items: readonly BrokerItem[]) {
          await recording.publish(items);
        },
        async endTest() {
          for (const s of sources.splice(0)) await s.stop();
          sources = [];
        },
        async close() {
          await publisher.stop();
          await cleanup(options.prefix, options.shards);
        },
      };
    },
  };
}
