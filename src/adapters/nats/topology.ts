import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import type { BrokerOptions } from '../../ports/broker.ts';

/*
 * The NATS JetStream topology of the broker transport (docs/guides/transports.md, "NATS JetStream"), every name under
 * the prefix (`.` in the prefix becomes `_` in stream and consumer names, which cannot hold a dot):
 *
 *   <P>_deliveries            stream, retention workqueue (a message is removed once acknowledged), file storage;
 *                             subjects <prefix>.deliveries.<n>, one per shard n (0 … shards − 1)
 *   <P>_deliveries_<n>        durable pull consumer per shard, filtered on its subject (a workqueue stream allows
 *                             several consumers whose filters do not overlap): explicit ack, ack_wait, max_deliver =
 *                             deliveryLimit, max_ack_pending
 *   <P>_dead_letters          stream of the server's MAX_DELIVERIES advisories for the consumers of <P>_deliveries
 *                             (retention workqueue): a message delivered deliveryLimit times stays in <P>_deliveries,
 *                             unconsumed; the advisory names its stream sequence
 *   <P>_dead_letters          durable pull consumer of that stream, read by one dispatcher at a time, which reads the
 *                             id from <P>_deliveries, reports it (metric + log) and deletes the message there
 *
 * Declaring is idempotent: a stream or consumer that exists with the same configuration is left as it is; one with
 * another configuration is updated to this one (the server refuses changes it cannot make, such as the retention:
 * such a change takes a new prefix).
 */

/** The names and settings of one deployment's topology. */
export interface NatsTopology {
  readonly stream: string;
  /** Subject of shard n: `<prefix>.deliveries.<n>`. */
  readonly subjects: readonly string[];
  /** Consumer name by shard number. */
  readonly consumers: readonly string[];
  readonly deadStream: string;
  readonly deadConsumer: string;
  /** The advisory subjects the dead-letter stream captures. */
  readonly deadSubjects: readonly string[];
  readonly ackWaitMs: number;
  readonly maxDeliver: number;
  readonly maxAckPending: number;
  readonly duplicateWindowMs: number;
}

/** What the topology needs beyond {@link BrokerOptions}. */
export interface NatsTopologySettings {
  /** The consumers' ack_wait: a message neither acknowledged nor marked in progress this long is redelivered. */
  readonly ackWaitMs: number;
  /** The consumers' max_ack_pending: messages of one shard out and unacknowledged at once, over every dispatcher. */
  readonly maxAckPending: number;
  /** The stream's duplicate_window: a repeated Nats-Msg-Id within it is stored once. */
  readonly duplicateWindowMs: number;
}

const NS_PER_MS = 1_000_000;

/** The topology of `options` (names under its prefix). */
export function natsTopologyOf(
  options: Pick<BrokerOptions, 'prefix' | 'shards' | 'deliveryLimit'>,
  settings: NatsTopologySettings,
): NatsTopology {
  const base = options.prefix.replaceAll('.', '_');
  const stream = `${base}_deliveries`;
  const shards = Array.from({ length: Math.max(1, options.shards) }, (_, n) => n);
  return {
    stream,
    subjects: shards.map((n) => `${options.prefix}.deliveries.${n}`),
    consumers: shards.map((n) => `${stream}_${n}`),
    deadStream: `${base}_dead_letters`,
    deadConsumer: `${base}_dead_letters`,
    deadSubjects: [`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.*`],
    ackWaitMs: settings.ackWaitMs,
    maxDeliver: Math.max(1, options.deliveryLimit),
    maxAckPending: settings.maxAckPending,
    duplicateWindowMs: settings.duplicateWindowMs,
  };
}

/** The stream configurations of `topology`. */
export function streamConfigs(topology: NatsTopology): { work: Partial<StreamConfig>; dead: Partial<StreamConfig> } {
  const common = { retention: RetentionPolicy.Workqueue, storage: StorageType.File, discard: DiscardPolicy.Old };
  return {
    work: {
      ...common,
      name: topology.stream,
      subjects: [...topology.subjects],
      duplicate_window: topology.duplicateWindowMs * NS_PER_MS,
    },
    dead: { ...common, name: topology.deadStream, subjects: [...topology.deadSubjects] },
  };
}

/** The configuration of shard `n`'s consumer. */
export function shardConsumerConfig(topology: NatsTopology, n: number): Partial<ConsumerConfig> {
  return {
    durable_name: topology.consumers[n] ?? '',
    filter_subject: topology.subjects[n] ?? '',
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.Explicit,
    ack_wait: topology.ackWaitMs * NS_PER_MS,
    max_deliver: topology.maxDeliver,
    max_ack_pending: topology.maxAckPending,
  };
}

function isApiError(error: unknown, ...codes: number[]): boolean {
  return error instanceof JetStreamApiError && (codes.length === 0 || codes.includes(error.code));
}

async function declareStream(jsm: JetStreamManager, config: Partial<StreamConfig>): Promise<void> {
  const name = config.name ?? '';
  try {
    await jsm.streams.add({ ...config, name });
  } catch (error) {
    // 10058: the name is in use with another configuration.
    if (!isApiError(error, 10058)) throw error;
    await jsm.streams.update(name, config);
  }
}

async function declareConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig>): Promise<void> {
  try {
    await jsm.consumers.add(stream, config);
  } catch (error) {
    // Another configuration under the name (10013 before server 2.10, 10148 since): update it.
    if (!isApiError(error) || isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
    await jsm.consumers.update(stream, config.durable_name ?? '', config);
  }
}

/**
 * Declares both streams and every consumer of `topology` (idempotent); rejects with the server's error when one
 * cannot be declared (JetStream disabled, a configuration the server refuses to change).
 */
export async function declareNatsTopology(jsm: JetStreamManager, topology: NatsTopology): Promise<void> {
  const streams = streamConfigs(topology);
  await declareStream(jsm, streams.work);
  await declareStream(jsm, streams.dead);
  for (let n = 0; n < topology.consumers.length; n += 1) {
    await declareConsumer(jsm, topology.stream, shardConsumerConfig(topology, n));
  }
  await declareConsumer(jsm, topology.deadStream, {
    durable_name: topology.deadConsumer,
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.Explicit,
    ack_wait: topology.ackWaitMs * NS_PER_MS,
  });
}

/** The stream or a consumer of the topology is gone (deleted by hand, or the server lost its state). */
export function isMissingTopology(error: unknown): boolean {
  if (isApiError(error, JetStreamApiCodes.StreamNotFound, JetStreamApiCodes.ConsumerNotFound)) return true;
  const text = error instanceof Error ? `${error.name} ${error.message}` : '';
  return /stream not found|consumer not found|consumer deleted|no responders|not enabled|503/i.test(text);
}
