/**
 * What the read sides of messages, deliveries and search share: the row shapes of a message and an attempt, their
 * views as the ports give them, and the numbered `AND …` conditions of a list with the message filters (Svix:
 * event_types, channel, tag, before, after).
 */
import type { Cipher } from '../../ports/cipher.ts';
import type { AttemptView, MessageView } from '../../ports/message-query-store.ts';

/** A message's columns as the `messages` table names them, but for the payload's. */
export interface MessageColumns {
  id: string;
  app_id: string;
  event_id: string | null;
  event_type: string;
  channels: string[] | null;
  tags: string[] | null;
  expunged: boolean;
  content_type: string | null;
  deliver_at: Date | null;
  created_at: Date;
}

/** A message's stored payload: `expunged` when it was removed (or never kept). */
export interface PayloadColumns {
  payload: Buffer | null;
  payload_key_id: string | null;
  expunged: boolean;
}

/** A message's columns with its stored payload. */
export type StoredMessageColumns = MessageColumns & PayloadColumns;

/** The payload of message `messageId` decrypted with `cipher` (a NULL key id: stored in plain text). */
export const payloadOf = (cipher: Cipher, row: PayloadColumns, messageId: string): Buffer | null =>
  row.payload === null || row.expunged
    ? null
    : row.payload_key_id === null
      ? row.payload
      : cipher.decrypt(row.payload_key_id, row.payload, messageId);

/** A message as the API shows it, with its (decrypted) `payload`. */
export const messageViewOf = (row: MessageColumns, payload: Buffer | null): MessageView => ({
  id: row.id,
  appId: row.app_id,
  eventId: row.event_id,
  eventType: row.event_type,
  channels: row.channels,
  tags: row.tags,
  payload,
  expunged: row.expunged,
  contentType: row.content_type,
  deliverAt: row.deliver_at,
  createdAt: row.created_at,
});

/** An attempt's columns (alias `a`) with its message's (alias `m`), but for the response body and operator detail. */
export interface AttemptColumns {
  id: string;
  message_id: string;
  endpoint_id: string;
  attempt_number: number;
  trigger: 'scheduled' | 'manual';
  succeeded: boolean;
  url: string;
  response_status_code: number | null;
  error_kind: string | null;
  error_detail: string | null;
  duration_ms: number;
  created_at: Date;
  event_id: string | null;
  event_type: string;
  channels: string[] | null;
  tags: string[] | null;
  msg_created_at: Date;
}

/** An attempt as the API shows it, with its (decrypted) response body and its operator detail. */
export const attemptViewOf = (
  row: AttemptColumns,
  content: Pick<AttemptView, 'responseBody' | 'operatorDetail'>,
): AttemptView => ({
  id: row.id,
  messageId: row.message_id,
  endpointId: row.endpoint_id,
  attemptNumber: row.attempt_number,
  trigger: row.trigger,
  succeeded: row.succeeded,
  url: row.url,
  responseStatusCode: row.response_status_code,
  responseBody: content.responseBody,
  operatorDetail: content.operatorDetail,
  errorKind: row.error_kind,
  errorDetail: row.error_detail,
  durationMs: row.duration_ms,
  createdAt: row.created_at,
  message: {
    eventId: row.event_id,
    eventType: row.event_type,
    channels: row.channels,
    tags: row.tags,
    createdAt: row.msg_created_at,
  },
});

/** Collects `AND …` conditions with numbered parameters after the fixed ones `first`. */
export class Conditions {
  readonly sql: string[] = [];
  readonly params: unknown[];
  constructor(first: readonly unknown[]) {
    this.params = [...first];
  }
  add(condition: (param: string) => string, value: unknown): void {
    this.params.push(value);
    this.sql.push(condition(`$${this.params.length}`));
  }
  /** The number of the next parameter. */
  get next(): number {
    return this.params.length + 1;
  }
  /** The conditions, each as ` AND …`. */
  get text(): string {
    return this.sql.map((s) => ` AND ${s}`).join('');
  }
}

/** The message filters of a list; a list without channel or tag filters leaves them out. */
export interface MessageFilters {
  readonly eventTypes: readonly string[] | null;
  readonly channel?: string | null;
  readonly tag?: string | null;
  readonly before: Date | null;
  readonly after: Date | null;
}

/**
 * Adds the message filters of `query`: `m` is the messages' alias with its dot (`m.`, or empty), `at` the SQL
 * expression of the instant that before and after compare with.
 */
export function addMessageFilters(c: Conditions, query: MessageFilters, m: string, at: string): void {
  if (query.eventTypes !== null) c.add((p) => `${m}event_type = ANY (${p}::text[])`, query.eventTypes);
  if (query.channel !== undefined && query.channel !== null) c.add((p) => `${p} = ANY (${m}channels)`, query.channel);
  if (query.tag !== undefined && query.tag !== null) c.add((p) => `${p} = ANY (${m}tags)`, query.tag);
  if (query.before !== null) c.add((p) => `${at} < ${p}`, query.before);
  if (query.after !== null) c.add((p) => `${at} > ${p}`, query.after);
}
