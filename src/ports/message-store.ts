import type { IdempotencyScope, StoredAnswer } from './idempotency-store.ts';
import type { Tx } from './unit-of-work.ts';
import type { TraceCarrier } from './tracer.ts';

/**
 * A message to store, with its fan-out (docs/design.md#publishing). `payload` is the exact published byte span of a JSON
 * payload, or a raw message's body (then `contentType` is set).
 */
export interface NewMessage {
  readonly id: string;
  readonly appId: string;
  readonly eventId: string | null;
  readonly eventType: string;
  readonly channels: readonly string[] | null;
  readonly tags: readonly string[] | null;
  readonly payload: Uint8Array;
  /** Content type of a raw message (Svix `transformationsParams.rawPayload`); null for a JSON payload. */
  readonly contentType?: string | null;
  /**
   * When the first attempt is due (Svix `deliverAt`); null or an instant not after the message's creation =
   * at once. Stored and echoed as given.
   */
  readonly deliverAt?: Date | null;
  readonly retentionHours: number | null;
  /** W3C trace context of the publish span (written only when tracing is on); null or absent = none. */
  readonly traceContext?: TraceCarrier | null;
}

/** A stored message as read back. `payload` is null once expunged. Instants from the database clock. */
export interface MessageRecord {
  readonly id: string;
  readonly appId: string;
  readonly eventId: string | null;
  readonly eventType: string;
  readonly channels: readonly string[] | null;
  readonly tags: readonly string[] | null;
  readonly payload: Uint8Array | null;
  readonly contentType: string | null;
  readonly deliverAt: Date | null;
  readonly createdAt: Date;
}

/** Stores messages and fans them out in the caller's transaction. */
export interface MessageStore {
  /**
   * Inserts the message (payload encrypted at rest) and one delivery per subscribed endpoint of its
   * application (event-type filter and channels; disabled endpoints get `skipped` deliveries, paused ones
   * wait), in `tx`, and wakes dispatchers when `tx` commits.
   * @throws AppError `conflict` (409) when `eventId` is already used in this application
   * @returns the stored message and the number of deliveries made
   */
  insert(tx: Tx, message: NewMessage, now: Date | null): Promise<{ readonly message: MessageRecord; readonly deliveries: number }>;

  /**
   * Stores a message published under an Idempotency-Key that is fresh, together with the key and the answer
   * `answerOf` makes from the stored message, in one transaction shared with concurrent calls (grouped keyed
   * publish, ADR 0007); wakes dispatchers after commit.
   * @returns the stored message, its deliveries and its answer; or null, with nothing stored, when this call
   *   cannot be grouped: its payload is above the grouping limit, its key exists (answered, expired, in
   *   flight), its eventId is taken, or the database refused the group (the caller then runs the ordinary
   *   keyed path, which answers exactly as before)
   * @throws the connection's error when the group's commit outcome is unknown (the key row tells, on a retry)
   */
  insertKeyed(scope: IdempotencyScope, message: NewMessage, now: Date | null, answerOf: (message: MessageRecord) => StoredAnswer): Promise<KeyedInsert | null>;
}

/** What {@link MessageStore.insertKeyed} stored. */
export interface KeyedInsert {
  readonly message: MessageRecord;
  readonly deliveries: number;
  readonly answer: StoredAnswer;
}
