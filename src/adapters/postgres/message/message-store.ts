import { settingDefault } from '../../../config/config.ts';
import type { Cipher } from '../../../ports/cipher.ts';
import type { ClaimedDelivery } from '../../../ports/delivery-store.ts';
import type { Handoff, HandoffOffer } from '../../../ports/handoff.ts';
import type { KeyedInsert, MessageStore, NewMessage } from '../../../ports/message-store.ts';
import { DEFAULT_BATCH_LIMITS, statementBatcher, type BatchLimits } from '../batching.ts';
import { createClaimedReader } from '../claimed-row.ts';

/** Reads a delivery that a publish statement leased (claimed-row.ts). */
type ClaimedReader = ReturnType<typeof createClaimedReader>;
import { dbForRows, type Db, type SmallStatements } from '../db.ts';
import pg from 'pg';
import { isAutocommit, onCommit, txClient } from '../tx.ts';
import type { CarriedMode, NotifyCarrier } from '../wakeups/notify-carrier.ts';
import {
  expectedGroupRefusal,
  KEYED_GROUP_LOCK_TIMEOUT_MS,
  publishedRow,
  publishKeyedGroup,
  publishRows,
  recordOf,
  retryAlone,
  type KeyedCall,
  type KeyedResult,
  type Published,
  type PublishedRow,
  type SealedMessage,
} from './publish-rows.ts';

export { KEYED_GROUP_LOCK_TIMEOUT_MS } from './publish-rows.ts';

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

/** The deliveries a publish statement leased to `offer`, read as the claim's rows are. */
function leasedOf(
  readLease: ClaimedReader,
  offer: HandoffOffer,
  handed: Published<unknown>['handed'],
): ClaimedDelivery[] {
  return handed.map(({ row, sealed }) => {
    const { message } = sealed;
    const delivery = readLease(
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
}

/** What {@link carried} takes part in: the process's NOTIFY and the hand-off, with the reader of its leases. */
interface Carriage {
  readonly carrier: NotifyCarrier | undefined;
  readonly handoff: Handoff | undefined;
  readonly readLease: ClaimedReader | null;
}

// One publish statement of a store (a group, keyed or not, or a lone message) with its part in the process's
// NOTIFY and, with a hand-off, the room its dispatcher offers. `rowOf` picks the published rows out of the results,
// to read whether the statement notified. The leases it made are adopted once it has ended (committed), or the room
// given back.
async function carried<T>(
  c: Carriage,
  count: number,
  work: (mode: CarriedMode, offer: HandoffOffer | null) => Promise<Published<T>>,
  rowOf: (result: T) => PublishedRow | null,
): Promise<readonly T[]> {
  const part = c.carrier?.begin();
  const offer = c.handoff?.offer(count) ?? null;
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
        if (handed.length > 0) deliveries = leasedOf(c.readLease!, offer, handed);
      } catch {
        deliveries = [];
      }
      c.handoff!.adopt(offer, deliveries);
    }
  }
}

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
  const carriage: Carriage = {
    carrier,
    handoff,
    readLease: handoff === undefined ? null : createClaimedReader(cipher),
  };
  const woken = carrier === undefined ? wake : () => carrier.woken();
  const wakeAfter = (row: PublishedRow): (() => void) => (row.notified ? woken : wake);
  const grouped = statementBatcher<SealedMessage, PublishedRow>(limits, async (batch) => {
    try {
      return await carried(
        carriage,
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
              carriage,
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
          ? (await carried(carriage, 1, (notify, offer) => publishRows(db, [input], notify, offer), publishedRow))[0]!
          : (await publishRows(txClient(tx), [input], 'none')).results[0]!;
      if (row instanceof Error) throw row;
      if (row.due > 0) onCommit(tx, wakeAfter(row));
      return { message: recordOf(message, row.created_at), deliveries: row.total };
    },
  };
}
