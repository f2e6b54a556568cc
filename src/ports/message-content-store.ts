import type { Tx } from './unit-of-work.ts';
import type { MessageRecord, NewMessage } from './message-store.ts';

/** Writes to messages outside the publish path: erasing content, and example messages. */
export interface MessageContentStore {
  /**
   * Erases a message's payload (Svix `DELETE …/msg/{msg}/content`): the stored bytes are removed and
   * `payload_expunged_at` is set; the message, its deliveries, attempts and timelines stay. Idempotent: an
   * already expunged message keeps its first expunge time.
   * @returns false when the application has no such message
   */
  expungeContent(tx: Tx, appId: string, messageId: string, now: Date | null): Promise<boolean>;
  /**
   * Stores a message (payload encrypted at rest) with one delivery, to `endpointId` only, due now (Svix
   * send-example), and wakes dispatchers when `tx` commits.
   */
  insertExample(tx: Tx, message: NewMessage, endpointId: string, now: Date | null): Promise<MessageRecord>;
}
