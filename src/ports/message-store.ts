import type { Tx } from './idempotency-store.ts';

/** A message to store, with its fan-out (DESIGN §5). `payload` is the exact published byte span. */
export interface NewMessage {
  readonly id: string;
  readonly appId: string;
  readonly eventId: string | null;
  readonly eventType: string;
  readonly channels: readonly string[] | null;
  readonly tags: readonly string[] | null;
  readonly payload: Uint8Array;
  readonly retentionHours: number | null;
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
}
