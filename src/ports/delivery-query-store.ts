import type { DeliveryState } from '../domain/delivery-state.ts';
import type { EndpointRecord } from './endpoint-store.ts';
import type { MessageView } from './message-query-store.ts';
import type { Page, PageQuery } from './paging.ts';

/**
 * Read side of deliveries in the Svix shapes (docs/adr/0003-svix-compatibility.md): the destinations of a message, the
 * messages of an endpoint, endpoint stats, and Tidings' dead-letter lists. Instants come from the database clock.
 * `nextAttemptAt` is null unless the delivery is pending with a finite due time (a paused endpoint's
 * deliveries wait at 'infinity'); `heldBy`/`heldUntil` say when a pending delivery waits behind its endpoint
 * (pause, breaker, Retry-After throttle) rather than its schedule ({@link DeliveryHold}). Holds are judged at
 * `now` (null = the database clock).
 */
export interface DeliveryQueryStore {
  /** The live endpoints a message has a delivery to, by endpoint id (iterator = endpoint id). */
  listDestinations(
    appId: string,
    messageId: string,
    page: PageQuery,
    now?: Date | null,
  ): Promise<Page<DestinationView>>;
  /** The messages delivered (or being delivered) to an endpoint, by message id (iterator = message id). */
  listEndpointMessages(
    appId: string,
    endpointId: string,
    query: EndpointMessageQuery,
    now?: Date | null,
  ): Promise<Page<EndpointMessageView>>;
  /** Deliveries of the endpoint by state, for messages created in [since, until) (null = unbounded). */
  endpointStats(
    appId: string,
    endpointId: string,
    since: Date | null,
    until: Date | null,
  ): Promise<Readonly<Record<DeliveryState, number>>>;
  /**
   * Dead letters (deliveries in state `dead`) of an application (`appId` null: of every application, read
   * one application at a time so that each read uses that application's index), optionally of one
   * endpoint, newest first unless ascending. The iterator is an opaque cursor (the delivery's internal id
   * as decimal text).
   */
  listDeadLetters(appId: string | null, query: DeadLetterQuery): Promise<Page<DeadLetterView>>;
  /** The delivery of one message to one endpoint, or null. */
  findDelivery(
    appId: string,
    messageId: string,
    endpointId: string,
    now?: Date | null,
  ): Promise<DeliverySummary | null>;
  /** Timeline rows of one delivery in `id` order (iterator = the row id as decimal text). */
  listTimeline(deliveryId: string, page: PageQuery): Promise<Page<TimelineEntry>>;
}

/** Why a pending delivery waits behind its endpoint: its pause, its breaker, or a receiver's Retry-After. */
export type HoldKind = 'paused' | 'breaker' | 'throttled';

/**
 * Whether a pending delivery waits behind its endpoint rather than its own schedule
 * (src/adapters/postgres/delivery-holds.ts has the rule): `heldBy` null = not held; `heldUntil` the
 * hold's end, null when it has none set (a pause lasts until resumed; a breaker awaiting its probe until the
 * probe's outcome).
 */
export interface DeliveryHold {
  readonly heldBy: HoldKind | null;
  readonly heldUntil: Date | null;
}

/** One destination of a message (Svix `MessageEndpointOut`): the endpoint and its delivery's state. */
export interface DestinationView extends DeliveryHold {
  readonly endpoint: EndpointRecord;
  readonly state: DeliveryState;
  readonly nextAttemptAt: Date | null;
}

/** One message of an endpoint (Svix `EndpointMessageOut`): the message and its delivery's state. */
export interface EndpointMessageView extends DeliveryHold {
  readonly message: MessageView;
  readonly state: DeliveryState;
  readonly nextAttemptAt: Date | null;
}

/**
 * Filters of {@link DeliveryQueryStore.listEndpointMessages} (Svix names: channel, tag, status, before, after,
 * event_types).
 */
export interface EndpointMessageQuery extends PageQuery {
  readonly withPayload: boolean;
  /** Only deliveries in these states (null = all). */
  readonly states: readonly DeliveryState[] | null;
  readonly eventTypes: readonly string[] | null;
  readonly channel: string | null;
  readonly tag: string | null;
  /** Messages created strictly before / after. */
  readonly before: Date | null;
  readonly after: Date | null;
}

/** Filters of a dead-letter list. */
export interface DeadLetterQuery extends PageQuery {
  readonly endpointId: string | null;
  readonly eventTypes: readonly string[] | null;
  /** Messages created strictly before / after. */
  readonly before: Date | null;
  readonly after: Date | null;
}

/** One dead letter: which message to which endpoint, why, and its last attempt. */
export interface DeadLetterView {
  /** Opaque cursor of this row in the list. */
  readonly cursor: string;
  readonly appId: string;
  readonly messageId: string;
  readonly endpointId: string;
  readonly eventType: string;
  readonly messageCreatedAt: Date;
  /** exhausted, gone, lease_lost_repeatedly, … (DeadReason). */
  readonly reason: string | null;
  readonly attemptCount: number;
  readonly lastStatusCode: number | null;
  readonly lastErrorKind: string | null;
  readonly lastAttemptAt: Date | null;
  /** When the delivery last changed (it became dead then). */
  readonly deadAt: Date;
}

/** The state of one delivery (message × endpoint). `id` is the bigint id as decimal text. */
export interface DeliverySummary extends DeliveryHold {
  readonly id: string;
  readonly messageId: string;
  readonly endpointId: string;
  readonly state: DeliveryState;
  readonly attemptCount: number;
  readonly nextAttemptAt: Date;
  readonly deadReason: string | null;
}

/**
 * One row of a delivery's append-only timeline (docs/design.md#delivery-lifecycle, docs/reference/timeline.md). Ids and
 * tokens are decimal text.
 */
export interface TimelineEntry {
  readonly id: string;
  readonly state: string;
  readonly dispatcherId: string | null;
  readonly fencingToken: string | null;
  readonly statusCode: number | null;
  readonly latencyMs: number | null;
  readonly errorKind: string | null;
  readonly reason: string | null;
  readonly at: Date;
}
