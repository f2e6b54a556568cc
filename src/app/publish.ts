import { newId } from '../domain/ids.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { IdempotencyScope, StoredAnswer, Tx } from '../ports/idempotency-store.ts';
import type { KeyedInsert, MessageRecord, MessageStore } from '../ports/message-store.ts';

/** What a caller publishes (DESIGN §5). `payload` is the exact byte span of the request's payload value. */
export interface PublishInput {
  readonly appId: string;
  readonly eventType: string;
  readonly eventId: string | null;
  readonly channels: readonly string[] | null;
  readonly tags: readonly string[] | null;
  readonly payload: Uint8Array;
  /** Payload retention in hours (Svix `payloadRetentionHours`), null = the deployment default. */
  readonly retentionHours: number | null;
}

/** Dependencies of {@link createPublisher}. `onPublished` counts accepted messages (metrics). */
export interface PublisherDeps {
  readonly messages: MessageStore;
  readonly clock: Clock;
  readonly random: Random;
  readonly onPublished?: (appId: string) => void;
}

/** The publish use case. */
export interface Publisher {
  /**
   * Stores the message and its fan-out in `tx` (the caller's transaction, shared with the idempotency key),
   * so that a 2xx answer means both are committed (DESIGN §1).
   * @throws AppError `conflict` when the eventId is already used in the application
   */
  publish(tx: Tx, input: PublishInput): Promise<{ readonly message: MessageRecord; readonly deliveries: number }>;
  /**
   * Publishes under a fresh Idempotency-Key, grouped with concurrent calls: the key, the message and the
   * answer `answerOf` makes commit together (ADR 0007).
   * @returns what was stored, or null when the call must take the ordinary keyed path (the key exists, the
   *   eventId is taken, or the group failed); nothing was stored then
   * @throws AppError from the checks in front (e.g. `validation` for a payload that violates its schema)
   */
  publishKeyed(scope: IdempotencyScope, input: PublishInput, answerOf: (message: MessageRecord) => StoredAnswer): Promise<KeyedInsert | null>;
}

/** Makes the publish use case. */
export function createPublisher(deps: PublisherDeps): Publisher {
  return {
    async publish(tx, input) {
      const id = newId('msg', deps.clock.nowMs(), () => deps.random.next());
      const result = await deps.messages.insert(tx, { id, ...input }, deps.clock.sqlNow());
      deps.onPublished?.(input.appId);
      return result;
    },
    async publishKeyed(scope, input, answerOf) {
      const id = newId('msg', deps.clock.nowMs(), () => deps.random.next());
      const result = await deps.messages.insertKeyed(scope, { id, ...input }, deps.clock.sqlNow(), answerOf);
      if (result !== null) deps.onPublished?.(input.appId);
      return result;
    },
  };
}
