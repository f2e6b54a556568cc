import {
  JetStreamApiCodes,
  JetStreamApiError,
  type Consumer,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import type { BrokerDeadLetter } from '../../ports/broker.ts';
import { ENDPOINT_HEADER } from './publisher.ts';
import { isMissingTopology, type NatsTopology } from './topology.ts';

/*
 * Dead letters on NATS: when a shard consumer has delivered a message max_deliver times and it is neither acknowledged
 * nor redelivered any more, the server publishes a MAX_DELIVERIES advisory naming the message's stream sequence, and
 * the message stays in the workqueue stream. The advisories are kept by the dead-letter stream; this reader (on one
 * dispatcher at a time: one durable consumer shared by all) reads each, reads the delivery id at that sequence,
 * reports it, deletes the message from the work stream, and acknowledges the advisory. A reader that dies between two
 * steps leaves the advisory to be read again: a dead letter may be reported twice, never lost.
 */

/** What the reader needs from the transport. */
export interface DeadLetterContext {
  readonly topology: NatsTopology;
  /** The clients while connected (null while not). */
  clients(): { js: JetStreamClient; jsm: JetStreamManager } | null;
  whenConnected(): Promise<boolean>;
  redeclare(reason: string): Promise<void>;
  readonly fetchExpiresMs: number;
  readonly retryMs: number;
}

/** One MAX_DELIVERIES advisory, the fields read. */
interface MaxDeliverAdvisory {
  readonly stream_seq?: unknown;
  readonly deliveries?: unknown;
}

/** Reads one advisory: reports its dead letter, removes the message, acknowledges the advisory. */
async function handleAdvisory(
  jsm: JetStreamManager,
  topology: NatsTopology,
  msg: JsMsg,
  report: (letter: BrokerDeadLetter) => void,
): Promise<void> {
  let advisory: MaxDeliverAdvisory;
  try {
    advisory = msg.json<MaxDeliverAdvisory>();
  } catch {
    msg.ack();
    return;
  }
  const seq = typeof advisory.stream_seq === 'number' ? advisory.stream_seq : 0;
  if (seq <= 0) {
    msg.ack();
    return;
  }
  try {
    const stored = await jsm.streams.getMessage(topology.stream, { seq });
    if (stored !== null) {
      const endpointId = stored.header?.get(ENDPOINT_HEADER) ?? '';
      report({ deliveryId: stored.string(), endpointId, reason: 'delivery_limit' });
      await jsm.streams.deleteMessage(topology.stream, seq, false);
    }
  } catch (error) {
    // Gone already (another reader, or acknowledged after all): nothing to report.
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound)) throw error;
  }
  msg.ack();
}

/** Starts the reader; the function returned stops it. */
export function startDeadLetterReader(
  context: DeadLetterContext,
  report: (letter: BrokerDeadLetter) => void,
): () => Promise<void> {
  let stopped = false;
  let current: { close(): Promise<unknown> } | undefined;
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      setTimeout(resolve, ms).unref();
    });
  const loop = async (): Promise<void> => {
    let consumer = null as { js: JetStreamClient; handle: Consumer } | null;
    while (!stopped) {
      if (!(await context.whenConnected())) return;
      const clients = context.clients();
      if (clients === null) continue;
      try {
        if (consumer?.js !== clients.js) {
          const { deadStream, deadConsumer } = context.topology;
          consumer = { js: clients.js, handle: await clients.js.consumers.get(deadStream, deadConsumer) };
        }
        const batch = await consumer.handle.fetch({ max_messages: 16, expires: context.fetchExpiresMs });
        current = batch;
        for await (const msg of batch) {
          await handleAdvisory(clients.jsm, context.topology, msg, report).catch(() => {
            // Read again later (by this reader or another); a connection gone meanwhile redelivers it anyway.
            try {
              msg.nak();
            } catch {
              // The same.
            }
          });
        }
      } catch (error) {
        consumer = null;
        if (stopped) return;
        if (isMissingTopology(error)) {
          await context.redeclare(`dead letters: ${(error as Error).message}`).catch(() => undefined);
        }
        await pause(context.retryMs);
      }
    }
  };
  void loop();
  return async () => {
    stopped = true;
    await current?.close().catch(() => undefined);
  };
}
