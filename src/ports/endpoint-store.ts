import type { FindOptions, Page, PageQuery } from './paging.ts';
import type { Tx } from './unit-of-work.ts';

/**
 * Endpoints of an application: the owner of creating, changing and deleting `endpoints` rows (their settings
 * and health have their own stores, see endpoint-settings-store.ts and endpoint-health-store.ts). Writes take
 * the caller's {@link Tx}; reads take an optional `tx` (required inside a transaction).

 * Instants are Dates from the database clock; `now: Date | null` parameters follow the Clock seam
 * (null = `clock_timestamp()`). Errors: unique violations become AppError `conflict` (409); everything else
 * is a fault.
 */
export interface EndpointStore {
  /**
   * Inserts an endpoint; its secret is stored encrypted (context = endpoint id).
   * @throws AppError `conflict` when `uid` is taken in the application
   */
  insertEndpoint(tx: Tx, endpoint: NewEndpoint, now: Date | null): Promise<EndpointRecord>;
  /**
   * Live (not deleted) endpoints of `appId`, counted after locking the application row (FOR NO KEY UPDATE,
   * so publishes are not blocked) until `tx` ends: concurrent creations in one application are serialised,
   * and a count checked against a cap stays true until the insert commits.
   */
  countEndpointsLocked(tx: Tx, appId: string): Promise<number>;
  /**
   * Finds a live (not deleted) endpoint of `appId` by id (`ep_…`) or uid; with `deletedToo`, one live or deleted by
   * id only (a deleted endpoint's canceled deliveries stay searchable by its id).
   */
  findEndpoint(
    appId: string,
    ref: string,
    options?: FindOptions & { readonly deletedToo?: boolean },
  ): Promise<EndpointRecord | null>;
  listEndpoints(appId: string, page: PageQuery): Promise<Page<EndpointRecord>>;
  /**
   * Changes the given fields of a live endpoint; absent fields keep their value. A `url` other than the
   * stored one resets the endpoint's health (breaker closed, failure streak, Retry-After throttle and
   * failing-since cleared), with a `breaker_closed` health-history row when the breaker was not closed.
   * @throws AppError `conflict` when the new `uid` is taken in the application
   */
  updateEndpoint(
    tx: Tx,
    appId: string,
    id: string,
    changes: EndpointChanges,
    now: Date | null,
  ): Promise<EndpointRecord | null>;
  /** Marks a live endpoint deleted (`deleted_at`); false when there was none. */
  softDeleteEndpoint(tx: Tx, appId: string, id: string, now: Date | null): Promise<boolean>;
  /** The endpoint's current signing secret (`whsec_…`), decrypted; null when there is no such live endpoint. */
  endpointSecret(appId: string, id: string): Promise<string | null>;
  /**
   * Moves every `pending` delivery of the endpoint to `to` and appends one timeline row each, with
   * `reason`, in one statement (disable → skipped, delete → canceled: docs/adr/0002-schema-and-claim.md). Leased
   * deliveries are left to their dispatcher. Returns how many moved.
   */
  settlePendingDeliveries(
    tx: Tx,
    endpointId: string,
    to: 'skipped' | 'canceled',
    reason: string,
    now: Date | null,
  ): Promise<number>;
}

/** Operator status of an endpoint (the API's `disabled` is `status === 'disabled'`). */
export type EndpointStatus = 'active' | 'paused' | 'disabled';

/** An endpoint as read back. The secret is never part of it (see {@link EndpointStore.endpointSecret}). */
export interface EndpointRecord {
  readonly id: string;
  readonly appId: string;
  readonly uid: string | null;
  readonly url: string;
  readonly description: string;
  readonly version: number;
  /** Subscribed event types; null = all. */
  readonly filterTypes: readonly string[] | null;
  /** Subscribed channels; null = all messages. */
  readonly channels: readonly string[] | null;
  readonly metadata: Readonly<Record<string, string>>;
  /** Custom static headers sent with every request (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /** Requests per second (Svix `throttleRate`/`rateLimit`), null = unlimited. */
  readonly rateLimit: number | null;
  readonly status: EndpointStatus;
  readonly statusReason: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** An endpoint to insert: its record's fields but the instants (the database's clock sets them), and its secret. */
export interface NewEndpoint extends Omit<EndpointRecord, 'createdAt' | 'updatedAt'> {
  /** The signing secret (`whsec_…`), encrypted by the store. */
  readonly secret: string;
}

export interface EndpointChanges {
  readonly uid?: string | null;
  readonly url?: string;
  readonly description?: string;
  readonly version?: number;
  readonly filterTypes?: readonly string[] | null;
  readonly channels?: readonly string[] | null;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly rateLimit?: number | null;
  /** A status change, stamped with `status_changed_at`. */
  readonly status?: { readonly status: EndpointStatus; readonly reason: string | null };
}
