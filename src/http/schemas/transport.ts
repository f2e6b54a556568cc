import { z } from 'zod';

const count = z.number().int().min(0);

/** `GET /api/v1/stats/transport`: how due deliveries reach dispatchers, and its health as this process knows it. */
export const transportOut = z
  .object({
    transport: z
      .enum(['postgres', 'rabbitmq', 'nats'])
      .describe('TIDINGS_TRANSPORT: postgres (the claim over the delivery rows), rabbitmq or nats'),
    state: z
      .enum(['connecting', 'connected', 'disconnected', 'stopped'])
      .nullable()
      .describe(
        'postgres: connected while this process is ready (its database answers), else disconnected. A broker: ' +
          "this process's broker connection (disconnected = reconnecting with back-off; stopped = shut down); " +
          'null when this process holds none (an API process without a dispatcher: each dispatcher reports its own ' +
          'on /readyz)',
      ),
    depth: z
      .object({
        waiting: count.describe('Published and not yet handed to a consumer, over every shard'),
        deadLetters: count.nullable().describe('Dead-lettered by the broker and not yet read, when known'),
      })
      .nullable()
      .describe("Messages in the broker; null for postgres, without this process's connection, or while it is down"),
    counts: z
      .object({
        published: count.describe('Delivery ids the broker confirmed (the sweep included)'),
        swept: count.describe('Delivery ids published again by the sweep (their message was lost)'),
        publishFailed: count.describe('Delivery ids the broker did not confirm (published again by a later round)'),
        redelivered: count.describe('Messages received that the broker had delivered before'),
        deadLettered: count.describe('Messages the broker dead-lettered'),
        topologyRestored: count.describe('Times the topology was declared again because a queue had gone'),
      })
      .nullable()
      .describe(
        'Since this process started, from its metrics (docs/reference/metrics.md); null for postgres or ' +
          "without this process's broker connection",
      ),
  })
  .meta({ id: 'TransportOut' });
