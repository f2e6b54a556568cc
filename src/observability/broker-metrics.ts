import { Counter, Gauge, type Registry } from 'prom-client';
import type { BrokerDeadLetter, BrokerDepth, BrokerState } from '../ports/broker.ts';
import { upGauge, zeroedCounter } from './metric-kinds.ts';

/** How a broker message ended on a dispatcher (the `how` label). */
export const BROKER_ACK_KINDS = ['recorded', 'released', 'not_due', 'gated', 'duplicate'] as const;
/** Why the broker dead-lettered a message (the `reason` label): its delivery limit, a `term`, or anything else. */
export const BROKER_DEAD_REASONS = ['delivery_limit', 'terminated', 'other'] as const;
/** The states of a broker connection (the `state` label). */
export const BROKER_STATES: readonly BrokerState[] = ['connecting', 'connected', 'disconnected', 'stopped'];

/** What the gauges read at each scrape. */
export interface BrokerGaugeSource {
  state(): BrokerState;
  depth(): Promise<BrokerDepth | null>;
}

/** The counters a dispatcher process with a broker transport moves. */
export interface BrokerMetrics {
  published(count: number, swept: number): void;
  publishFailed(count: number): void;
  received(redelivered: boolean): void;
  acknowledged(how: (typeof BROKER_ACK_KINDS)[number], count: number): void;
  nacked(count: number): void;
  deadLettered(letter: BrokerDeadLetter): void;
  stateChanged(state: BrokerState): void;
  topologyRestored(): void;
}

/**
 * Registers the metrics of a broker transport on `registry` (docs/reference/metrics.md, docs/guides/transports.md), for
 * a dispatcher process with TIDINGS_TRANSPORT set to a broker. Every labelled counter starts at 0 for each of its
 * values. No delivery, endpoint or application id is a label.
 */
export function registerBrokerMetrics(registry: Registry, source: BrokerGaugeSource): BrokerMetrics {
  const registers = [registry];
  const published = new Counter({
    name: 'tidings_broker_published_total',
    registers,
    help: "Delivery ids the broker confirmed, published by the outbox (the sweep's included).",
  });
  const swept = new Counter({
    name: 'tidings_broker_swept_total',
    registers,
    help:
      'Delivery ids published again by the sweep: published TIDINGS_BROKER_SWEEP_AFTER ago or more and still due ' +
      '(their message was lost).',
  });
  const failed = new Counter({
    name: 'tidings_broker_publish_failed_total',
    registers,
    help:
      'Delivery ids the broker did not confirm (down, refused, unroutable, timed out): published again by a ' +
      'later round.',
  });
  const received = zeroedCounter(
    registry,
    {
      name: 'tidings_broker_received_total',
      help: 'Broker messages received by this dispatcher, by whether the broker had delivered them before.',
    },
    'redelivered',
    ['true', 'false'],
  );
  const acknowledged = zeroedCounter(
    registry,
    {
      name: 'tidings_broker_acknowledged_total',
      help:
        'Broker messages acknowledged, by how they ended: recorded, released (given up without a record), ' +
        'not_due, gated, duplicate.',
    },
    'how',
    BROKER_ACK_KINDS,
  );
  const nacked = new Counter({
    name: 'tidings_broker_nacked_total',
    registers,
    help:
      'Broker messages given back because the claim of their id failed alone: they count toward ' +
      'TIDINGS_BROKER_DELIVERY_LIMIT.',
  });
  const dead = zeroedCounter(
    registry,
    {
      name: 'tidings_broker_dead_lettered_total',
      help:
        'Broker messages the broker dead-lettered, by reason (delivery_limit: a delivery whose claim kept ' +
        'failing); the delivery stays pending.',
    },
    'reason',
    BROKER_DEAD_REASONS,
  );
  const changes = zeroedCounter(
    registry,
    {
      name: 'tidings_broker_state_changes_total',
      help: "Changes of the broker connection's state, by the state entered.",
    },
    'state',
    BROKER_STATES,
  );
  const restored = new Counter({
    name: 'tidings_broker_topology_restored_total',
    registers,
    help: 'Times the broker topology was declared again because a queue had gone (deleted by hand).',
  });
  upGauge(
    registry,
    { name: 'tidings_broker_up', help: '1 while the broker connection is up with its topology declared, else 0.' },
    () => source.state() === 'connected',
  );
  new Gauge({
    name: 'tidings_broker_depth',
    labelNames: ['queue'] as const,
    registers,
    help:
      'Messages waiting in the broker (queue="deliveries": published and not yet handed to a consumer, over ' +
      'every shard; queue="dead_letters"); NaN while it cannot be asked.',
    async collect() {
      const depth = await source.depth().catch(() => null);
      this.set({ queue: 'deliveries' }, depth?.waiting ?? Number.NaN);
      this.set({ queue: 'dead_letters' }, depth?.deadLetters ?? Number.NaN);
    },
  });
  return {
    published(count, sweptCount) {
      published.inc(count);
      if (sweptCount > 0) swept.inc(sweptCount);
    },
    publishFailed: (count) => failed.inc(count),
    received: (redelivered) => received.inc({ redelivered: String(redelivered) }),
    acknowledged: (how, count) => acknowledged.inc({ how }, count),
    nacked: (count) => nacked.inc(count),
    deadLettered(letter) {
      const reason = (BROKER_DEAD_REASONS as readonly string[]).includes(letter.reason) ? letter.reason : 'other';
      dead.inc({ reason });
    },
    stateChanged: (state) => changes.inc({ state }),
    topologyRestored: () => restored.inc(),
  };
}
