import { z } from 'zod';
import { int, durationMs, natsUrlList, type SettingTable } from '../parse.ts';

/** How work reaches dispatchers through RabbitMQ or NATS JetStream instead of the claim (docs/guides/transports.md). */
export const BROKER_SETTINGS = {
  transport: {
    env: 'TIDINGS_TRANSPORT',
    schema: z.enum(['postgres', 'rabbitmq', 'nats']),
    defaultValue: 'postgres',
    unit: 'transport',
    description:
      'How due deliveries reach dispatchers: postgres (the claim over the delivery rows and the publish ' +
      'hand-off; nothing else needed), rabbitmq (TIDINGS_RABBITMQ_URL) or nats (NATS JetStream, ' +
      'TIDINGS_NATS_URL). With a broker the rows stay the truth and the outbox: each dispatcher process ' +
      'publishes due delivery ids, leases each id it receives with the fenced claim, and acknowledges the ' +
      'message after the record (docs/guides/transports.md).',
  },
  rabbitmqUrl: {
    env: 'TIDINGS_RABBITMQ_URL',
    schema: z
      .string()
      .url()
      .refine((u) => /^amqps?:$/.test(new URL(u).protocol), 'must be an amqp:// or amqps:// URL')
      .optional(),
    defaultValue: undefined,
    unit: 'URL',
    description:
      'RabbitMQ (3.8+, quorum queues) of TIDINGS_TRANSPORT=rabbitmq, e.g. ' +
      'amqp://user:password@rabbitmq:5672/vhost.',
  },
  natsUrl: {
    env: 'TIDINGS_NATS_URL',
    schema: natsUrlList.optional(),
    defaultValue: undefined,
    unit: 'URL',
    description:
      'NATS server (2.9+, JetStream enabled) of TIDINGS_TRANSPORT=nats, e.g. nats://user:password@nats:4222; ' +
      'the servers of one cluster comma-separated.',
  },
  natsAckWaitMs: {
    env: 'TIDINGS_NATS_ACK_WAIT',
    schema: durationMs(1000),
    defaultValue: '60s',
    unit: 'duration',
    description:
      "NATS consumers' ack_wait: a message neither acknowledged nor marked in progress for this long is " +
      'delivered again. A dispatcher marks the messages it holds in progress every third of it, so only the ' +
      'messages of a dispatcher that died or was cut off come back, after about this long; at least ' +
      'TIDINGS_LEASE, so that such a message finds its lease expired.',
  },
  natsMaxAckPending: {
    env: 'TIDINGS_NATS_MAX_ACK_PENDING',
    schema: int(1, 1_000_000),
    defaultValue: '10000',
    unit: 'messages',
    description:
      "NATS consumers' max_ack_pending: messages of one shard handed out and not yet acknowledged, over every " +
      'dispatcher; past it the server hands out no more of that shard until some are acknowledged. A ' +
      'dispatcher holds at most its part of TIDINGS_BROKER_MAX_IN_FLIGHT per shard (by default ' +
      'TIDINGS_CONCURRENCY + TIDINGS_BROKER_ENDPOINT_AHEAD, 64): the default serves about 150 dispatchers.',
  },
  natsDuplicateWindowMs: {
    env: 'TIDINGS_NATS_DUPLICATE_WINDOW',
    schema: durationMs(1000),
    defaultValue: '2m',
    unit: 'duration',
    description:
      "NATS stream's duplicate_window: a publish sent again after its acknowledgement was lost (the same " +
      'Nats-Msg-Id) within this long is stored once.',
  },
  natsPingIntervalMs: {
    env: 'TIDINGS_NATS_PING_INTERVAL',
    schema: durationMs(1000),
    defaultValue: '10s',
    unit: 'duration',
    description:
      "Time between the client's pings to the NATS server: a connection that answers none for about two of " +
      'them is taken as lost and reconnected (one log line).',
  },
  brokerPrefix: {
    env: 'TIDINGS_BROKER_PREFIX',
    schema: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, ".", "-" and "_" (at most 100)'),
    defaultValue: 'tidings',
    unit: 'name',
    description:
      'Prefix of every queue, exchange, stream and subject a broker transport declares; deployments sharing a ' +
      'broker need different ones.',
  },
  brokerShards: {
    env: 'TIDINGS_BROKER_SHARDS',
    schema: int(1, 256),
    defaultValue: '8',
    unit: 'queues',
    description:
      'Queues (RabbitMQ) or subjects (NATS) the delivery ids are spread over by a hash of their endpoint, each ' +
      'consumed with its part of TIDINGS_BROKER_MAX_IN_FLIGHT: ids of an endpoint whose messages wait hold up ' +
      'only the endpoints of their shard.',
  },
  brokerMaxInFlight: {
    env: 'TIDINGS_BROKER_MAX_IN_FLIGHT',
    schema: int(0, 1_000_000),
    defaultValue: '0',
    unit: 'messages',
    description:
      'Broker messages a dispatcher holds unacknowledged (in flight until their record, or waiting for room in ' +
      'its window), over all shards: the prefetch, spread evenly over the shards. 0 = TIDINGS_CONCURRENCY + ' +
      'TIDINGS_BROKER_ENDPOINT_AHEAD per shard, so that one endpoint holding its share in flight (a black ' +
      "hole) never fills its shard's prefetch.",
  },
  brokerEndpointAhead: {
    env: 'TIDINGS_BROKER_ENDPOINT_AHEAD',
    schema: int(1, 100_000),
    defaultValue: '32',
    unit: 'ids',
    description:
      "Most ids of one endpoint published to the broker and not yet leased: the outbox publishes an endpoint's " +
      'first due deliveries only, within its in-flight cap, rate limit and breaker; the rest of a backlog ' +
      'waits in PostgreSQL.',
  },
  brokerDeliveryLimit: {
    env: 'TIDINGS_BROKER_DELIVERY_LIMIT',
    schema: int(1, 1000),
    defaultValue: '10',
    unit: 'deliveries',
    description:
      'Deliveries of one broker message without an acknowledgement before the broker dead-letters it (a ' +
      'delivery whose claim keeps failing): counted in tidings_broker_dead_lettered_total and logged; the ' +
      'delivery stays pending and the sweep publishes it again.',
  },
  brokerPublishIntervalMs: {
    env: 'TIDINGS_BROKER_PUBLISH_INTERVAL',
    schema: durationMs(10),
    defaultValue: '500ms',
    unit: 'duration',
    description:
      "Time between two rounds of a dispatcher's outbox publisher when no publish wakes it: retries coming " +
      'due, cool-downs and leases ending are published within it.',
  },
  brokerPublishBatch: {
    env: 'TIDINGS_BROKER_PUBLISH_BATCH',
    schema: int(1, 10_000),
    defaultValue: '500',
    unit: 'ids',
    description: 'Most delivery ids stamped and published by one statement of the outbox publisher.',
  },
  brokerSweepAfterMs: {
    env: 'TIDINGS_BROKER_SWEEP_AFTER',
    schema: durationMs(100),
    defaultValue: '60s',
    unit: 'duration',
    description:
      'A delivery published this long ago and still due is published again (its message was lost: a broker ' +
      'restart without it, a publish lost, a crash between commit and publish, a queue deleted by hand). ' +
      'Counted in tidings_broker_swept_total. Must exceed TIDINGS_BROKER_PUBLISH_INTERVAL.',
  },
  brokerReconnectMinMs: {
    env: 'TIDINGS_BROKER_RECONNECT_MIN',
    schema: durationMs(10),
    defaultValue: '500ms',
    unit: 'duration',
    description:
      'First wait before reconnecting to the broker; it doubles up to TIDINGS_BROKER_RECONNECT_MAX. One log ' +
      "line per change of the connection's state, not per attempt.",
  },
  brokerReconnectMaxMs: {
    env: 'TIDINGS_BROKER_RECONNECT_MAX',
    schema: durationMs(10),
    defaultValue: '30s',
    unit: 'duration',
    description: 'Longest wait between two reconnection attempts to the broker.',
  },
  brokerPublishTimeoutMs: {
    env: 'TIDINGS_BROKER_PUBLISH_TIMEOUT',
    schema: durationMs(100),
    defaultValue: '10s',
    unit: 'duration',
    description:
      'Longest wait for the broker to confirm a publish; ids not confirmed in time are published again by a ' +
      'later round.',
  },
} satisfies SettingTable;
