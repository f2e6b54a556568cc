import type { IdempotencyScope, StoredAnswer } from './idempotency-store.ts';
import type { Tx } from './unit-of-work.ts';
import type { TraceCarrier } from './trace-carrier.ts';

/** What every form of a message carries: its ids, its application, its event type, channels and tags. */
export interface MessageHead {
  readonly id: string;
  readonly appId: string;
  readonly eventId: string | null;
  readonly eventType: string;
  readonly channels: readonly string[] | null;
  readonly tags: readonly string[] | null;
}

/**
 * A message to store, with its fan-out (docs/design.md#publishing). `payload` is the exact published byte span of a
 * JSON payload, or a raw message's body (then `contentType` is set).
 */
export interface NewMessage extends MessageHead {
  readonly payload: Uint8Array;
  /** Content type of a raw message (Svix `transformationsParams.rawPayload`); null for a JSON payload. */
  readonly contentType?: string | null;
  /**
   * When the first attempt is due (Svix `deliverAt`); null or an instant not after the message's creation =
   * at once. Stored and echoed as given.
   */
  readonly deliverAt?: Date | null;
  /** Payload retention in hours (Svix `payloadRetentionHours`); null = the deployment default. */
  readonly retentionHours: number | null;
  /** W3C trace context of the publish span (written only when tracing is on); null or absent = none. */
  readonly traceContext?: TraceCarrier | null;
  /**
   * What the publish's lookups read, for the store to confirm when it writes (lookups may come from a cache:
   * docs/adr/0006-round-trips-and-wake-ups.md, "Publish lookups are cached and confirmed"); null or absent =
   * not confirmed.
   */
  readonly expected?: LookupExpectation | null;
  /** What the endpoints' payload filters decided for the message; null or absent = no filter was evaluated. */
  readonly filters?: FilterOutcome | null;
}

/**
 * What the payload filters of an application's endpoints decided for one message
 * (docs/adr/0029-endpoint-payload-filters.md).
 */
export interface FilterOutcome {
  /**
   * The application's filter revision the filters were read at: the store stores the message only if it is still
   * the application's, and throws {@link StaleLookupError} otherwise.
   */
  readonly revision: string;
  /** The endpoints whose filter the message did not match: they get no delivery, and the message lists them. */
  readonly skipped: readonly string[];
}

/**
 * The lookups a publish was checked against. The store stores the message only if they still hold when it
 * writes; otherwise it stores nothing and throws {@link StaleLookupError}.
 */
export interface LookupExpectation {
  /**
   * The application's id or uid as the request named it: it must still name the message's application; null = not
   * confirmed.
   */
  readonly appRef: string | null;
  /**
   * Revision of the event type the payload was checked against: it must still be the row's; `'0'` = no
   * event type of that name was registered, and none may be now; null = not confirmed (no event-type checks).
   */
  readonly eventTypeRevision: string | null;
}

/**
 * Thrown by {@link MessageStore.insert} when a {@link LookupExpectation} no longer holds (the application
 * or event type changed since it was read): nothing was stored. The caller looks up again and retries.
 */
export class StaleLookupError extends Error {
  readonly messageId: string;
  constructor(messageId: string) {
    super(`the lookups of message ${messageId} changed before it was stored`);
    this.messageId = messageId;
    this.name = 'StaleLookupError';
  }
}

/** A stored message as read back. `payload` is null once expunged. Instants from the database clock. */
export interface MessageRecord extends MessageHead {
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
   * @throws StaleLookupError when `message.expected` no longer holds (nothing stored)
   * @returns the stored message and the number of deliveries made
   */
  insert(
    tx: Tx,
    message: NewMessage,
    now: Date | null,
  ): Promise<{ readonly message: MessageRecord; readonly deliveries: number }>;

  /**
   * Stores a message published under an Idempotency-Key that is fresh, together with the key and `answer`
   * completed with the message's creation instant, in one statement shared with concurrent calls (grouped keyed
   * publish, ADR 0007); wakes dispatchers after commit.
   * @returns the stored message, its deliveries and its answer as stored; or null, with nothing stored, when this call
   *   cannot be grouped: its payload is above the grouping limit, its key exists (answered, expired, in
   *   flight), its eventId is taken, its `expected` lookups no longer hold, or the database refused the group (the
   *   caller then runs the ordinary keyed path, which answers exactly as before)
   * @throws the connection's error when the group's commit outcome is unknown (the key row tells, on a retry)
   */
  insertKeyed(
    scope: IdempotencyScope,
    message: NewMessage,
    now: Date | null,
    answer: KeyedAnswer,
  ): Promise<KeyedInsert | null>;
}

/**
 * The answer of a grouped keyed publish before its message is stored: `status`, and a JSON object `body` whose
 * top-level `timestamp` the store sets (added when absent) to the message's creation instant as
 * `Date.prototype.toISOString` writes it (UTC, ms). Only the statement that stores the message knows that instant, and
 * it stores the answer with the key (docs/adr/0007-group-commit.md).
 */
export interface KeyedAnswer {
  readonly status: number;
  readonly body: Readonly<Record<string, unknown>>;
}

/** What {@link MessageStore.insertKeyed} stored. */
export interface KeyedInsert {
  readonly message: MessageRecord;
  readonly deliveries: number;
  readonly answer: StoredAnswer;
}
