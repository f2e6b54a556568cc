import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import { notFound } from '../domain/errors.ts';
import { hasPrefix } from '../domain/ids.ts';
import type {
  AttemptListQuery,
  AttemptView,
  MessageListQuery,
  MessageQueryStore,
  MessageView,
} from '../ports/message-query-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { DeliveryQueryStore, DeliverySummary, TimelineEntry } from '../ports/delivery-query-store.ts';
import type { Page, PageQuery } from '../ports/paging.ts';
import { resolveApplication } from './applications.ts';
import { withPayloadsWithin, type ReadPayloads } from './page-budget.ts';
import type { Principal } from './credentials.ts';

/** Attempt-list filters without the message/endpoint selector (the route supplies those). */
export type AttemptFilters = Omit<AttemptListQuery, 'messageId' | 'endpointId'> & {
  readonly endpointRef?: string | null;
};

/** Read side of the API: messages, attempts and delivery timelines, each resolved for the caller. */
export interface Queries {
  /** A message by id or eventId. @throws AppError `not_found` */
  getMessage(principal: Principal, appRef: string, ref: string, withPayload: boolean): Promise<MessageView>;
  listMessages(principal: Principal, appRef: string, query: MessageListQuery): Promise<Page<MessageView>>;
  /** Svix `GET /app/{app}/attempt/msg/{msg}` (optionally one endpoint). @throws AppError `not_found` */
  listAttemptsByMessage(
    principal: Principal,
    appRef: string,
    messageRef: string,
    filters: AttemptFilters,
  ): Promise<Page<AttemptView>>;
  /** Svix `GET /app/{app}/attempt/endpoint/{ep}`. @throws AppError `not_found` */
  listAttemptsByEndpoint(
    principal: Principal,
    appRef: string,
    endpointRef: string,
    filters: AttemptFilters,
  ): Promise<Page<AttemptView>>;
  /** One attempt of one message. @throws AppError `not_found` */
  getAttempt(principal: Principal, appRef: string, messageRef: string, attemptId: string): Promise<AttemptView>;
  /**
   * The timeline of the delivery of a message to an endpoint (docs/design.md#delivery-lifecycle). The endpoint is named
   * by id or uid, or by id after it was deleted (its canceled deliveries stay readable).
   * @throws AppError `not_found`
   */
  timeline(
    principal: Principal,
    appRef: string,
    messageRef: string,
    endpointRef: string,
    page: PageQuery,
  ): Promise<{ readonly delivery: DeliverySummary; readonly page: Page<TimelineEntry> }>;
}

/** Makes the query use cases over the application, endpoint, message and delivery stores. */
export function createQueries(deps: {
  readonly store: Pick<ApplicationStore, 'findApplication'> &
    Pick<EndpointStore, 'findEndpoint'> &
    MessageQueryStore &
    Pick<DeliveryQueryStore, 'findDelivery' | 'listTimeline'>;
  /** The instant holds are judged at (a test clock); absent = the database clock. */
  readonly clock?: Pick<Clock, 'sqlNow'>;
  /** TIDINGS_MAX_PAGE_BYTES: the payload bytes one page of messages reads at most (plus one payload). */
  readonly maxPageBytes: number;
}): Queries {
  const { store } = deps;

  const message = async (appId: string, ref: string, withPayload = false): Promise<MessageView> => {
    const found = await store.findMessage(appId, ref, { withPayload });
    if (found === null) throw notFound('Message');
    return found;
  };

  /**
   * A live endpoint's id by id or uid; a deleted endpoint's id only when given as an id. Another application's
   * endpoint is not found, as a missing one.
   */
  const endpointId = async (appId: string, ref: string, allowDeleted: boolean): Promise<string> => {
    const endpoint = await store.findEndpoint(appId, ref);
    if (endpoint !== null) return endpoint.id;
    if (allowDeleted && hasPrefix(ref, 'ep') && (await store.findEndpoint(appId, ref, { deletedToo: true })) !== null)
      return ref;
    throw notFound('Endpoint');
  };

  return {
    async getMessage(principal, appRef, ref, withPayload) {
      const app = await resolveApplication(store, principal, appRef);
      return message(app.id, ref, withPayload);
    },

    async listMessages(principal, appRef, query) {
      const app = await resolveApplication(store, principal, appRef);
      if (!query.withPayload) return store.listMessages(app.id, query);
      // The heads first, then their payloads within the page's byte budget (never 250 payloads at once).
      const heads = await store.listMessages(app.id, { ...query, withPayload: false });
      const read: ReadPayloads = (ids, budget) => store.readPayloads(app.id, ids, budget);
      const backward = query.iterator?.startsWith('-') ?? false;
      return withPayloadsWithin(
        heads,
        (m) => m.id,
        (m, payload) => ({ ...m, payload }),
        read,
        deps.maxPageBytes,
        backward,
      );
    },

    async listAttemptsByMessage(principal, appRef, messageRef, filters) {
      const app = await resolveApplication(store, principal, appRef);
      const msg = await message(app.id, messageRef);
      const { endpointRef, ...rest } = filters;
      const epId =
        endpointRef === undefined || endpointRef === null ? null : await endpointId(app.id, endpointRef, true);
      return store.listAttempts(app.id, { ...rest, messageId: msg.id, endpointId: epId });
    },

    async listAttemptsByEndpoint(principal, appRef, endpointRef, filters) {
      const app = await resolveApplication(store, principal, appRef);
      const { endpointRef: _ignored, ...rest } = filters;
      return store.listAttempts(app.id, {
        ...rest,
        messageId: null,
        endpointId: await endpointId(app.id, endpointRef, false),
      });
    },

    async getAttempt(principal, appRef, messageRef, attemptId) {
      const app = await resolveApplication(store, principal, appRef);
      const msg = await message(app.id, messageRef);
      const attempt = await store.findAttempt(app.id, msg.id, attemptId);
      if (attempt === null) throw notFound('Attempt');
      return attempt;
    },

    async timeline(principal, appRef, messageRef, endpointRef, page) {
      const app = await resolveApplication(store, principal, appRef);
      const msg = await message(app.id, messageRef);
      const epId = await endpointId(app.id, endpointRef, true);
      const delivery = await store.findDelivery(app.id, msg.id, epId, deps.clock?.sqlNow() ?? null);
      if (delivery === null) throw notFound('Delivery');
      return { delivery, page: await store.listTimeline(delivery.id, page) };
    },
  };
}
