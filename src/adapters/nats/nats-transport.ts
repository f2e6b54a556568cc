import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type {
  BrokerConsumer,
  BrokerDepth,
  BrokerItem,
  BrokerOptions,
  BrokerTransport,
  PublishOutcome,
} from '../../ports/broker.ts';
import { startDeadLetterReader } from './dead-letter-reader.ts';
import { createNatsLink } from './nats-link.ts';
import { publishItems } from './publisher.ts';
import { startShardPuller, type ShardPuller } from './shard-puller.ts';
import { declareNatsTopology, natsTopologyOf, type NatsTopologySettings } from './topology.ts';

/*
 * The NATS JetStream broker transport (src/ports/broker.ts; docs/guides/transports.md, "NATS JetStream"): the
 * topology of ./topology.ts, the connection and its states of ./nats-link.ts, publishing with JetStream
 * acknowledgements (./publisher.ts), one pull loop per shard consumer (./shard-puller.ts) and the reader of the
 * server's max-deliveries advisories (./dead-letter-reader.ts).
 */

/** Settings of the NATS transport beyond {@link BrokerOptions}. Durations in ms. */
export interface NatsTransportOptions extends BrokerOptions, NatsTopologySettings {
  /** `nats://host:port`; several servers of one cluster comma-separated. */
  readonly url: string;
  /** Client ping interval: a connection that answers no ping for about two of them is taken as lost. */
  readonly pingIntervalMs: number;
  /** Longest wait of one pull request for messages (≥ 1000; default 30 s, the client's own). */
  readonly fetchExpiresMs?: number;
  /** Client name shown by the server's monitoring (default `tidings`). */
  readonly clientName?: string;
  /**
   * Called when a stream or consumer was found missing (deleted by hand, or lost by the server) and was declared
   * again, with what found it missing.
   */
  readonly onTopologyRestored?: (reason: string) => void;
}

interface Clients {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
}

/** Creates the transport (not yet started). */
export function createNatsTransport(options: NatsTransportOptions): BrokerTransport {
  const topology = natsTopologyOf(options, options);
  const fetchExpiresMs = Math.max(1000, options.fetchExpiresMs ?? 30_000);
  const apiTimeoutMs = Math.max(1000, options.publishTimeoutMs);
  let clients: Clients | null = null;
  let redeclaring: Promise<void> | null = null;
  let puller: ShardPuller | null = null;
  let stopDeadLetters: (() => Promise<void>) | null = null;

  const link = createNatsLink({
    url: options.url,
    reconnectMinMs: options.reconnectMinMs,
    reconnectMaxMs: options.reconnectMaxMs,
    connectTimeoutMs: apiTimeoutMs,
    pingIntervalMs: options.pingIntervalMs,
    name: options.clientName ?? 'tidings',
    async onUp(nc) {
      const jsm = await jetstreamManager(nc, { timeout: apiTimeoutMs });
      await declareNatsTopology(jsm, topology);
      clients = { nc, js: jetstream(nc, { timeout: apiTimeoutMs }), jsm };
    },
  });
  link.onStateChange((change) => {
    if (change.state !== 'connected') puller?.interrupt();
  });

  const live = (): Clients | null => (link.connection() !== null && clients?.nc === link.connection() ? clients : null);

  /**
   * Declares the topology again (one at a time) and tells `onTopologyRestored`. It waits reconnectMinMs first: a
   * consumer hears of a deletion while the server is still deleting, and a stream declared before the deletion has
   * finished is left registered without its files (seen on nats-server 2.9), refusing every publish.
   */
  const redeclare = (reason: string): Promise<void> => {
    redeclaring ??= (async () => {
      await new Promise((resolve) => {
        setTimeout(resolve, options.reconnectMinMs).unref();
      });
      const c = live();
      if (c === null) return;
      await declareNatsTopology(c.jsm, topology);
      options.onTopologyRestored?.(reason);
    })().finally(() => {
      redeclaring = null;
    });
    return redeclaring;
  };

  const allFailed = (items: readonly BrokerItem[]): PublishOutcome => ({
    confirmed: [],
    failed: items.map((i) => i.deliveryId),
  });

  return {
    name: 'nats',
    start: (startOptions) => link.start(startOptions?.waitForBroker ?? true),
    async publish(items) {
      const c = live();
      if (c === null || items.length === 0) return c === null ? allFailed(items) : { confirmed: [], failed: [] };
      const report = await publishItems(c.js, { topology, publishTimeoutMs: options.publishTimeoutMs }, items);
      if (report.topologyMissing) await redeclare('publish: no stream answered').catch(() => undefined);
      return { confirmed: report.confirmed, failed: report.failed };
    },
    consume(consumeOptions): BrokerConsumer {
      if (puller !== null) throw new Error('the NATS transport already has a consumer');
      const context = {
        topology,
        fetchExpiresMs,
        retryMs: options.reconnectMinMs,
        redeclare,
        whenConnected: () => link.whenConnected(),
      };
      const running = startShardPuller({ ...context, jetstream: () => live()?.js ?? null }, consumeOptions);
      puller = running;
      const onDeadLetter = consumeOptions.onDeadLetter;
      if (onDeadLetter !== undefined) {
        stopDeadLetters = startDeadLetterReader({ ...context, clients: live }, onDeadLetter);
      }
      return {
        async cancel() {
          await running.cancel();
          await stopDeadLetters?.();
        },
      };
    },
    async depth(): Promise<BrokerDepth | null> {
      const c = live();
      if (c === null) return null;
      try {
        const infos = await Promise.all(topology.consumers.map((name) => c.jsm.consumers.info(topology.stream, name)));
        const dead = await c.jsm.streams.info(topology.deadStream);
        return {
          waiting: infos.reduce((sum, info) => sum + info.num_pending, 0),
          unacknowledged: infos.reduce((sum, info) => sum + info.num_ack_pending, 0),
          deadLetters: dead.state.messages,
        };
      } catch {
        return null;
      }
    },
    state: () => link.state(),
    onStateChange: (listener) => link.onStateChange(listener),
    async stop() {
      if (link.state() === 'stopped') return;
      await puller?.cancel();
      await stopDeadLetters?.();
      puller?.nackHeld();
      await link.stop();
      clients = null;
    },
  };
}
