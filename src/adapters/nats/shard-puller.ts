import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { BrokerConsumeOptions, BrokerMessage } from '../../ports/broker.ts';
import { ENDPOINT_HEADER } from './publisher.ts';
import type { NatsTopology } from './topology.ts';
import { isMissingTopology } from './topology.ts';

/*
 * The consuming side of the NATS transport: one pull loop per shard consumer, each with its own credit of messages
 * out at once (maxInFlight spread over the shards, at least one each), so that a backlog on one shard takes at most
 * its credit of the dispatcher's messages and the other shards keep theirs: the round-robin between endpoint shards.
 * A loop fetches only as many messages as its shard has credit for, so no message waits in a client buffer with its
 * ack_wait running; while the dispatcher holds a message the puller tells the server it is in progress every third
 * of ack_wait, so only a dead dispatcher's messages are redelivered (after about ack_wait, like an expired lease).
 */

/** What the puller needs from the transport. */
export interface PullerContext {
  readonly topology: NatsTopology;
  /** The JetStream client while connected (null while not): fetches wait for it. */
  jetstream(): JetStreamClient | null;
  /** Resolves once connected, or with false once the transport stopped. */
  whenConnected(): Promise<boolean>;
  /** The stream or a consumer is gone: declare the topology again (single flight). */
  redeclare(reason: string): Promise<void>;
  /** Longest wait of one pull request for messages (the client's `expires`, ≥ 1 s). */
  readonly fetchExpiresMs: number;
  /** Pause after a failed fetch before the next. */
  readonly retryMs: number;
}

/**
 * Delay of the redelivery of a message given back at the stop. Without it the server may hand the message straight
 * back to a pull request of this process still open on the server (a closed fetch is not withdrawn there), find
 * nobody behind it and count that delivery back, so the next consumer would see it as never delivered before; by
 * then this process's connection is closed and its pull requests are gone.
 */
const STOP_NAK_DELAY_MS = 250;

interface Held {
  readonly msg: JsMsg;
  readonly shard: number;
}

/** The running pull loops of one `consume`, with the messages handed out and not settled. */
export interface ShardPuller {
  /** Ends the loops (their pull requests are closed); held messages stay settle-able. */
  cancel(): Promise<void>;
  /** Gives back every held message (nak), forgets them and stops marking them in progress. */
  nackHeld(): void;
  /** Closes the open pull requests (the connection dropped): the loops pull again once connected. */
  interrupt(): void;
  /** Messages handed out and not settled. */
  held(): number;
}

/** Starts consuming every shard of the context's topology. */
export function startShardPuller(context: PullerContext, options: BrokerConsumeOptions): ShardPuller {
  const shards = context.topology.consumers.length;
  const credit = Math.max(1, Math.ceil(options.maxInFlight / shards));
  const held = new Set<Held>();
  const perShard = new Array<number>(shards).fill(0);
  const open = new Set<ConsumerMessages>();
  const creditWaiters = new Map<number, () => void>();
  let cancelled = false;

  const release = (entry: Held): boolean => {
    if (!held.delete(entry)) return false;
    perShard[entry.shard] = (perShard[entry.shard] ?? 1) - 1;
    const wake = creditWaiters.get(entry.shard);
    creditWaiters.delete(entry.shard);
    wake?.();
    return true;
  };
  const quietly = (fn: () => void): void => {
    try {
      fn();
    } catch {
      // The connection is gone: the server redelivers the message after ack_wait.
    }
  };

  const toMessage = (entry: Held): BrokerMessage => {
    const { msg } = entry;
    return {
      deliveryId: msg.string(),
      endpointId: msg.headers?.get(ENDPOINT_HEADER) ?? '',
      redelivered: msg.redelivered,
      deliveryCount: msg.info.deliveryCount,
      ack: () => {
        if (release(entry)) quietly(() => msg.ack());
      },
      nack: () => {
        if (release(entry)) quietly(() => msg.nak());
      },
      term: (reason) => {
        if (!release(entry)) return;
        quietly(() => msg.ack());
        void reason;
        options.onDeadLetter?.({
          deliveryId: msg.string(),
          endpointId: msg.headers?.get(ENDPOINT_HEADER) ?? '',
          reason: 'terminated',
        });
      },
    };
  };

  const handOut = (shard: number, msg: JsMsg): void => {
    const entry: Held = { msg, shard };
    held.add(entry);
    perShard[shard] = (perShard[shard] ?? 0) + 1;
    const message = toMessage(entry);
    if (!/^[1-9][0-9]{0,18}$/.test(message.deliveryId)) {
      message.term('malformed');
      return;
    }
    try {
      options.onMessage(message);
    } catch {
      message.nack();
    }
  };

  const waitForCredit = (shard: number): Promise<void> =>
    new Promise((resolve) => {
      creditWaiters.set(shard, resolve);
    });
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      setTimeout(resolve, ms).unref();
    });

  const loop = async (shard: number): Promise<void> => {
    const name = context.topology.consumers[shard] ?? '';
    let consumer = null as { js: JetStreamClient; handle: Consumer } | null;
    while (!cancelled) {
      if (!(await context.whenConnected())) return;
      const free = credit - (perShard[shard] ?? 0);
      if (free <= 0) {
        await waitForCredit(shard);
        continue;
      }
      const js = context.jetstream();
      if (js === null) continue;
      let batch: ConsumerMessages | undefined;
      try {
        if (consumer?.js !== js) consumer = { js, handle: await js.consumers.get(context.topology.stream, name) };
        batch = await consumer.handle.fetch({ max_messages: free, expires: context.fetchExpiresMs });
        open.add(batch);
        for await (const msg of batch) handOut(shard, msg);
      } catch (error) {
        consumer = null;
        if (cancelled) return;
        if (isMissingTopology(error)) {
          await context.redeclare(`consumer ${name}: ${(error as Error).message}`).catch(() => undefined);
        }
        await pause(context.retryMs);
      } finally {
        if (batch !== undefined) open.delete(batch);
      }
    }
  };

  for (let shard = 0; shard < shards; shard += 1) void loop(shard);

  const ackWaitMs = context.topology.ackWaitMs;
  const progress = setInterval(
    () => {
      for (const entry of held) quietly(() => entry.msg.working());
    },
    Math.max(100, Math.floor(ackWaitMs / 3)),
  );
  progress.unref();

  const closeOpen = (): Promise<unknown> => Promise.all([...open].map((batch) => batch.close().catch(() => undefined)));

  return {
    async cancel() {
      cancelled = true;
      for (const wake of creditWaiters.values()) wake();
      creditWaiters.clear();
      await closeOpen();
    },
    nackHeld() {
      clearInterval(progress);
      for (const entry of [...held]) {
        release(entry);
        quietly(() => entry.msg.nak(STOP_NAK_DELAY_MS));
      }
    },
    interrupt() {
      void closeOpen();
    },
    held: () => held.size,
  };
}
