import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import { createNatsTransport } from '../adapters/nats/nats-transport.ts';
import { createRabbitMqTransport } from '../adapters/rabbitmq/rabbitmq-transport.ts';
import type { Config } from '../config/config.ts';
import { registerBrokerMetrics, type BrokerMetrics } from '../observability/broker-metrics.ts';
import type { BrokerOptions, BrokerTransport } from '../ports/broker.ts';
import type { Logger } from '../ports/logger.ts';

/** A dispatcher process's broker transport with its metrics (TIDINGS_TRANSPORT other than postgres). */
export interface BrokerWiring {
  readonly transport: BrokerTransport;
  readonly metrics: BrokerMetrics;
}

/** The settings every broker adapter takes, from the configuration. */
export function brokerOptionsOf(config: Config): BrokerOptions {
  return {
    prefix: config.brokerPrefix,
    shards: config.brokerShards,
    deliveryLimit: config.brokerDeliveryLimit,
    reconnectMinMs: config.brokerReconnectMinMs,
    reconnectMaxMs: config.brokerReconnectMaxMs,
    publishTimeoutMs: config.brokerPublishTimeoutMs,
  };
}

/**
 * Makes the broker transport that TIDINGS_TRANSPORT names (not started), registers its metrics on `registry`, and logs
 * each change of its connection's state once (docs/guides/transports.md). Returns null for the PostgreSQL transport.
 * @throws Error for a transport this build has no adapter for
 */
export function createBrokerWiring(config: Config, registry: Registry, logger: Logger): BrokerWiring | null {
  if (config.transport === 'postgres') return null;
  let transport: BrokerTransport | undefined;
  // Set once the transport exists: the adapter reports restorations through this closure.
  const late: { metrics?: BrokerMetrics } = {};
  const connectionName = `tidings ${hostname()} ${process.pid}`;
  const restored = (reason: string): void => {
    late.metrics?.topologyRestored();
    const gone = config.transport === 'nats' ? 'a stream or consumer had gone' : 'a queue had gone';
    logger.warn({ transport: config.transport, reason }, `broker topology declared again: ${gone}`);
  };
  if (config.transport === 'rabbitmq') {
    transport = createRabbitMqTransport({
      ...brokerOptionsOf(config),
      url: config.rabbitmqUrl ?? '',
      connectionName,
      onTopologyRestored: restored,
    });
  }
  if (config.transport === 'nats') {
    transport = createNatsTransport({
      ...brokerOptionsOf(config),
      url: config.natsUrl ?? '',
      clientName: connectionName,
      onTopologyRestored: restored,
      ackWaitMs: config.natsAckWaitMs,
      maxAckPending: config.natsMaxAckPending,
      duplicateWindowMs: config.natsDuplicateWindowMs,
      pingIntervalMs: config.natsPingIntervalMs,
    });
  }
  if (transport === undefined) throw new Error(`TIDINGS_TRANSPORT=${config.transport}: no adapter in this build`);
  const t = transport;
  const m = registerBrokerMetrics(registry, { state: () => t.state(), depth: () => t.depth() });
  late.metrics = m;
  let everConnected = false;
  const setting = config.transport === 'rabbitmq' ? 'TIDINGS_RABBITMQ_URL' : 'TIDINGS_NATS_URL';
  t.onStateChange((change) => {
    m.stateChanged(change.state);
    if (change.state === 'connected') everConnected = true;
    const line = { transport: t.name, state: change.state, previous: change.previous, reason: change.reason };
    if (change.state !== 'disconnected') {
      logger.info(line, `broker ${change.state}`);
      return;
    }
    const what = everConnected ? 'broker connection lost' : 'broker could not connect';
    const cause = permanentCauseOf(change.reason ?? '', setting);
    const retrying = 'retrying with back-off; due deliveries wait in PostgreSQL';
    if (cause === null) logger.warn(line, `${what}: ${retrying}`);
    else logger.error({ ...line, cause }, `${what}: ${cause}; ${retrying}`);
  });
  return { transport: t, metrics: m };
}

/** Causes of a failed connection that retrying alone does not cure, by what the broker or client said. */
const PERMANENT_CAUSES: readonly { readonly pattern: RegExp; readonly cause: (setting: string) => string }[] = [
  {
    pattern: /ACCESS_REFUSED|authori[sz]ation violation|authentication/i,
    cause: (setting) => `the broker refused the credentials (check the user and password in ${setting})`,
  },
  {
    pattern: /vhost .* not found|NOT_ALLOWED/i,
    cause: (setting) => `the virtual host is missing or not allowed to this user (check the vhost in ${setting})`,
  },
];

/**
 * A likely-permanent cause of a failed connection (wrong credentials, a missing virtual host) as a sentence naming the
 * setting to check, or null when the failure may pass by itself (broker down, network).
 */
export function permanentCauseOf(reason: string, setting: string): string | null {
  return PERMANENT_CAUSES.find((c) => c.pattern.test(reason))?.cause(setting) ?? null;
}
