import type { DeliveryState } from '../domain/delivery-state.ts';
import type { Tx } from './idempotency-store.ts';

/**
 * The catalog: applications, endpoints, API keys, and the read side of messages, attempts and delivery
 * timelines (docs/design.md#the-http-api). Writes take the caller's {@link Tx} so that they commit together with an
 * idempotency key (docs/design.md#publishing) or with the other writes of one use case. Reads take an optional `tx`: inside
 * a transaction every statement must use it (the embedded engine has one connection, so a read through the
 * pool would wait for the transaction forever).
 *
 * Instants are Dates from the database clock; `now: Date | null` parameters follow the Clock seam
 * (null = `clock_timestamp()`). Errors: unique violations become AppError `conflict` (409); everything else
 * is a fault.
 */
export interface CatalogStore {
  // Applications
  /**
   * Inserts an application.
   * @throws AppError `conflict` when `uid` is taken
   */
  insertApplication(tx: Tx, app: NewApplication, now: Date | null): Promise<ApplicationRecord>;
  /**
   * Inserts an application unless one with the same `uid` exists; returns the stored one either way.
   * Safe under concurrency (`ON CONFLICT DO NOTHING`, then read).
   */
  insertApplicationIfAbsent(tx: Tx, app: NewApplication & { readonly uid: string }, now: Date | null): Promise<{ readonly app: ApplicationRecord; readonly created: boolean }>;
  /** Finds an application by id (`app_…`) or by uid. `forUpdate` locks the row (needs `tx`). */
  findApplication(ref: string, options?: FindOptions): Promise<ApplicationRecord | null>;
  /** One page of applications, without those `filters` exclude (Svix `exclude_apps_with_*`). */
  listApplications(page: PageQuery, filters?: ApplicationListFilters): Promise<Page<ApplicationRecord>>;
  /**
   * Changes the given fields; absent fields keep their value.
   * @throws AppError `conflict` when the new `uid` is taken
   */
  updateApplication(tx: Tx, id: string, changes: ApplicationChanges, now: Date | null): Promise<ApplicationRecord | null>;
  /** Deletes an application and (by cascade) everything it owns. False when there was none. */
  deleteApplication(tx: Tx, id: string): Promise<boolean>;

  // Endpoints
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
  /** Finds a live (not deleted) endpoint of `appId` by id (`ep_…`) or uid. */
  findEndpoint(appId: string, ref: string, options?: FindOptions): Promise<EndpointRecord | null>;
  listEndpoints(appId: string, page: PageQuery): Promise<Page<EndpointRecord>>;
  /**
   * Changes the given fields of a live endpoint; absent fields keep their value.
   * @throws AppError `conflict` when the new `uid` is taken in the application
   */
  updateEndpoint(tx: Tx, appId: string, id: string, changes: EndpointChanges, now: Date | null): Promise<EndpointRecord | null>;
  /** Marks a live endpoint deleted (`deleted_at`); false when there was none. */
  softDeleteEndpoint(tx: Tx, appId: string, id: string, now: Date | null): Promise<boolean>;
  /** The endpoint's current signing secret (`whsec_…`), decrypted; null when there is no such live endpoint. */
  endpointSecret(appId: string, id: string): Promise<string | null>;
  /**
   * Moves every `pending` delivery of the endpoint to `to` and appends one timeline row each, with
   * `reason`, in one statement (docs/design.md#delivery-lifecycle: disable → skipped, delete → canceled). Leased deliveries are
   * left to their dispatcher. Returns how many moved.
   */
  settlePendingDeliveries(tx: Tx, endpointId: string, to: 'skipped' | 'canceled', reason: string, now: Date | null): Promise<number>;

  // Messages, attempts, timelines (read side; MessageStore writes messages)
  /** Finds a message of `appId` by id (`msg_…`) or eventId; the payload is decrypted when `withPayload`. */
  findMessage(appId: string, ref: string, options: { readonly withPayload: boolean; readonly tx?: Tx }): Promise<MessageView | null>;
  listMessages(appId: string, query: MessageListQuery): Promise<Page<MessageView>>;
  listAttempts(appId: string, query: AttemptListQuery): Promise<Page<AttemptView>>;
  findAttempt(appId: string, messageId: string, attemptId: string): Promise<AttemptView | null>;
  /** The delivery of one message to one endpoint, or null. */
  findDelivery(appId: string, messageId: string, endpointId: string): Promise<DeliverySummary | null>;
  /** Timeline rows of one delivery in `id` order (iterator = the row id as decimal text). */
  listTimeline(deliveryId: string, page: PageQuery): Promise<Page<TimelineEntry>>;

  // API keys (stored as SHA-256 hashes; docs/design.md#security)
  /** The live (not revoked, not expired) key with this token hash, or null. */
  findApiKeyByHash(tokenHash: Uint8Array): Promise<ApiKeyRecord | null>;
  /** Inserts a key; false (and nothing written) when a key with this id exists already. */
  insertApiKeyIfAbsent(key: NewApiKey, now: Date | null): Promise<boolean>;
  /** Revokes every live key scoped to `appId`; returns how many. */
  revokeApplicationKeys(tx: Tx, appId: string, now: Date | null): Promise<number>;
}

/** Options of the find methods: run in `tx` (required inside a transaction), and lock the row. */
export interface FindOptions {
  readonly tx?: Tx;
  readonly forUpdate?: boolean;
}

/** Sort order of a list, by id (ids are time-sortable, so this is creation order). */
export type Ordering = 'ascending' | 'descending';

/**
 * Keyset pagination in the Svix style. `iterator` null = first page; an id = the page after that id in
 * `order`; `-` + id = the page before it (a `prevIterator`). `limit` rows at most.
 */
/**
 * Svix's application list filters (`exclude_apps_with_no_endpoints`, `…_disabled_endpoints`,
 * `…_svix_play_endpoints`); deleted endpoints do not count. Each absent or false = no filter.
 */
export interface ApplicationListFilters {
  /** Leave out applications without any endpoint. */
  readonly excludeWithNoEndpoints?: boolean;
  /** Leave out applications that have endpoints, all of them disabled. */
  readonly excludeWithDisabledEndpoints?: boolean;
  /** Leave out applications that have endpoints, all of them Svix Play URLs (https://play.svix.com/…). */
  readonly excludeWithSvixPlayEndpoints?: boolean;
}

export interface PageQuery {
  readonly limit: number;
  readonly iterator: string | null;
  readonly order: Ordering;
}

/**
 * One page. `iterator` continues after the last row (the request's iterator when the page is empty);
 * `prevIterator` (`-` + first id) goes back; `done` = nothing further in the direction that was read.
 */
export interface Page<T> {
  readonly data: readonly T[];
  readonly iterator: string | null;
  readonly prevIterator: string | null;
  readonly done: boolean;
}

export interface ApplicationRecord {
  readonly id: string;
  readonly uid: string | null;
  readonly name: string;
  /** Messages per second (Svix `throttleRate`), null = unlimited. */
  readonly rateLimit: number | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface NewApplication {
  readonly id: string;
  readonly uid: string | null;
  readonly name: string;
  readonly rateLimit: number | null;
  readonly metadata: Readonly<Record<string, string>>;
}

export interface ApplicationChanges {
  readonly uid?: string | null;
  readonly name?: string;
  readonly rateLimit?: number | null;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** Operator status of an endpoint (the API's `disabled` is `status === 'disabled'`). */
export type EndpointStatus = 'active' | 'paused' | 'disabled';

/** An endpoint as read back. The secret is never part of it (see {@link CatalogStore.endpointSecret}). */
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

export interface NewEndpoint {
  readonly id: string;
  readonly appId: string;
  readonly uid: string | null;
  readonly url: string;
  readonly description: string;
  readonly version: number;
  readonly filterTypes: readonly string[] | null;
  readonly channels: readonly string[] | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly rateLimit: number | null;
  readonly status: EndpointStatus;
  readonly statusReason: string | null;
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

/** A message as read by the query API. `payload` is null when not requested or expunged. */
export interface MessageView {
  readonly id: string;
  readonly appId: string;
  readonly eventId: string | null;
  readonly eventType: string;
  readonly channels: readonly string[] | null;
  readonly tags: readonly string[] | null;
  /** The exact published payload bytes (decrypted), when requested and not expunged; a raw message's body. */
  readonly payload: Uint8Array | null;
  readonly expunged: boolean;
  /** Content type of a raw message (its payload is then the raw body, not JSON); null for a JSON payload. */
  readonly contentType: string | null;
  /** The `deliverAt` the message was published with; null = at once. */
  readonly deliverAt: Date | null;
  readonly createdAt: Date;
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
  readonly message: { readonly eventId: string | null; readonly eventType: string; readonly channels: readonly string[] | null; readonly tags: readonly string[] | null; readonly createdAt: Date };
}

/** The state of one delivery (message × endpoint). `id` is the bigint id as decimal text. */
export interface DeliverySummary {
  readonly id: string;
  readonly messageId: string;
  readonly endpointId: string;
  readonly state: DeliveryState;
  readonly attemptCount: number;
  readonly nextAttemptAt: Date;
  readonly deadReason: string | null;
}

/** One row of a delivery's append-only timeline (docs/design.md#delivery-lifecycle). Ids and tokens are decimal text. */
export interface TimelineEntry {
  readonly id: string;
  readonly state: string;
  readonly workerId: string | null;
  readonly fencingToken: string | null;
  readonly statusCode: number | null;
  readonly latencyMs: number | null;
  readonly errorKind: string | null;
  readonly reason: string | null;
  readonly at: Date;
}

/** A stored credential. `appId` is set for application-scoped keys. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly role: 'admin' | 'app';
  readonly appId: string | null;
  readonly createdAt: Date;
  /** Set on a key that may only read (GET routes). */
  readonly readOnly?: boolean;
  /** An app-portal token (Svix `appPortalAccess`) rather than an application key. */
  readonly portal?: boolean;
  /** Capabilities the token was issued with; absent = those its kind and `readOnly` give (ADR 0011). */
  readonly capabilities?: readonly string[];
  /** Svix `sessionId` of a portal token. */
  readonly sessionId?: string;
  /** Svix `featureFlags` of a portal token. */
  readonly featureFlags?: readonly string[];
  /** When the key stops working, or absent = until revoked. */
  readonly expiresAt?: Date;
}

export interface NewApiKey {
  readonly id: string;
  readonly name: string;
  readonly role: 'admin' | 'app';
  readonly appId: string | null;
  /** SHA-256 of the token; the token itself is never stored. */
  readonly tokenHash: Uint8Array;
  /** The first characters of the token, to recognise it in a list. */
  readonly tokenPrefix: string;
}
