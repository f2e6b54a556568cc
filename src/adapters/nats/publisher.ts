import { headers, nuid } from '@nats-io/transport-node';
import type { JetStreamClient } from '@nats-io/jetstream';
import { shardOf, type BrokerItem, type PublishOutcome } from '../../ports/broker.ts';
import { isMissingTopology, type NatsTopology } from './topology.ts';

/** Header that carries a message's endpoint id beside its delivery id (the body). */
export const ENDPOINT_HEADER = 'Tidings-Endpoint-Id';

/** What {@link publishItems} needs. */
export interface PublishContext {
  readonly topology: NatsTopology;
  /** Longest wait for the stream's acknowledgement of one message, both tries included. */
  readonly publishTimeoutMs: number;
}

/** What one publish call learnt besides its outcome. */
export interface PublishReport extends PublishOutcome {
  /** The stream did not answer as if it were missing (no responders): the topology should be declared again. */
  readonly topologyMissing: boolean;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && /timeout/i.test(`${error.name} ${error.message}`);
}

/**
 * Publishes one message per item to its shard's subject and waits for JetStream's acknowledgement (the message is
 * stored). Each message carries a Nats-Msg-Id of its own: when the first acknowledgement times out the message is
 * sent once more with the same id, and the stream stores it once (its duplicate_window) — a lost acknowledgement
 * does not leave two messages. Resolves with every id either confirmed or failed; never rejects.
 */
export async function publishItems(
  js: JetStreamClient,
  context: PublishContext,
  items: readonly BrokerItem[],
): Promise<PublishReport> {
  const { topology } = context;
  const shards = topology.subjects.length;
  const tryMs = Math.max(1, Math.floor(context.publishTimeoutMs / 2));
  const batch = nuid.next();
  let topologyMissing = false;
  const one = async (item: BrokerItem, index: number): Promise<boolean> => {
    const subject = topology.subjects[shardOf(item.endpointId, shards)] ?? '';
    const h = headers();
    h.set(ENDPOINT_HEADER, item.endpointId);
    const options = { msgID: `${batch}.${index}`, timeout: tryMs, headers: h, expect: { streamName: topology.stream } };
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      try {
        await js.publish(subject, item.deliveryId, options);
        return true;
      } catch (error) {
        if (isMissingTopology(error)) topologyMissing = true;
        if (attempt === 2 || !isTimeout(error)) return false;
      }
    }
    return false;
  };
  const results = await Promise.all(items.map((item, index) => one(item, index)));
  const confirmed: string[] = [];
  const failed: string[] = [];
  results.forEach((ok, index) => {
    const id = items[index]?.deliveryId ?? '';
    (ok ? confirmed : failed).push(id);
  });
  return { confirmed, failed, topologyMissing };
}
