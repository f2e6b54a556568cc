import type { Channel } from 'rabbitmq-client';
import type { BrokerOptions } from '../../ports/broker.ts';

/*
 * The RabbitMQ topology of the broker transport (docs/guides/transports.md, "RabbitMQ"), every name under the prefix:
 *
 *   <prefix>.deliveries        direct exchange, durable; routing key = the shard number of the id's endpoint
 *   <prefix>.deliveries.<n>    quorum queue per shard n (0 … shards − 1), bound with key "<n>"; x-delivery-limit =
 *                              deliveryLimit − 1 (RabbitMQ counts returns, not deliveries), dead-letters to:
 *   <prefix>.dead              fanout exchange, durable
 *   <prefix>.dead-letters      quorum queue bound to it: the messages the broker dead-lettered, read by one
 *                              consumer among the dispatchers, which counts and logs them
 *
 * Declaring is idempotent: the same names with the same arguments. A queue declared before with other arguments
 * (another shard count is fine, another delivery limit is not) makes the declaration fail with PRECONDITION_FAILED:
 * such a change takes a new prefix, or a policy set on the queues by the operator.
 */

/** The names and arguments of one deployment's topology. */
export interface Topology {
  readonly exchange: string;
  readonly deadExchange: string;
  readonly deadLetterQueue: string;
  /** Queue names by shard number. */
  readonly queues: readonly string[];
  readonly queueArguments: Readonly<Record<string, string | number>>;
}

/** The topology of `options` (names under its prefix). */
export function topologyOf(options: Pick<BrokerOptions, 'prefix' | 'shards' | 'deliveryLimit'>): Topology {
  const { prefix } = options;
  const deadExchange = `${prefix}.dead`;
  return {
    exchange: `${prefix}.deliveries`,
    deadExchange,
    deadLetterQueue: `${prefix}.dead-letters`,
    queues: Array.from({ length: options.shards }, (_, n) => `${prefix}.deliveries.${n}`),
    queueArguments: {
      'x-queue-type': 'quorum',
      'x-delivery-limit': Math.max(0, options.deliveryLimit - 1),
      'x-dead-letter-exchange': deadExchange,
    },
  };
}

/** Declares every exchange, queue and binding of `topology` on `ch`; returns the ready messages of each queue. */
export async function declareTopology(ch: Channel, topology: Topology): Promise<{ shards: number[]; dead: number }> {
  await ch.exchangeDeclare({ exchange: topology.exchange, type: 'direct', durable: true });
  await ch.exchangeDeclare({ exchange: topology.deadExchange, type: 'fanout', durable: true });
  const dead = await ch.queueDeclare({
    queue: topology.deadLetterQueue,
    durable: true,
    arguments: { 'x-queue-type': 'quorum' },
  });
  await ch.queueBind({ queue: topology.deadLetterQueue, exchange: topology.deadExchange, routingKey: '' });
  const shards: number[] = [];
  for (const [n, queue] of topology.queues.entries()) {
    const ok = await ch.queueDeclare({ queue, durable: true, arguments: { ...topology.queueArguments } });
    await ch.queueBind({ queue, exchange: topology.exchange, routingKey: String(n) });
    shards.push(ok.messageCount);
  }
  return { shards, dead: dead.messageCount };
}
