import type { DeliveryState } from '../domain/delivery-state.ts';
import type { IdRange } from '../domain/search-window.ts';
import type { DeliveryHold } from './delivery-query-store.ts';
import type { AttemptView, MessageView } from './message-query-store.ts';
import type { Ordering } from './paging.ts';

/**
 * The read side of the delivery-log search (docs/reference/api.md, "Search"). Each scan reads one range of an
 * index whose key is a time-sortable id, in `order`, and is bounded twice: it examines at most `scanRows` index
 * rows, and returns at most `take` rows. Filters are applied to the rows examined, never to the range, so a
 * selective filter cannot make a scan read further; and payloads are never read here (they are encrypted at
 * rest; the use case reads and compares them, bounded by its own settings).
 */
export interface SearchStore {
  /** Messages of `appId` in the range (index messages_app_created). Keys: message ids. */
  scanMessages(appId: string, scan: ScanBounds, filters: MessageFilters): Promise<Scanned<MessageView>>;
  /**
   * Deliveries of `appId` for messages in the range: of one endpoint (deliveries_endpoint_message, with the leased
   * ones from deliveries_endpoint_leased; keys: message ids), or of every endpoint (the messages by
   * messages_app_created, each message's deliveries by its unique (message_id, endpoint_id) index; keys:
   * `<message id>.<endpoint id>`, scanRows counting messages).
   */
  scanDeliveries(
    appId: string,
    endpointId: string | null,
    scan: ScanBounds,
    filters: DeliveryFilters,
  ): Promise<Scanned<DeliveryHit>>;
  /**
   * Why each delivery is where it is (its latest timeline row) and what holds it, judged at `now` (null = the
   * database clock).
   */
  describeDeliveries(
    appId: string,
    deliveryIds: readonly string[],
    now: Date | null,
  ): Promise<readonly DeliveryDetail[]>;
  /** Attempts to one endpoint of `appId` in the range (index attempts_endpoint). Keys: attempt ids; no bodies. */
  scanAttempts(
    appId: string,
    endpointId: string,
    scan: ScanBounds,
    filters: AttemptFilters,
  ): Promise<Scanned<AttemptView>>;
}

/** One scan's range and bounds. */
export interface ScanBounds {
  /** The window's ids (both ends excluded). */
  readonly range: IdRange;
  readonly order: Ordering;
  /** Resume strictly after this key in `order` (a key this store returned); null = from the range's edge. */
  readonly after: string | null;
  /** TIDINGS_SEARCH_SCAN_ROWS: the index rows examined at most. */
  readonly scanRows: number;
  /** Rows returned at most (matching rows, plus those that mark where the scan stopped). */
  readonly take: number;
}

/**
 * A scan's answer: the matching rows with their keys, in scan order, and `stoppedAt`: the key of the last row
 * examined when the scan ended at its `scanRows` or `take` before reaching the range's end (rows after it were not
 * examined; resume after it), null when it examined the range to its end.
 */
export interface Scanned<T> {
  readonly items: readonly { readonly key: string; readonly value: T }[];
  readonly stoppedAt: string | null;
}

/** Filters on a message's fields (Svix `event_types`, `channel`, `tag`); null = any. */
export interface MessageFilters {
  readonly eventTypes: readonly string[] | null;
  readonly channel: string | null;
  readonly tag: string | null;
}

/** Filters on a delivery: its state, and the status class (0 = no HTTP status) or status of its last attempt. */
export interface DeliveryFilters extends MessageFilters {
  readonly states: readonly DeliveryState[] | null;
  readonly statusCodeClass: number | null;
  readonly statusCode: number | null;
}

/** Filters on an attempt: whether it succeeded, and its status class (0 = no HTTP status) or status. */
export interface AttemptFilters extends MessageFilters {
  readonly succeeded: boolean | null;
  readonly statusCodeClass: number | null;
  readonly statusCode: number | null;
}

/** A delivery found by a scan, with its message (never its payload). */
export interface DeliveryHit {
  readonly deliveryId: string;
  readonly message: MessageView;
  readonly endpointId: string;
  readonly state: DeliveryState;
  readonly attemptCount: number;
  readonly lastStatusCode: number | null;
  readonly lastErrorKind: string | null;
  readonly lastAttemptAt: Date | null;
  /** The due time of a pending delivery (not 'infinity'); null otherwise. */
  readonly nextAttemptAt: Date | null;
}

/** What {@link SearchStore.describeDeliveries} says of one delivery. */
export interface DeliveryDetail extends DeliveryHold {
  readonly deliveryId: string;
  /** The reason of its latest timeline row (docs/reference/timeline.md): why it is in its state. */
  readonly reason: string | null;
  /** When that row was written (the delivery entered its state). */
  readonly stateChangedAt: Date | null;
}
