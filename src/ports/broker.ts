/*
 * The broker port (docs/design.md#scale, "Work sources"; docs/guides/transports.md): what a broker transport
 * (RabbitMQ, NATS JetStream, …) must do so that the dispatcher can use it as one more work source. A broker carries
 * only delivery ids: the delivery rows stay the truth and the outbox (an id is published after its row committed,
 * and re-published by a sweeper when its message is lost); the dispatcher leases the row with a fenced claim by id
 * before it sends, so a duplicate or redelivered id claims nothing twice, and acknowledges the message only after the
 * attempt's record committed. Every adapter passes the contract suites test/integration/broker-contract.ts (the
 * broker alone) and test/integration/work-source-contract.ts (the transport with its outbox, over PostgreSQL).
 *
 * Rules every adapter keeps:
 * - No method throws for a broker that is down, except `publish` (its promise rejects or reports ids as failed) and
 *   `start` when the broker cannot be reached once and `waitForBroker` is false. The connection recovers by itself
 *   with a bounded back-off and reports each change of state once (`onStateChange`), never each attempt.
 * - Topology (queues, streams, exchanges, dead-letter routes) is declared idempotently at start and again after each
 *   reconnect, so that a queue deleted by hand comes back.
 * - Acknowledgements of a message whose connection is gone are no-ops: the broker redelivers the message and the
 *   fenced claim takes nothing twice.
 */

/** Settings every broker adapter takes (each adapter adds its own address). Durations in ms. */
export interface BrokerOptions {
  /**
   * Prefix of every name the adapter declares (queues, exchanges, streams, subjects, consumers): deployments and test
   * runs sharing one broker stay apart. Letters, digits, `.`, `-` and `_` only.
   */
  readonly prefix: string;
  /**
   * Number of shards the ids are spread over by a hash of their endpoint id: one queue (RabbitMQ) or subject (NATS)
   * each, consumed round-robin, so that a backlog on one endpoint holds up at most its shard (≥ 1).
   */
  readonly shards: number;
  /**
   * Most deliveries of one message (first one included) before the broker dead-letters it: a poison id, one whose
   * claim keeps failing. RabbitMQ: the quorum queue's `x-delivery-limit`; NATS: the consumer's `max_deliver`.
   */
  readonly deliveryLimit: number;
  /** Longest wait between two reconnection attempts; the back-off doubles from `reconnectMinMs` up to it. */
  readonly reconnectMaxMs: number;
  /** First wait before a reconnection attempt. */
  readonly reconnectMinMs: number;
  /** Longest wait for the broker's confirmation of one publish before its ids are reported as failed. */
  readonly publishTimeoutMs: number;
}

/** One id to publish. */
export interface BrokerItem {
  /** The delivery's id (a bigint as a decimal string): the message body. */
  readonly deliveryId: string;
  /** The delivery's endpoint: picks the shard (`shardOf`) and is carried beside the id. */
  readonly endpointId: string;
}

/** What one `publish` achieved: every id of the call is in exactly one of the two lists. */
export interface PublishOutcome {
  /** Ids the broker confirmed it holds (publisher confirms / a JetStream ack): they survive a broker restart. */
  readonly confirmed: readonly string[];
  /** Ids not confirmed (refused, timed out, connection lost): the outbox publishes them again later. */
  readonly failed: readonly string[];
}

/**
 * One message handed to the consumer. Exactly one of `ack`, `nack` or `term` should be called once; later calls are
 * no-ops, and none of them throws (a message whose connection is gone is redelivered by the broker).
 */
export interface BrokerMessage {
  readonly deliveryId: string;
  readonly endpointId: string;
  /** The broker delivered this message before (RabbitMQ `redelivered`, JetStream's delivery count > 1). */
  readonly redelivered: boolean;
  /** How many times the broker has delivered it, this time included (1 the first time) when known, else null. */
  readonly deliveryCount: number | null;
  /** Done with it: the record committed, or the id needs no message (not due, gated, fenced out). */
  ack(): void;
  /** Give it back for redelivery (counts toward `deliveryLimit`): its claim failed, or the consumer stops. */
  nack(): void;
  /** Dead-letter it now, without redelivery (it is reported through `onDeadLetter`). */
  term(reason: string): void;
}

/** A message the broker dead-lettered (delivery limit reached, or `term`). */
export interface BrokerDeadLetter {
  readonly deliveryId: string;
  readonly endpointId: string;
  /** `delivery_limit` (the broker's count reached `deliveryLimit`), `terminated` (`term`), or the broker's word. */
  readonly reason: string;
}

/** What `consume` needs. */
export interface BrokerConsumeOptions {
  /**
   * Most messages handed to `onMessage` and not yet acked, nacked or termed, over all shards (RabbitMQ: the
   * prefetch spread over the shard queues, at least one each; NATS: `max_ack_pending`).
   */
  readonly maxInFlight: number;
  /** Called once per message received; never awaited. Must not throw. */
  readonly onMessage: (message: BrokerMessage) => void;
  /**
   * Called once per dead-lettered message this transport observes (one consumer of the dead-letter queue or
   * advisory among all the dispatchers sees each). Absent: dead letters are left where the broker put them.
   */
  readonly onDeadLetter?: (letter: BrokerDeadLetter) => void;
}

/** A running consumer. */
export interface BrokerConsumer {
  /**
   * Stops receiving (cancels the subscriptions); messages already handed out may still be acked or nacked until the
   * transport stops. Resolves when the broker has been told (or at once when disconnected).
   */
  cancel(): Promise<void>;
}

/** Messages waiting in the broker, over all shards; null when the broker cannot be asked now. */
export interface BrokerDepth {
  /** Published and not yet handed to a consumer. */
  readonly waiting: number;
  /** Handed to a consumer and not yet acknowledged, when the broker tells (else null). */
  readonly unacknowledged: number | null;
  /** Dead-lettered and not yet read by a consumer of the dead letters, when known (else null). */
  readonly deadLetters: number | null;
}

/**
 * `connecting`: start has begun and no connection attempt has ended yet; `connected`: topology declared, publish and
 * consume work; `disconnected`: the connection was lost or could not be made, and the adapter is reconnecting with
 * back-off; `stopped`: `stop` was called.
 */
export type BrokerState = 'connecting' | 'connected' | 'disconnected' | 'stopped';

/** One change of state, reported once per change. */
export interface BrokerStateChange {
  readonly state: BrokerState;
  readonly previous: BrokerState;
  /** Why, in a few words (the error's message when a connection was lost). */
  readonly reason: string | null;
}

/**
 * A broker transport: connects, declares its topology, publishes ids with confirmation, consumes them with a bound
 * on messages in flight, and reports its state. One instance per process; publish and consume share its connection.
 */
export interface BrokerTransport {
  /** `rabbitmq`, `nats`, …: names the transport in logs, metrics and `/readyz`. */
  readonly name: string;
  /**
   * Connects and declares the topology idempotently (a second start of any process against the same broker
   * declares the same names). With `waitForBroker` (default true) it resolves at once and keeps connecting in the
   * background (`onStateChange` says when it is up); with false it rejects if the first connection fails.
   */
  start(options?: { readonly waitForBroker?: boolean }): Promise<void>;
  /**
   * Publishes one message per id to its shard and waits for the broker's confirmation (publisher confirms; a
   * JetStream ack). Never loses an id silently: an id is confirmed or reported failed. While disconnected it
   * reports every id failed without waiting.
   */
  publish(items: readonly BrokerItem[]): Promise<PublishOutcome>;
  /** Starts consuming every shard round-robin; resumes by itself after a reconnect. One consumer per transport. */
  consume(options: BrokerConsumeOptions): BrokerConsumer;
  /** Messages waiting in the broker (for autoscaling and the metrics); null while disconnected. */
  depth(): Promise<BrokerDepth | null>;
  /** The state now. */
  state(): BrokerState;
  /** Subscribes to changes of state; the function returned unsubscribes. */
  onStateChange(listener: (change: BrokerStateChange) => void): () => void;
  /**
   * Stops: cancels the consumer if any, nacks every message handed out and not yet settled (redelivered to another
   * dispatcher), closes the connection. Idempotent.
   */
  stop(): Promise<void>;
}

/** The shard of an endpoint: the same for every adapter and process (FNV-1a over the endpoint id's UTF-16 units). */
export function shardOf(endpointId: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < endpointId.length; i += 1) {
    hash ^= endpointId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return shards <= 1 ? 0 : hash % shards;
}
