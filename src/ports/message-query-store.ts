import type { MessageRecord } from './message-store.ts';
import type { Page, PageQuery } from './paging.ts';
import type { Tx } from './unit-of-work.ts';

/**
 * The read side of messages and their attempts (the message store writes them). `tx` where given must be
 * used inside a transaction. Instants are Dates from the database clock.
 */
export interface MessageQueryStore {
  /** Finds a message of `appId` by id (`msg_…`) or eventId; the payload is decrypted when `withPayload`. */
  findMessage(
    appId: string,
    ref: string,
    options: { readonly withPayload: boolean; readonly tx?: Tx },
  ): Promise<MessageView | null>;
  listMessages(appId: string, query: MessageListQuery): Promise<Page<MessageView>>;
  /**
   * The payloads (decrypted; null once expunged) of the messages `ids` of `appId`, in the order given, while
   * the stored payload bytes read before each stay under `budgetBytes`: the first message past the budget
   * and every one after it are left out (their payloads are never read), so a page of large payloads costs
   * at most the budget plus one payload (TIDINGS_MAX_PAGE_BYTES). The first message is always read.
   */
  readPayloads(
    appId: string,
    ids: readonly string[],
    budgetBytes: number,
  ): Promise<readonly { readonly id: string; readonly payload: Uint8Array | null }[]>;
  listAttempts(appId: string, query: AttemptListQuery): Promise<Page<AttemptView>>;
  findAttempt(appId: string, messageId: string, attemptId: string): Promise<AttemptView | null>;
}

/**
 * A message as read by the query API: the stored record, whose `payload` (the exact published bytes,
 * decrypted; a raw message's body) is null when not requested or expunged, and whether it was expunged.
 */
export interface MessageView extends MessageRecord {
  readonly expunged: boolean;
}

/** Filters of a message list (Svix: event_types, channel, tag, before, after). */
export interface MessageListQuery extends PageQuery {
  readonly withPayload: boolean;
  readonly eventTypes: readonly string[] | null;
  readonly channel: string | null;
  readonly tag: string | null;
  /** Only messages created strictly before / after these instants. */
  readonly before: Date | null;
  readonly after: Date | null;
}

/** Filters of an attempt list; `messageId`/`endpointId` select the Svix "by message"/"by endpoint" lists. */
export interface AttemptListQuery extends PageQuery {
  /** Whether the stored response bodies are read (Svix `with_content`); false leaves `responseBody` null. */
  readonly withContent: boolean;
  readonly messageId: string | null;
  readonly endpointId: string | null;
  /** Svix status: 0 succeeded, 2 failed (recorded attempts are never pending, sending or canceled). */
  readonly status: number | null;
  /** 0 = no HTTP status (network error), 100…500 = that class of status codes. */
  readonly statusCodeClass: number | null;
  readonly eventTypes: readonly string[] | null;
  readonly channel: string | null;
  readonly tag: string | null;
  readonly before: Date | null;
  readonly after: Date | null;
}

/** One recorded attempt, with a few fields of its message (never its payload). */
export interface AttemptView {
  readonly id: string;
  readonly messageId: string;
  readonly endpointId: string;
  readonly attemptNumber: number;
  readonly trigger: 'scheduled' | 'manual';
  readonly succeeded: boolean;
  readonly url: string;
  readonly responseStatusCode: number | null;
  /** Stored prefix of the response body, or null. */
  readonly responseBody: string | null;
  readonly errorKind: string | null;
  readonly errorDetail: string | null;
  readonly durationMs: number;
  readonly createdAt: Date;
  /** What only the operator may see (addresses, deciding setting, signing key ids, Retry-After); null when none. */
  readonly operatorDetail: Readonly<Record<string, unknown>> | null;
  readonly message: {
    readonly eventId: string | null;
    readonly eventType: string;
    readonly channels: readonly string[] | null;
    readonly tags: readonly string[] | null;
    readonly createdAt: Date;
  };
}
