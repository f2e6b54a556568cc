import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { IdempotencyScope, StoredAnswer } from '../ports/idempotency-store.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import type { KeyedInsert, MessageRecord, MessageStore } from '../ports/message-store.ts';

/**
 * What a caller publishes (DESIGN §5). `payload` is the exact byte span of the request's payload value, or a
 * raw message's body (`contentType` set).
 */
export interface PublishInput {
  readonly appId: string;
  readonly eventType: string;
  readonly eventId: string | null;
  readonly channels: readonly string[] | null;
  readonly tags: readonly string[] | null;
  readonly payload: Uint8Array;
  /** Content type of a raw message's body; null for a JSON payload. */
  readonly contentType?: string | null;
  /** First attempt not before this instant (Svix `deliverAt`); null = at once. */
  readonly deliverAt?: Date | null;
  /** Payload retention in hours (Svix `payloadRetentionHours`), null = the deployment default. */
  readonly retentionHours: number | null;
}

/** Dependencies of {@link createPublisher}. `onPublished` counts accepted messages (metrics). */
export interface PublisherDeps {
  readonly messages: MessageStore;
  readonly clock: Clock;
  readonly random: Random;
  readonly onPublished?: (appId: string) => void;
  /**
   * Furthest a `deliverAt` may lie ahead of the clock, in ms (TIDINGS_DELIVER_AT_HORIZON); default 24 h, as
   * Svix documents for `deliverAt`.
   */
  readonly deliverAtHorizonMs?: number;
}

/** Default {@link PublisherDeps.deliverAtHorizonMs}: 24 h. */
export const DEFAULT_DELIVER_AT_HORIZON_MS = 86_400_000;

/** The publish use case. */
export interface Publisher {
  /**
   * Stores the message and its fan-out in `tx` (the caller's transaction, shared with the idempotency key),
   * so that a 2xx answer means both are committed (DESIGN §1). A `deliverAt` ahead of the clock makes the
   * first attempt due then; one in the past, at once.
   * @throws AppError `conflict` when the eventId is already used in the application
   * @throws AppError `validation` (loc body.deliverAt) when `deliverAt` lies beyond the horizon
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
  const horizonMs = deps.deliverAtHorizonMs ?? DEFAULT_DELIVER_AT_HORIZON_MS;
  const checkDeliverAt = (input: PublishInput): void => {
    if (input.deliverAt == null || input.deliverAt.getTime() - deps.clock.nowMs() <= horizonMs) return;
    throw new AppError('validation', [{
      loc: ['body', 'deliverAt'], msg: `deliverAt may lie at most ${horizonMs / 1000} s ahead (TIDINGS_DELIVER_AT_HORIZON)`, type: 'value_error.datetime.horizon',
    }]);
  };
  return {
    async publish(tx, input) {
      checkDeliverAt(input);
      const id = newId('msg', deps.clock.nowMs(), () => deps.random.next());
      const result = await deps.messages.insert(tx, { id, ...input }, deps.clock.sqlNow());
      deps.onPublished?.(input.appId);
      return result;
    },
    async publishKeyed(scope, input, answerOf) {
      checkDeliverAt(input);
      const id = newId('msg', deps.clock.nowMs(), () => deps.random.next());
      const result = await deps.messages.insertKeyed(scope, { id, ...input }, deps.clock.sqlNow(), answerOf);
      if (result !== null) deps.onPublished?.(input.appId);
      return result;
    },
  };
}
