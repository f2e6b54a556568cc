import { settingDefault } from '../../../config/config.ts';
import { AppError, notFound } from '../../../domain/errors.ts';
import type { Cipher } from '../../../ports/cipher.ts';
import { keyIdentity, type IdempotencyScope, type StoredAnswer } from '../../../ports/idempotency-store.ts';
import {
  StaleLookupError,
  type KeyedAnswer,
  type KeyedInsert,
  type MessageRecord,
  type MessageStore,
  type NewMessage,
} from '../../../ports/message-store.ts';
import { DEFAULT_BATCH_LIMITS, statementBatcher, type BatchLimits } from '../batching.ts';
import { dbForRows, type Db, type Queryable, type SmallStatements } from '../db.ts';
import { bind } from '../named-sql.ts';
import { PUBLISH, PUBLISH_HANDING, PUBLISH_KEYED, PUBLISH_KEYED_HANDING, type PublishParam } from './publish-sql.ts';
import pg from 'pg';
import { constraintOf, sqlState, SqlState } from '../sqlstate.ts';
import { isAutocommit, onCommit, txClient } from '../tx.ts';
import type { ClaimedDelivery } from '../../../ports/delivery-store.ts';
import type { RetryPolicyFields } from '../../../domain/retry-policy.ts';
import type { Handoff, HandoffOffer } from '../../../ports/handoff.ts';
import { createClaimedReader } from '../claimed-row.ts';
import type { CarriedMode, NotifyCarrier } from '../wakeups/notify-carrier.ts';

/** A message ready for {@link PUBLISH}: the payload already sealed. */
interface SealedMessage {
  readonly message: NewMessage;
  readonly data: Buffer;
  readonly keyId: string;
  readonly now: Date | null;
}

/** What {@link PUBLISH} returns for one stored message. */
interface PublishedRow {
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
const publishedRow = (result: PublishedRow | Error): PublishedRow | null => (result instanceof Error ? null : result);

const jsonArray = (values: readonly string[] | null): string | null =>
  values === null ? null : JSON.stringify(values);

/** The endpoints the payload filters skipped, as the statement takes them (NULL = none). */
const filteredOut = (message: NewMessage): string | null =>
  message.filters == null || message.filters.skipped.length === 0 ? null : JSON.stringify(message.filters.skipped);

/**
 * What {@link PUBLISH_HANDING} returns for one delivery it leased (the columns of a ClaimRow,
 * src/adapters/postgres/claimed-row.ts, it has).
 */
interface HandedRow {
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
interface Published<R> {
  readonly results: R[];
  readonly handed: readonly { readonly row: HandedRow; readonly sealed: SealedMessage }[];
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
async function publishRows(
  client: Queryable,
  batch: readonly SealedMessage[],
  notify: CarriedMode,
  offer: HandoffOffer | null = null,
  keyed: KeyedBatch | null = null,
): Promise<Published<PublishedRow | AppError | StaleLookupError>> {
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
function expectedGroupRefusal(error: unknown): boolean {
  return sqlState(error) === SqlState.lockNotAvailable || retryAlone(error);
}

/**
 * Whether a failed batch may be retried message by message: only a statement the database refused, so that
 * nothing of it was stored — for its data (SQLSTATE classes 22 and 23, e.g. an application deleted
 * meanwhile) or as a deadlock or serialization victim (class 40). After any other error (connection lost,
 * timeout) the outcome is unknown, and every call of the batch fails.
 */
function retryAlone(error: unknown): boolean {
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
interface KeyedCall {
  readonly scope: IdempotencyScope;
  readonly sealed: SealedMessage;
  readonly answer: KeyedAnswer;
}

/**
 * The calls of a grouped keyed publish, one per message of its statement, and how long it waits for a held key or
 * eventId (ms).
 */
interface KeyedBatch {
  readonly calls: readonly KeyedCall[];
  readonly lockTimeoutMs: number;
}

/** What a grouped keyed publish stored for one call: its message's row and the answer stored with its key. */
interface KeyedResult {
  readonly row: PublishedRow;
  readonly answer: StoredAnswer;
}

const recordOf = (message: NewMessage, createdAt: Date): MessageRecord => ({
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
async function publishKeyedGroup(
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

/** Options of {@link createPgMessageStore}. */
export interface MessageStoreOptions {
  /** Group sizes and statements in flight (TIDINGS_DB_BATCH, TIDINGS_DB_BATCHES_IN_FLIGHT). */
  readonly limits?: BatchLimits;
  /**
   * Largest payload, in bytes, of a message that joins a group (TIDINGS_DB_BATCH_MAX_PAYLOAD); a larger one is
   * published by a statement of its own, so that a group's parameters stay small. Default 65,536.
   */
  readonly maxGroupedPayloadBytes?: number;
  /**
   * Told when the server refused a grouped keyed publish for an unexpected reason (not a key held by a
   * concurrent request, a deadlock or serialization victim, or a request's own data): its calls took the
   * ordinary keyed path. For a log line.
   */
  readonly onGroupError?: (error: unknown) => void;
  /**
   * Whether keyed publishes outside a transaction are grouped ({@link PUBLISH_KEYED}). False or absent: every keyed
   * insert answers null, and the caller takes the ordinary keyed path.
   */
  readonly groupKeyed?: boolean;
  /**
   * Longest wait of a grouped keyed publish for a key or eventId that a transaction in flight holds, in ms; past it the
   * group is refused and its calls take the ordinary keyed path. Default {@link KEYED_GROUP_LOCK_TIMEOUT_MS}.
   */
  readonly keyedLockTimeoutMs?: number;
  /**
   * The process's NOTIFY, which a publish statement may carry (Wakeups; given on a PostgreSQL server): a publish
   * outside a caller's transaction (a statement of its own: a group, keyed or not, or a lone message) asks it as the
   * statement starts whether to send the NOTIFY itself, delivered at its commit (ADR 0006, "The process's NOTIFY rides
   * on a publish statement"), and after a commit that notified calls its `woken` instead of `wake`.
   * Absent = no NOTIFY inside; `wake` after every commit with due work.
   */
  readonly carrier?: NotifyCarrier;
  /**
   * The dispatcher of this process, to which a publish outside a caller's transaction may hand its new deliveries
   * leased ({@link PUBLISH_HANDING}; docs/adr/0018-publish-hands-off-leases.md). Absent = every delivery is inserted
   * pending and claimed.
   */
  readonly handoff?: Handoff;
  /**
   * Where the groups (keyed or not) of few messages run, planned once (docs/adr/0016-hot-path-cost.md,
   * decision 24): on a server a pool of their own, on the embedded engine `withGenericPlans` of the one
   * session. Only the groups, whose statements in flight `limits` bounds; a message published alone (a payload
   * too large for a group, a retry after its group failed) runs on `db`. Absent = every statement on `db`.
   */
  readonly small?: SmallStatements;
}

/** Default {@link MessageStoreOptions.maxGroupedPayloadBytes}: that of TIDINGS_DB_BATCH_MAX_PAYLOAD. */
export const DEFAULT_MAX_GROUPED_PAYLOAD_BYTES = settingDefault('dbBatchMaxPayloadBytes');

/**
 * The PostgreSQL {@link MessageStore}. Payloads are encrypted with `cipher` (context = message id).
 * `wake` is called after a commit that made due deliveries and carried no NOTIFY: it wakes in-process dispatchers
 * and, on a server, owes the others a NOTIFY on `tidings_due` (../wakeups/wakeups.ts). Inserts outside a transaction
 * (an autocommit {@link Tx}) from concurrent requests share one statement, within `limits` (group commit,
 * ADR 0007); an insert inside a transaction runs alone on that transaction.
 */
export function createPgMessageStore(
  db: Db,
  cipher: Cipher,
  wake: () => void,
  options: MessageStoreOptions = {},
): MessageStore {
  const limits = options.limits ?? DEFAULT_BATCH_LIMITS;
  const maxGroupedBytes = options.maxGroupedPayloadBytes ?? DEFAULT_MAX_GROUPED_PAYLOAD_BYTES;
  const carrier = options.carrier;
  const keyedLockTimeoutMs = options.keyedLockTimeoutMs ?? KEYED_GROUP_LOCK_TIMEOUT_MS;
  const handoff = options.handoff;
  const dbFor = (rows: number): Db => dbForRows(db, options.small, rows);
  const readLease = handoff === undefined ? null : createClaimedReader(cipher);
  const leasedOf = (offer: HandoffOffer, handed: Published<unknown>['handed']): ClaimedDelivery[] =>
    handed.map(({ row, sealed }) => {
      const { message } = sealed;
      const delivery = readLease!(
        {
          ...row,
          id: row.delivery_id,
          message_id: message.id,
          app_id: message.appId,
          attempt_count: 0,
          manual: false,
          reclaimed: false,
          event_type: message.eventType,
          payload: null,
          payload_key_id: null,
          content_type: message.contentType ?? null,
        },
        offer.dispatcherId,
        message.payload,
      );
      return message.traceContext == null ? delivery : { ...delivery, traceContext: message.traceContext };
    });
  // One publish statement of this store (a group, keyed or not, or a lone message) with its part in the process's
  // NOTIFY and, with a hand-off, the room its dispatcher offers. `rowOf` picks the published rows out of the results,
  // to read whether the statement notified. The leases it made are adopted once it has ended (committed), or the room
  // given back.
  const carried = async <T>(
    count: number,
    work: (mode: CarriedMode, offer: HandoffOffer | null) => Promise<Published<T>>,
    rowOf: (result: T) => PublishedRow | null,
  ): Promise<readonly T[]> => {
    const part = carrier?.begin();
    const offer = handoff?.offer(count) ?? null;
    let notified = false;
    let handed: Published<T>['handed'] = [];
    try {
      const published = await work(part?.mode ?? 'none', offer);
      notified = published.results.some((result) => rowOf(result)?.notified === true);
      handed = published.handed;
      return published.results;
    } finally {
      part?.end(notified);
      if (offer !== null) {
        // Rows that cannot be read (a secret that does not decrypt) give the room back and fail nothing: the publish is
        // committed, their leases expire, and the claim that takes them reports the error.
        let deliveries: ClaimedDelivery[] = [];
        try {
          if (handed.length > 0) deliveries = leasedOf(offer, handed);
        } catch {
          deliveries = [];
        }
        handoff!.adopt(offer, deliveries);
      }
    }
  };
  const woken = carrier === undefined ? wake : () => carrier.woken();
  const wakeAfter = (row: PublishedRow): (() => void) => (row.notified ? woken : wake);
  const grouped = statementBatcher<SealedMessage, PublishedRow>(limits, async (batch) => {
    try {
      return await carried(
        batch.length,
        (notify, offer) => publishRows(dbFor(batch.length), batch, notify, offer),
        publishedRow,
      );
    } catch (error) {
      // The group's part in the NOTIFY has ended: its messages, retried one by one, carry none and call `wake`.
      if (batch.length === 1 || !retryAlone(error)) throw error;
      return Promise.all(
        batch.map(async (one) => {
          try {
            return (await publishRows(db, [one], 'none')).results[0]!;
          } catch (alone) {
            return alone instanceof Error ? alone : new Error(String(alone));
          }
        }),
      );
    }
  });
  const keyedGroups =
    options.groupKeyed !== true
      ? null
      : statementBatcher<KeyedCall, KeyedResult | null>(limits, async (calls) => {
          try {
            return await carried(
              calls.length,
              (notify, offer) => publishKeyedGroup(dbFor(calls.length), calls, notify, offer, keyedLockTimeoutMs),
              (result) => result?.row ?? null,
            );
          } catch (error) {
            // Refused by the server: rolled back, nothing stored; the ordinary path answers each call. Any other
            // failure (connection lost, timeout) leaves the outcome unknown: the calls fail, and a client retrying
            // with its key is answered from the key row if the group did commit.
            if (!(error instanceof pg.DatabaseError)) throw error;
            if (!expectedGroupRefusal(error)) options.onGroupError?.(error);
            return calls.map(() => null);
          }
        });
  return {
    async insertKeyed(scope, message, now, answer): Promise<KeyedInsert | null> {
      if (keyedGroups === null || message.payload.byteLength > maxGroupedBytes) return null;
      const sealed = cipher.encrypt(message.payload, message.id);
      const result = await keyedGroups({
        scope,
        sealed: { message, data: sealed.data, keyId: sealed.keyId, now },
        answer,
      });
      if (result === null) return null;
      if (result.row.due > 0) wakeAfter(result.row)();
      return { message: recordOf(message, result.row.created_at), deliveries: result.row.total, answer: result.answer };
    },

    async insert(tx, message: NewMessage, now) {
      const sealed = cipher.encrypt(message.payload, message.id);
      const input: SealedMessage = { message, data: sealed.data, keyId: sealed.keyId, now };
      const alone = !isAutocommit(tx) || message.payload.byteLength > maxGroupedBytes;
      // Inside a caller's transaction the NOTIFY would wait for a commit that this store does not see: `wake` then.
      const row = !alone
        ? await grouped(input)
        : isAutocommit(tx)
          ? (await carried(1, (notify, offer) => publishRows(db, [input], notify, offer), publishedRow))[0]!
          : (await publishRows(txClient(tx), [input], 'none')).results[0]!;
      if (row instanceof Error) throw row;
      if (row.due > 0) onCommit(tx, wakeAfter(row));
      return { message: recordOf(message, row.created_at), deliveries: row.total };
    },
  };
}
