import { Connection, type AsyncMessage, type Channel } from 'rabbitmq-client';
import {
  shardOf,
  type BrokerConsumeOptions,
  type BrokerMessage,
  type BrokerOptions,
  type BrokerState,
  type BrokerStateChange,
  type BrokerTransport,
  type PublishOutcome,
} from '../../ports/broker.ts';
import { declareTopology, topologyOf, type Topology } from './topology.ts';

/** Options of {@link createRabbitMqTransport}. */
export interface RabbitMqTransportOptions extends BrokerOptions {
  /** amqp:// or amqps:// URL (TIDINGS_RABBITMQ_URL). */
  readonly url: string;
  /** The name the broker shows for the connection. */
  readonly connectionName: string;
  /** Called each time the topology was declared again because a queue had gone (deleted by hand). */
  readonly onTopologyRestored?: (reason: string) => void;
}

/** Prefetch of the consumer of the dead letters. */
const DEAD_LETTER_PREFETCH = 16;
/** Header carrying the delivery's endpoint id beside the id in the body. */
const ENDPOINT_HEADER = 'x-endpoint-id';

interface Consuming {
  readonly options: BrokerConsumeOptions;
  ch: Channel | undefined;
  /** Consumer tag → queue, on `ch`. */
  readonly tags: Map<string, string>;
}

/**
 * The RabbitMQ {@link BrokerTransport} (docs/guides/transports.md): one connection (rabbitmq-client reconnects it with
 * a back-off from `reconnectMinMs` to `reconnectMaxMs`), a confirm channel for publishing and a channel for consuming,
 * both set up again with the topology after each reconnect. Ids go to a quorum queue per shard (topology.ts); every
 * shard queue is consumed with its part of `maxInFlight` as prefetch, so the broker hands them out round-robin.
 */
export function createRabbitMqTransport(options: RabbitMqTransportOptions): BrokerTransport {
  const topology: Topology = topologyOf(options);
  const listeners = new Set<(change: BrokerStateChange) => void>();
  /** Messages handed out and not settled, with the channel they came on. */
  const unsettled = new Map<BrokerMessage, Channel>();
  /** Message ids the broker returned as unroutable (a queue is missing) during a publish. */
  const returned = new Set<string>();
  let conn: Connection | undefined;
  let state: BrokerState = 'connecting';
  let pubCh: Channel | undefined;
  let consuming: Consuming | undefined;
  /**
   * Every consumer channel opened and not yet closed (a cancelled consumer's stays open until the stop, for its acks).
   */
  const consumerChannels = new Set<Channel>();
  let settingUp: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = options.reconnectMinMs;

  const setState = (next: BrokerState, reason: string | null): void => {
    if (next === state) return;
    const change = { state: next, previous: state, reason };
    state = next;
    for (const listener of listeners) listener(change);
  };

  /** Declares the topology, opens the confirm channel and the consumer: after each (re)connect. */
  const setUp = (): Promise<void> => {
    settingUp ??= (async () => {
      try {
        const c = conn;
        if (c === undefined || state === 'stopped') return;
        const ch = pubCh?.active === true ? pubCh : await c.acquire();
        await declareTopology(ch, topology);
        if (ch !== pubCh) {
          await ch.confirmSelect();
          ch.on('basic.return', (msg: { messageId?: string }) => {
            if (msg.messageId !== undefined) returned.add(msg.messageId);
          });
          ch.once('close', () => {
            if (pubCh === ch) pubCh = undefined;
            if (c.ready) retrySoon('publish channel closed');
          });
          pubCh = ch;
        }
        if (consuming !== undefined && consuming.ch?.active !== true) await consume(consuming);
        retryMs = options.reconnectMinMs;
        setState('connected', null);
      } catch (error) {
        setState('disconnected', `set-up failed: ${(error as Error).message}`);
        retrySoon('set-up failed');
      } finally {
        settingUp = undefined;
      }
    })();
    return settingUp;
  };

  /** Runs the set-up again after the back-off (a channel closed or a declaration failed while connected). */
  const retrySoon = (_why: string): void => {
    if (retryTimer !== undefined || state === 'stopped') return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (conn?.ready === true) void setUp();
    }, retryMs);
    retryMs = Math.min(options.reconnectMaxMs, retryMs * 2);
  };

  /** Opens the consumer channel and consumes every shard queue (and the dead letters when asked). */
  const consume = async (c: Consuming): Promise<void> => {
    if (conn === undefined) return;
    const ch = await conn.acquire();
    c.ch = ch;
    c.tags.clear();
    consumerChannels.add(ch);
    ch.once('close', () => {
      consumerChannels.delete(ch);
      if (c.ch !== ch) return;
      c.ch = undefined;
      if (conn?.ready === true && consuming === c) retrySoon('consumer channel closed');
    });
    ch.on('basic.cancel', (tag: string) => {
      // The broker cancels a consumer whose queue was deleted: declare the topology again and consume it again.
      const queue = c.tags.get(tag);
      if (queue === undefined || consuming !== c || c.ch !== ch) return;
      c.tags.delete(tag);
      void restoreQueue(c, ch, queue).catch(() => retrySoon('queue restore failed'));
    });
    for (const queue of topology.queues) await consumeQueue(c, ch, queue);
    if (c.options.onDeadLetter !== undefined) {
      await ch.basicQos({ prefetchCount: DEAD_LETTER_PREFETCH });
      const { consumerTag } = await ch.basicConsume({ queue: topology.deadLetterQueue }, (msg) => onDead(c, ch, msg));
      c.tags.set(consumerTag, topology.deadLetterQueue);
    }
  };

  const consumeQueue = async (c: Consuming, ch: Channel, queue: string): Promise<void> => {
    const prefetchCount = Math.max(1, Math.ceil(c.options.maxInFlight / topology.queues.length));
    await ch.basicQos({ prefetchCount });
    const { consumerTag } = await ch.basicConsume({ queue }, (msg) => onMessage(c, ch, msg));
    c.tags.set(consumerTag, queue);
  };

  const restoreQueue = async (c: Consuming, ch: Channel, queue: string): Promise<void> => {
    await declareTopology(ch, topology);
    options.onTopologyRestored?.(`queue ${queue} was deleted`);
    if (queue === topology.deadLetterQueue) {
      await ch.basicQos({ prefetchCount: DEAD_LETTER_PREFETCH });
      const { consumerTag } = await ch.basicConsume({ queue }, (msg) => onDead(c, ch, msg));
      c.tags.set(consumerTag, queue);
    } else {
      await consumeQueue(c, ch, queue);
    }
  };

  const onMessage = (c: Consuming, ch: Channel, msg: AsyncMessage): void => {
    const message = wrap(ch, msg);
    if (!/^[1-9][0-9]{0,18}$/.test(message.deliveryId)) {
      message.term('malformed');
      return;
    }
    c.options.onMessage(message);
  };

  const onDead = (c: Consuming, ch: Channel, msg: AsyncMessage): void => {
    const headers = msg.headers ?? {};
    const deaths = headers['x-death'] as { reason?: string }[] | undefined;
    const reason = String(headers['x-first-death-reason'] ?? deaths?.[0]?.reason ?? 'unknown');
    c.options.onDeadLetter?.({
      deliveryId: bodyText(msg.body),
      endpointId: String(headers[ENDPOINT_HEADER] ?? ''),
      reason: reason === 'rejected' ? 'terminated' : reason,
    });
    if (ch.active) ch.basicAck({ deliveryTag: msg.deliveryTag });
  };

  const wrap = (ch: Channel, msg: AsyncMessage): BrokerMessage => {
    const count = Number(msg.headers?.['x-delivery-count']);
    let done = false;
    const settle = (act: () => void): void => {
      if (done) return;
      done = true;
      unsettled.delete(message);
      if (!ch.active) return; // the channel is gone: the broker redelivers the message
      try {
        act();
      } catch {
        // the channel closed meanwhile: the same
      }
    };
    const message: BrokerMessage = {
      deliveryId: bodyText(msg.body),
      endpointId: String(msg.headers?.[ENDPOINT_HEADER] ?? ''),
      redelivered: msg.redelivered,
      deliveryCount: Number.isInteger(count) ? count + 1 : msg.redelivered ? null : 1,
      ack: () => settle(() => ch.basicAck({ deliveryTag: msg.deliveryTag })),
      nack: () => settle(() => ch.basicNack({ deliveryTag: msg.deliveryTag, requeue: true })),
      term: () => settle(() => ch.basicNack({ deliveryTag: msg.deliveryTag, requeue: false })),
    };
    unsettled.set(message, ch);
    return message;
  };

  const publish = async (items: readonly { deliveryId: string; endpointId: string }[]): Promise<PublishOutcome> => {
    const ch = pubCh;
    const ids = items.map((i) => i.deliveryId);
    if (state !== 'connected' || ch === undefined || !ch.active || items.length === 0)
      return { confirmed: [], failed: ids };
    const ok = items.map(() => false);
    const sends = items.map((item, i) =>
      ch
        .basicPublish(
          {
            exchange: topology.exchange,
            routingKey: String(shardOf(item.endpointId, topology.queues.length)),
            mandatory: true,
            durable: true,
            messageId: item.deliveryId,
            headers: { [ENDPOINT_HEADER]: item.endpointId },
          },
          item.deliveryId,
        )
        .then(
          () => {
            ok[i] = true;
          },
          () => undefined,
        ),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(sends),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, options.publishTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    const confirmed: string[] = [];
    const failed: string[] = [];
    let unroutable = 0;
    for (const [i, item] of items.entries()) {
      const wasReturned = returned.delete(item.deliveryId);
      if (wasReturned) unroutable += 1;
      (ok[i] === true && !wasReturned ? confirmed : failed).push(item.deliveryId);
    }
    if (unroutable > 0) {
      // A shard queue is gone (deleted by hand): declare the topology again; the outbox publishes the ids again.
      await declareTopology(ch, topology).then(
        () => options.onTopologyRestored?.(`${unroutable} ids were unroutable`),
        () => retrySoon('declare failed'),
      );
    }
    return { confirmed, failed };
  };

  return {
    name: 'rabbitmq',

    async start(startOptions) {
      if (conn !== undefined) return;
      conn = new Connection({
        url: options.url,
        connectionName: options.connectionName,
        retryLow: options.reconnectMinMs,
        retryHigh: options.reconnectMaxMs,
        connectionTimeout: Math.max(1_000, options.publishTimeoutMs),
        acquireTimeout: options.publishTimeoutMs,
      });
      const c = conn;
      c.on('connection', () => void setUp());
      c.on('error', (error: Error) => {
        if (state !== 'stopped' && !c.ready) setState('disconnected', error.message);
      });
      if (startOptions?.waitForBroker === false) {
        await c.onConnect(options.publishTimeoutMs);
        await setUp();
        if (state !== 'connected') throw new Error(`RabbitMQ set-up failed at ${options.url}`);
      }
    },

    publish,

    consume(consumeOptions) {
      const c: Consuming = { options: consumeOptions, ch: undefined, tags: new Map() };
      consuming = c;
      if (state === 'connected') void consume(c).catch(() => retrySoon('consume failed'));
      return {
        async cancel() {
          if (consuming === c) consuming = undefined;
          const ch = c.ch;
          if (ch === undefined || !ch.active) return;
          for (const tag of [...c.tags.keys()]) await ch.basicCancel(tag).catch(() => undefined);
          c.tags.clear();
        },
      };
    },

    async depth() {
      if (state !== 'connected' || conn === undefined) return null;
      const ch = await conn.acquire();
      try {
        const counts = await declareTopology(ch, topology);
        return { waiting: counts.shards.reduce((a, b) => a + b, 0), unacknowledged: null, deadLetters: counts.dead };
      } catch {
        return null;
      } finally {
        await ch.close().catch(() => undefined);
      }
    },

    state: () => state,

    onStateChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async stop() {
      if (state === 'stopped') return;
      setState('stopped', 'stop');
      clearTimeout(retryTimer);
      const c = consuming;
      consuming = undefined;
      if (c?.ch?.active === true) for (const tag of c.tags.keys()) await c.ch.basicCancel(tag).catch(() => undefined);
      for (const message of [...unsettled.keys()]) message.nack();
      await settingUp;
      for (const ch of [...consumerChannels]) await ch.close().catch(() => undefined);
      await pubCh?.close().catch(() => undefined);
      await conn?.close().catch(() => undefined);
    },
  };
}

/** The body of a message as text (rabbitmq-client decodes text/plain bodies; a Buffer otherwise). */
function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return String(body);
}
