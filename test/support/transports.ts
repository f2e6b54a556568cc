/**
 * The transports the end-to-end and fault suites run over (docs/guides/transports.md), each as one small object that
 * holds everything in which it differs from the others: how its stage is made (broker-world.ts, with the transport's
 * settings and the deletion of its names at the end), what /readyz says, whether the outbox stamps rows, how a test
 * reaches the broker through a TCP proxy, how an operator would delete its work queue or stream, and how a redelivery
 * is counted. A suite loops over {@link TRANSPORTS} (or {@link BROKER_TRANSPORTS}) and asserts the same things of each.
 */
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config/config.ts';
import { createBrokerWiring } from '../../src/main/broker-transport.ts';
import { shardOf, type BrokerItem } from '../../src/ports/broker.ts';
import { BROKER_SHARDS, createBrokerWorld, type BrokerWorld } from './broker-world.ts';
import { metricValue } from './fault-world.ts';
import { deleteNatsTopology, deleteStream, NATS_URL, natsAddress, natsStreams, proxiedNatsUrl } from './nats.ts';
import { deleteQueue, deleteTopology, proxiedUrl, RABBITMQ_URL } from './rabbitmq.ts';
import { silentLogger } from './logger.ts';
import type { TidingsProcess } from './tidings-process.ts';

/** What every transport gives a suite. */
export interface TransportUnderTest {
  readonly name: 'postgres' | 'rabbitmq' | 'nats';
  /** Its name in test titles. */
  readonly title: string;
  /** A stage on this transport: `settings` over the stage's own. */
  world(settings?: Readonly<Record<string, string>>): Promise<BrokerWorld>;
  /** The body of a ready dispatcher's /readyz. */
  readonly ready: Readonly<Record<string, string>>;
  /** Whether its deliveries go through the outbox (`broker_published_at` stamped); never with PostgreSQL. */
  readonly outbox: boolean;
}

/** What a broker transport gives the fault suite besides. */
export interface BrokerUnderTest extends TransportUnderTest {
  readonly name: 'rabbitmq' | 'nats';
  /** The broker's address, for a TCP proxy in front of it. */
  address(): { host: string; port: number };
  /** The settings that point a process at the broker through a proxy on `port`. */
  through(port: number): Record<string, string>;
  /** What {@link deleteWork} deletes, in test titles. */
  readonly work: string;
  /** Deletes, as an operator would by hand, the queue or stream that holds the ids of `endpointId`. */
  deleteWork(world: BrokerWorld, endpointId: string): Promise<void>;
  /** Messages a dispatcher received again after a lost ack, as its metrics count them. */
  receivedAgain(metrics: string): number;
}

/** The metrics text of a process's admin server. */
export async function metricsOf(process: TidingsProcess): Promise<string> {
  return await (await fetch(`${process.adminUrl}/metrics`)).text();
}

/**
 * Publishes `items` to the broker of a stage, with the confirmation, as a dispatcher's outbox of that stage would (the
 * transport and settings of its processes), from a connection of its own, closed afterwards.
 */
export async function publishIds(world: BrokerWorld, items: readonly BrokerItem[]): Promise<void> {
  const wiring = createBrokerWiring(loadConfig(world.env()), new Registry(), silentLogger);
  if (wiring === null) throw new Error('the stage has no broker');
  try {
    await wiring.transport.start({ waitForBroker: false });
    const outcome = await wiring.transport.publish(items);
    if (outcome.failed.length > 0) throw new Error(`not confirmed: ${outcome.failed.join(', ')}`);
  } finally {
    await wiring.transport.stop();
  }
}

export const POSTGRES: TransportUnderTest = {
  name: 'postgres',
  title: 'PostgreSQL',
  world: (settings = {}) => createBrokerWorld({ TIDINGS_TRANSPORT: 'postgres', ...settings }, async () => undefined),
  ready: { status: 'ready' },
  outbox: false,
};

export const RABBITMQ: BrokerUnderTest = {
  name: 'rabbitmq',
  title: 'RabbitMQ',
  world: (settings = {}) =>
    createBrokerWorld({ TIDINGS_TRANSPORT: 'rabbitmq', TIDINGS_RABBITMQ_URL: RABBITMQ_URL, ...settings }, (prefix) =>
      deleteTopology(prefix, BROKER_SHARDS),
    ),
  ready: { status: 'ready', transport: 'rabbitmq', broker: 'connected' },
  outbox: true,
  address: () => ({ host: new URL(RABBITMQ_URL).hostname, port: Number(new URL(RABBITMQ_URL).port || 5672) }),
  through: (port) => ({ TIDINGS_RABBITMQ_URL: proxiedUrl(port) }),
  work: 'a shard queue',
  deleteWork: (world, endpointId) => deleteQueue(`${world.prefix}.deliveries.${shardOf(endpointId, BROKER_SHARDS)}`),
  receivedAgain: (metrics) => Number(/^tidings_broker_received_total\{redelivered="true"\} (\d+)/m.exec(metrics)?.[1]),
};

export const NATS: BrokerUnderTest = {
  name: 'nats',
  title: 'NATS JetStream',
  // An ack wait as short as the stage's lease (3 s).
  world: (settings = {}) =>
    createBrokerWorld(
      { TIDINGS_TRANSPORT: 'nats', TIDINGS_NATS_URL: NATS_URL, TIDINGS_NATS_ACK_WAIT: '3s', ...settings },
      (prefix) => deleteNatsTopology(prefix),
    ),
  ready: { status: 'ready', transport: 'nats', broker: 'connected' },
  outbox: true,
  address: natsAddress,
  through: (port) => ({ TIDINGS_NATS_URL: proxiedNatsUrl(port) }),
  work: 'the work stream',
  async deleteWork(world) {
    if (!(await deleteStream(natsStreams(world.prefix).stream))) throw new Error('the work stream did not exist');
  },
  // nats-server 2.9 may count the message again as a first delivery (it had first tried the dead connection's pull).
  receivedAgain: (metrics) => metricValue(metrics, 'tidings_broker_received_total'),
};

export const BROKER_TRANSPORTS: readonly BrokerUnderTest[] = [RABBITMQ, NATS];
export const TRANSPORTS: readonly TransportUnderTest[] = [POSTGRES, ...BROKER_TRANSPORTS];
