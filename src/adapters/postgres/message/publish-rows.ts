import { AppError, notFound } from '../../../domain/errors.ts';
import type { RetryPolicyFields } from '../../../domain/retry-policy.ts';
import type { HandoffOffer } from '../../../ports/handoff.ts';
import { keyIdentity, type IdempotencyScope, type StoredAnswer } from '../../../ports/idempotency-store.ts';
import {
  StaleLookupError,
  type KeyedAnswer,
  type MessageRecord,
  type NewMessage,
} from '../../../ports/message-store.ts';
import type { Db, Queryable } from '../db.ts';
import { bind } from '../named-sql.ts';
import { constraintOf, sqlState, SqlState } from '../sqlstate.ts';
import type { CarriedMode } from '../wakeups/notify-carrier.ts';
import { PUBLISH, PUBLISH_HANDING, PUBLISH_KEYED, PUBLISH_KEYED_HANDING, type PublishParam } from './publish-sql.ts';

// One publish statement run: its parameters bound from sealed messages, its rows read back (the stored messages,
// the refusals, the deliveries leased to a hand-off), and the grouped keyed publish over it. The store that groups
// calls into these statements is message-store.ts.

/** A message ready for {@link PUBLISH}: the payload already sealed. */
export interface SealedMessage {
  readonly message: NewMessage;
  readonly data: Buffer;
  readonly keyId: string;
  readonly now: Date | null;
}

/** What {@link PUBLISH} returns for one stored message. */
export interface PublishedRow {
  readonly id: string;
  readonly created_at: Date;
  readonly total: number;
  readonly due: number;
  /** The statement sent the NOTIFY on `tidings_due` (WAKE_CHANNEL), delivered at its commit. */
  readonly notified: boolean;
  /** The message's expected lookups no longer held: it was not stored (its other columns mean nothing). */
  readonly stale: boolean;
}

/** A result of {@link publishRows} as a stored row, or null (an error). */
export const publishedRow = (result: PublishedRow | Error): PublishedRow | null =>
  result instanceof Error ? null : result;

const jsonArray = (values: readonly string[] | null): string | null =>
  values === null ? null : JSON.stringify(values);

/** The endpoints the payload filters skipped, as the statement takes them (NULL = none). */
const filteredOut = (message: NewMessage): string | null =>
  message.filters == null || message.filters.skipped.length === 0 ? null : JSON.stringify(message.filters.skipped);

/**
 * What {@link PUBLISH_HANDING} returns for one delivery it leased (the columns of a ClaimRow,
 * src/adapters/postgres/claimed-row.ts, it has).
 */
export interface HandedRow {
  readonly id: string;
  readonly delivery_id: string;
  readonly fencing_token: string;
  readonly endpoint_id: string;
  readonly url: string;
  readonly headers: Record<string, string> | null;
  readonly secret: Buffer;
  readonly secret_key_id: string;
  readonly sensitive_headers: Buffer | null;
  readonly sensitive_headers_key: string | null;
  readonly previous_secret: Buffer | null;
  readonly previous_secret_key_id: string | null;
  readonly retry_policy: RetryPolicyFields | null;
}

/** One publish statement's results: one per message, in order, and the deliveries it leased to a hand-off offer. */
export interface Published<R> {
  readonly results: R[];
  readonly handed: readonly { readonly row: HandedRow; readonly sealed: SealedMessage }[];
}

/** The named parameters of a publish statement for `batch` (with the hand-off's `offer` and the `keyed` calls). */
function publishValues(
  batch: readonly SealedMessage[],
  notify: CarriedMode,
  offer: HandoffOffer | null,
  keyed: KeyedBatch | null,
): Partial<Record<PublishParam, unknown>> {
  const column = <T>(pick: (m: SealedMessage) => T): T[] => batch.map(pick);
  const starts: number[] = [];
  const ends: number[] = [];
  let offset = 0;
  for (const m of batch) {
    starts.push(offset);
    offset += m.data.length;
    ends.push(offset);
  }
  const values: Partial<Record<PublishParam, unknown>> = {
    id: column((m) => m.message.id),
    app_id: column((m) => m.message.appId),
    event_id: column((m) => m.message.eventId),
    event_type: column((m) => m.message.eventType),
    channels: column((m) => jsonArray(m.message.channels)),
    tags: column((m) => jsonArray(m.message.tags)),
    payload_start: starts,
    payload_end: ends,
    payload_key_id: column((m) => m.keyId),
    retention_hours: column((m) => m.message.retentionHours),
    at: column((m) => m.now),
    content_type: column((m) => m.message.contentType ?? null),
    deliver_at: column((m) => m.message.deliverAt ?? null),
    trace_context: column((m) => (m.message.traceContext == null ? null : JSON.stringify(m.message.traceContext))),
    app_ref: column((m) => m.message.expected?.appRef ?? null),
    type_revision: column((m) => m.message.expected?.eventTypeRevision ?? null),
    filter_revision: column((m) => m.message.filters?.revision ?? null),
    filtered_out: column((m) => filteredOut(m.message)),
    payloads:
      batch.length === 1
        ? batch[0]!.data
        : Buffer.concat(
            batch.map((m) => m.data),
            offset,
          ),
    notify: notify !== 'none',
    notify_always: notify === 'always',
  };
  if (offer !== null) {
    Object.assign(values, {
      dispatcher: offer.dispatcherId,
      lease_ms: offer.leaseMs,
      slots: offer.slots,
      room_endpoints: offer.endpointIds,
      room: offer.room,
    });
  }
  if (keyed !== null) {
    const scopes = keyed.calls.map((call) => call.scope);
    Object.assign(values, {
      key_owner: scopes.map((s) => s.owner),
      key_route: scopes.map((s) => s.route),
      idem_key: scopes.map((s) => s.key),
      key_fingerprint: scopes.map((s) => s.fingerprint),
      key_ttl_ms: scopes.map((s) => s.ttlMs),
      answer_status: keyed.calls.map((call) => call.answer.status),
      answer_body: keyed.calls.map((call) => JSON.stringify(call.answer.body)),
      lock_timeout: `${Math.max(1, Math.round(keyed.lockTimeoutMs))}ms`,
    });
  }
  return values;
}

/**
 * Runs {@link PUBLISH} for `batch` (or {@link PUBLISH_HANDING} with `offer`; their keyed variants with `keyed`, one
 * call per message of `batch`); one result per message, in order: its row, AppError `conflict` (a keyed message: its
 * key was not claimed), or {@link StaleLookupError} when its expected lookups no longer held; and the deliveries
 * leased to the offer.
 * @throws AppError `not_found` when `batch` is one message whose application was deleted before the publish
 *   committed (the foreign key of messages.app_id: the publish waited for the deletion, then found nothing);
 *   a larger batch rejects with the database's error, and the caller publishes its messages one by one.
 */
export async function publishRows(
  client: Queryable,
  batch: readonly SealedMessage[],
  notify: CarriedMode,
  offer: HandoffOffer | null = null,
  keyed: KeyedBatch | null = null,
): Promise<Published<PublishedRow | AppError | StaleLookupError>> {
  const values = publishValues(batch, notify, offer, keyed);
  const statement =
    keyed === null
      ? offer === null
        ? PUBLISH
        : PUBLISH_HANDING
      : offer === null
        ? PUBLISH_KEYED
        : PUBLISH_KEYED_HANDING;
  const res = await client
    .query<PublishedRow & Partial<HandedRow>>(statement, bind(statement, values))
    .catch((error: unknown) => {
      if (
        batch.length === 1 &&
        sqlState(error) === SqlState.foreignKeyViolation &&
        constraintOf(error) === 'messages_app_id_fkey'
      )
        throw notFound('Application');
      throw error;
    });
  const byId = new Map<string, PublishedRow>();
  const handedRows: HandedRow[] = [];
  for (const row of res.rows) {
    if (row.delivery_id == null) byId.set(row.id, row);
    else handedRows.push(row as HandedRow);
  }
  const sealedById = handedRows.length === 0 ? null : new Map(batch.map((m) => [m.message.id, m]));
  return {
    results: batch.map(({ message }) => {
      const row = byId.get(message.id);
      if (row?.stale === true) return new StaleLookupError(message.id);
      if (row !== undefined) return row;
      // ON CONFLICT names the (app, eventId) index only: any other conflict fails the statement.
      return new AppError('conflict', `A message with eventId "${message.eventId}" already exists`);
    }),
    handed: handedRows.map((row) => ({ row, sealed: sealedById!.get(row.id)! })),
  };
}

/**
 * Whether a grouped keyed publish refused by the server is an expected event, not worth a log line: a key
 * held by a concurrent request (55P03), a deadlock or serialization victim (class 40), or a request's own
 * data (classes 22 and 23: the ordinary path answers it).
 */
export function expectedGroupRefusal(error: unknown): boolean {
  return sqlState(error) === SqlState.lockNotAvailable || retryAlone(error);
}

/**
 * Whether a failed batch may be retried message by message: only a statement the database refused, so that
 * nothing of it was stored — for its data (SQLSTATE classes 22 and 23, e.g. an application deleted
 * meanwhile) or as a deadlock or serialization victim (class 40). After any other error (connection lost,
 * timeout) the outcome is unknown, and every call of the batch fails.
 */
export function retryAlone(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && (state.startsWith('22') || state.startsWith('23') || state.startsWith('40'));
}

/**
 * Longest wait of a grouped keyed publish for a key or eventId that a transaction in flight holds, in ms: past it
 * the group gives up and each of its calls takes the ordinary keyed path (which waits TIDINGS_IDEMPOTENCY_WAIT).
 * Short, because the wait holds every call of the group.
 */
export const KEYED_GROUP_LOCK_TIMEOUT_MS = 50;

/** One call of a grouped keyed publish. */
export interface KeyedCall {
  readonly scope: IdempotencyScope;
  readonly sealed: SealedMessage;
  readonly answer: KeyedAnswer;
}

/**
 * The calls of a grouped keyed publish, one per message of its statement, and how long it waits for a held key or
 * eventId (ms).
 */
export interface KeyedBatch {
  readonly calls: readonly KeyedCall[];
  readonly lockTimeoutMs: number;
}

/** What a grouped keyed publish stored for one call: its message's row and the answer stored with its key. */
export interface KeyedResult {
  readonly row: PublishedRow;
  readonly answer: StoredAnswer;
}

export const recordOf = (message: NewMessage, createdAt: Date): MessageRecord => ({
  id: message.id,
  appId: message.appId,
  eventId: message.eventId,
  eventType: message.eventType,
  channels: message.channels,
  tags: message.tags,
  payload: message.payload,
  contentType: message.contentType ?? null,
  deliverAt: message.deliverAt ?? null,
  createdAt,
});

/**
 * Runs a group of keyed publishes as one statement ({@link PUBLISH_KEYED}), which claims the fresh keys, publishes
 * their messages and stores their answers. A call whose key is not fresh (or held by an earlier call of the group),
 * whose eventId is taken or whose lookups are stale gets null. Rejects when the statement failed (nothing of it was
 * stored, or its outcome is unknown). `notify`: whether the statement sends the NOTIFY, delivered at its commit
 * ({@link CarriedMode}); `offer`: the hand-off it may lease to; `lockTimeoutMs`: the longest wait for a key or eventId
 * held by a transaction in flight, past which the statement fails with lock_not_available (55P03).
 */
export async function publishKeyedGroup(
  db: Db,
  calls: readonly KeyedCall[],
  notify: CarriedMode,
  offer: HandoffOffer | null,
  lockTimeoutMs: number,
): Promise<Published<KeyedResult | null>> {
  // The same key, or the same eventId of an application, twice in one group: the first call may claim it, the others
  // take the ordinary path (a second message with the eventId would fail the whole statement: PUBLISH_KEYED).
  const keys = new Set<string>();
  const eventIds = new Set<string>();
  const mine = calls.filter((call) => {
    const key = keyIdentity(call.scope);
    const { appId, eventId } = call.sealed.message;
    const event = eventId === null ? null : JSON.stringify([appId, eventId]);
    if (keys.has(key) || (event !== null && eventIds.has(event))) return false;
    keys.add(key);
    if (event !== null) eventIds.add(event);
    return true;
  });
  const published = await publishRows(
    db,
    mine.map((call) => call.sealed),
    notify,
    offer,
    { calls: mine, lockTimeoutMs },
  );
  const done = new Map<KeyedCall, KeyedResult>();
  for (const [i, call] of mine.entries()) {
    const row = published.results[i]!;
    // The answer as the statement stored it: pg reads created_at to the ms by truncation, as to_char's MS writes it.
    if (!(row instanceof Error))
      done.set(call, {
        row,
        answer: { status: call.answer.status, body: { ...call.answer.body, timestamp: row.created_at.toISOString() } },
      });
  }
  return { results: calls.map((call) => done.get(call) ?? null), handed: published.handed };
}
