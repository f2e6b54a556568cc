import { Connection, type AsyncMessage, type Channel } from 'rabbitmq-client';
import {
  shardOf,
  type BrokerConsumeOptions,
  type BrokerConsumer,
  type BrokerDepth,
  type BrokerItem,
  type BrokerMessage,
  type BrokerOptions,
  type BrokerState,
  type BrokerStateChange,
  type BrokerTransport,
  type PublishOutcome,
} from '../../ports/broker.ts';
import { amqpReason } from './amqp-reason.ts';
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

/** One transport's state, shared by the functions below (one per concern: set-up, consume, publish, stop). */
interface Transport {
  readonly options: RabbitMqTransportOptions;
  readonly topology: Topology;
  readonly listeners: Set<(change: BrokerStateChange) => void>;
  /** Messages handed out and not settled, with the channel they came on. */
  readonly unsettled: Map<BrokerMessage, Channel>;
  /** Message ids the broker returned as unroutable (a queue is missing) during a publish. */
  readonly returned: Set<string>;
  conn: Connection | undefined;
  state: BrokerState;
  pubCh: Channel | undefined;
  consuming: Consuming | undefined;
  /**
   * Every consumer channel opened and not yet closed (a cancelled consumer's stays open until the stop, for its acks).
   */
  readonly consumerChannels: Set<Channel>;
  settingUp: Promise<void> | undefined;
  retryTimer: NodeJS.Timeout | undefined;
  retryMs: number;
}

/**
 * The RabbitMQ {@link BrokerTransport} (docs/guides/transports.md): one connection (rabbitmq-client reconnects it with
 * a back-off from `reconnectMinMs` to `reconnectMaxMs`), a confirm channel for publishing and a channel for consuming,
 * both set up again with the topology after each reconnect. Ids go to a quorum queue per shard (topology.ts); every
 * shard queue is consumed with its part of `maxInFlight` as prefetch, so the broker hands them out round-robin.
 */
export function createRabbitMqTransport(options: RabbitMqTransportOptions): BrokerTransport {
  const x: Transport = {
    options,
    topology: topologyOf(options),
    listeners: new Set(),
    unsettled: new Map(),
    returned: new Set(),
    conn: undefined,
    state: 'connecting',
    pubCh: undefined,
    consuming: undefined,
    consumerChannels: new Set(),
    settingUp: undefined,
    retryTimer: undefined,
    retryMs: options.reconnectMinMs,
  };
  return {
    name: 'rabbitmq',
    start: (startOptions) => start(x, startOptions),
    publish: (items) => publish(x, items),
    consume: (consumeOptions) => startConsuming(x, consumeOptions),
    depth: () => depth(x),
    state: () => x.state,
    onStateChange(listener) {
      x.listeners.add(listener);
      return () => x.listeners.delete(listener);
    },
    stop: () => stop(x),
  };
}

function setState(x: Transport, next: BrokerState, reason: string | null): void {
  if (next === x.state) return;
  const change = { state: next, previous: x.state, reason };
  x.state = next;
  for (const listener of x.listeners) listener(change);
}

/** Opens the connection; with `waitForBroker: false`, waits for it and for the set-up, and throws if they failed. */
async function start(x: Transport, startOptions: { readonly waitForBroker?: boolean } | undefined): Promise<void> {
  const { options } = x;
  if (x.conn !== undefined) return;
  x.conn = new Connection({
    url: options.url,
    connectionName: options.connectionName,
    retryLow: options.reconnectMinMs,
    retryHigh: options.reconnectMaxMs,
    connectionTimeout: Math.max(1_000, options.publishTimeoutMs),
    acquireTimeout: options.publishTimeoutMs,
  });
  const c = x.conn;
  c.on('connection', () => void setUp(x));
  c.on('error', (error: Error) => {
    if (x.state !== 'stopped' && !c.ready) setState(x, 'disconnected', amqpReason(error));
  });
  if (startOptions?.waitForBroker === false) {
    await c.onConnect(options.publishTimeoutMs);
    await setUp(x);
    if (x.state !== 'connected') throw new Error(`RabbitMQ set-up failed at ${options.url}`);
  }
}

/** Declares the topology, opens the confirm channel and the consumer: after each (re)connect. */
function setUp(x: Transport): Promise<void> {
  x.settingUp ??= (async () => {
    try {
      const c = x.conn;
      if (c === undefined || x.state === 'stopped') return;
      const ch = x.pubCh?.active === true ? x.pubCh : await c.acquire();
      await declareTopology(ch, x.topology);
      if (ch !== x.pubCh) {
        await ch.confirmSelect();
        ch.on('basic.return', (msg: { messageId?: string }) => {
          if (msg.messageId !== undefined) x.returned.add(msg.messageId);
        });
        ch.once('close', () => {
          if (x.pubCh === ch) x.pubCh = undefined;
          if (c.ready) retrySoon(x, 'publish channel closed');
        });
        x.pubCh = ch;
      }
      if (x.consuming !== undefined && x.consuming.ch?.active !== true) await consume(x, x.consuming);
      x.retryMs = x.options.reconnectMinMs;
      setState(x, 'connected', null);
    } catch (error) {
      setState(x, 'disconnected', `set-up failed: ${(error as Error).message}`);
      retrySoon(x, 'set-up failed');
    } finally {
      x.settingUp = undefined;
    }
  })();
  return x.settingUp;
}

/** Runs the set-up again after the back-off (a channel closed or a declaration failed while connected). */
function retrySoon(x: Transport, _why: string): void {
  if (x.retryTimer !== undefined || x.state === 'stopped') return;
  x.retryTimer = setTimeout(() => {
    x.retryTimer = undefined;
    if (x.conn?.ready === true) void setUp(x);
  }, x.retryMs);
  x.retryMs = Math.min(x.options.reconnectMaxMs, x.retryMs * 2);
}

/** The transport's `consume`: consumes now when connected, else at the next set-up. */
function startConsuming(x: Transport, consumeOptions: BrokerConsumeOptions): BrokerConsumer {
  const c: Consuming = { options: consumeOptions, ch: undefined, tags: new Map() };
  x.consuming = c;
  if (x.state === 'connected') void consume(x, c).catch(() => retrySoon(x, 'consume failed'));
  return {
    async cancel() {
      if (x.consuming === c) x.consuming = undefined;
      const ch = c.ch;
      if (ch === undefined || !ch.active) return;
      for (const tag of [...c.tags.keys()]) await ch.basicCancel(tag).catch(() => undefined);
      c.tags.clear();
    },
  };
}

/** Opens the consumer channel and consumes every shard queue (and the dead letters when asked). */
async function consume(x: Transport, c: Consuming): Promise<void> {
  if (x.conn === undefined) return;
  const ch = await x.conn.acquire();
  c.ch = ch;
  c.tags.clear();
  x.consumerChannels.add(ch);
  ch.once('close', () => {
    x.consumerChannels.delete(ch);
    if (c.ch !== ch) return;
    c.ch = undefined;
    if (x.conn?.ready === true && x.consuming === c) retrySoon(x, 'consumer channel closed');
  });
  ch.on('basic.cancel', (tag: string) => {
    // The broker cancels a consumer whose queue was deleted: declare the topology again and consume it again.
    const queue = c.tags.get(tag);
    if (queue === undefined || x.consuming !== c || c.ch !== ch) return;
    c.tags.delete(tag);
    void restoreQueue(x, c, ch, queue).catch(() => retrySoon(x, 'queue restore failed'));
  });
  for (const queue of x.topology.queues) await consumeQueue(x, c, ch, queue);
  if (c.options.onDeadLetter !== undefined) await consumeDeadLetters(x, c, ch);
}

async function consumeQueue(x: Transport, c: Consuming, ch: Channel, queue: string): Promise<void> {
  const prefetchCount = Math.max(1, Math.ceil(c.options.maxInFlight / x.topology.queues.length));
  await ch.basicQos({ prefetchCount });
  const { consumerTag } = await ch.basicConsume({ queue }, (msg) => onMessage(x, c, ch, msg));
  c.tags.set(consumerTag, queue);
}

async function consumeDeadLetters(x: Transport, c: Consuming, ch: Channel): Promise<void> {
  const queue = x.topology.deadLetterQueue;
  await ch.basicQos({ prefetchCount: DEAD_LETTER_PREFETCH });
  const { consumerTag } = await ch.basicConsume({ queue }, (msg) => onDead(c, ch, msg));
  c.tags.set(consumerTag, queue);
}

async function restoreQueue(x: Transport, c: Consuming, ch: Channel, queue: string): Promise<void> {
  await declareTopology(ch, x.topology);
  x.options.onTopologyRestored?.(`queue ${queue} was deleted`);
  if (queue === x.topology.deadLetterQueue) await consumeDeadLetters(x, c, ch);
  else await consumeQueue(x, c, ch, queue);
}

function onMessage(x: Transport, c: Consuming, ch: Channel, msg: AsyncMessage): void {
  const message = wrap(x, ch, msg);
  if (!/^[1-9][0-9]{0,18}$/.test(message.deliveryId)) {
    message.term('malformed');
    return;
  }
  c.options.onMessage(message);
}

function onDead(c: Consuming, ch: Channel, msg: AsyncMessage): void {
  const headers = msg.headers ?? {};
  const deaths = headers['x-death'] as { reason?: string }[] | undefined;
  const reason = String(headers['x-first-death-reason'] ?? deaths?.[0]?.reason ?? 'unknown');
  c.options.onDeadLetter?.({
    deliveryId: bodyText(msg.body),
    endpointId: String(headers[ENDPOINT_HEADER] ?? ''),
    reason: reason === 'rejected' ? 'terminated' : reason,
  });
  if (ch.active) ch.basicAck({ deliveryTag: msg.deliveryTag });
}

/** A received message as a {@link BrokerMessage}, settled at most once, on the channel it came on. */
function wrap(x: Transport, ch: Channel, msg: AsyncMessage): BrokerMessage {
  const count = Number(msg.headers?.['x-delivery-count']);
  let done = false;
  const settle = (act: () => void): void => {
    if (done) return;
    done = true;
    x.unsettled.delete(message);
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
  x.unsettled.set(message, ch);
  return message;
}

/**
 * Publishes `items` on the confirm channel, each to its shard's queue, and waits for the confirms up to
 * `publishTimeoutMs`; an id the broker returned as unroutable failed, and the topology is declared again.
 */
async function publish(x: Transport, items: readonly BrokerItem[]): Promise<PublishOutcome> {
  const ch = x.pubCh;
  const ids = items.map((i) => i.deliveryId);
  if (x.state !== 'connected' || ch === undefined || !ch.active || items.length === 0)
    return { confirmed: [], failed: ids };
  const ok = await confirmedWithin(x, ch, items);
  const confirmed: string[] = [];
  const failed: string[] = [];
  let unroutable = 0;
  for (const [i, item] of items.entries()) {
    const wasReturned = x.returned.delete(item.deliveryId);
    if (wasReturned) unroutable += 1;
    (ok[i] === true && !wasReturned ? confirmed : failed).push(item.deliveryId);
  }
  if (unroutable > 0) {
    // A shard queue is gone (deleted by hand): declare the topology again; the outbox publishes the ids again.
    await declareTopology(ch, x.topology).then(
      () => x.options.onTopologyRestored?.(`${unroutable} ids were unroutable`),
      () => retrySoon(x, 'declare failed'),
    );
  }
  return { confirmed, failed };
}

/** Sends each item and tells, per item, whether the broker confirmed it within `publishTimeoutMs`. */
async function confirmedWithin(x: Transport, ch: Channel, items: readonly BrokerItem[]): Promise<boolean[]> {
  const ok = items.map(() => false);
  const sends = items.map((item, i) =>
    ch
      .basicPublish(
        {
          exchange: x.topology.exchange,
          routingKey: String(shardOf(item.endpointId, x.topology.queues.length)),
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
      timer = setTimeout(resolve, x.options.publishTimeoutMs);
    }),
  ]);
  clearTimeout(timer);
  return ok;
}

/** The ids waiting in the shard queues and the dead letters, read by declaring the topology; null if not connected. */
async function depth(x: Transport): Promise<BrokerDepth | null> {
  if (x.state !== 'connected' || x.conn === undefined) return null;
  const ch = await x.conn.acquire();
  try {
    const counts = await declareTopology(ch, x.topology);
    return { waiting: counts.shards.reduce((a, b) => a + b, 0), unacknowledged: null, deadLetters: counts.dead };
  } catch {
    return null;
  } finally {
    await ch.close().catch(() => undefined);
  }
}

/** Cancels the consumer, gives back the unsettled messages, and closes the channels and the connection. */
async function stop(x: Transport): Promise<void> {
  if (x.state === 'stopped') return;
  setState(x, 'stopped', 'stop');
  clearTimeout(x.retryTimer);
  const c = x.consuming;
  x.consuming = undefined;
  if (c?.ch?.active === true) for (const tag of c.tags.keys()) await c.ch.basicCancel(tag).catch(() => undefined);
  for (const message of [...x.unsettled.keys()]) message.nack();
  await x.settingUp;
  for (const ch of [...x.consumerChannels]) await ch.close().catch(() => undefined);
  await x.pubCh?.close().catch(() => undefined);
  await x.conn?.close().catch(() => undefined);
}

/** The body of a message as text (rabbitmq-client decodes text/plain bodies; a Buffer otherwise). */
function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return String(body);
}
