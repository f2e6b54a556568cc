import type { MessageQueryStore } from '../ports/message-query-store.ts';
import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { DeliveryState } from '../domain/delivery-state.ts';
import { AppError, notFound } from '../domain/errors.ts';
import type { Page, PageQuery } from '../ports/paging.ts';
import type {
  DeadLetterQuery,
  DeadLetterView,
  DeliveryQueryStore,
  DestinationView,
  EndpointMessageQuery,
  EndpointMessageView,
} from '../ports/delivery-query-store.ts';
import { requireAdmin, resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';
import { withPayloadsWithin, type ReadPayloads } from './page-budget.ts';

/** Dependencies of {@link createDeliveryQueries}. */
export interface DeliveryQueriesDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> &
    Pick<EndpointStore, 'findEndpoint'> &
    Pick<MessageQueryStore, 'findMessage' | 'readPayloads'>;
  readonly store: DeliveryQueryStore;
  /** The instant deliveries' holds are judged at (a test clock); absent = the database clock. */
  readonly clock?: Pick<Clock, 'sqlNow'>;
  /** TIDINGS_MAX_PAGE_BYTES: the payload bytes one page of an endpoint's messages reads at most (plus one payload). */
  readonly maxPageBytes: number;
}

/**
 * Read side of deliveries (docs/adr/0003-svix-compatibility.md): Svix's destinations of a message and messages of an
 * endpoint, endpoint stats, and Tidings' dead-letter lists. Objects are named by id or by the caller's uid / eventId.
 */
export interface DeliveryQueries {
  /** Svix `GET /app/{app}/msg/{msg}/endpoint`. @throws AppError `not_found` (application, message) */
  destinations(
    principal: Principal,
    appRef: string,
    messageRef: string,
    page: PageQuery,
  ): Promise<Page<DestinationView>>;
  /** Svix `GET /app/{app}/endpoint/{ep}/msg`. @throws AppError `not_found` (application, endpoint) */
  endpointMessages(
    principal: Principal,
    appRef: string,
    endpointRef: string,
    query: EndpointMessageQuery,
  ): Promise<Page<EndpointMessageView>>;
  /**
   * Svix `GET /app/{app}/endpoint/{ep}/stats`: deliveries by state for messages created in [since, until).
   * @throws AppError `not_found`, `validation` (since after until)
   */
  stats(
    principal: Principal,
    appRef: string,
    endpointRef: string,
    since: Date | null,
    until: Date | null,
  ): Promise<Readonly<Record<DeliveryState, number>>>;
  /**
   * Tidings: dead letters of an application, or of one of its endpoints when `endpointRef` is given.
   * @throws AppError `not_found` (application, endpoint)
   */
  deadLetters(
    principal: Principal,
    appRef: string,
    endpointRef: string | null,
    query: Omit<DeadLetterQuery, 'endpointId'>,
  ): Promise<Page<DeadLetterView>>;
  /** Tidings: dead letters of every application (the operator's). @throws AppError `forbidden` */
  allDeadLetters(principal: Principal, query: Omit<DeadLetterQuery, 'endpointId'>): Promise<Page<DeadLetterView>>;
}

/** Makes the delivery queries. */
export function createDeliveryQueries(deps: DeliveryQueriesDeps): DeliveryQueries {
  const { lookups, store } = deps;
  const now = (): Date | null => deps.clock?.sqlNow() ?? null;
  const endpointOf = async (appId: string, ref: string) => {
    const endpoint = await lookups.findEndpoint(appId, ref);
    if (endpoint === null) throw notFound('Endpoint');
    return endpoint;
  };

  return {
    async destinations(principal, appRef, messageRef, page) {
      const app = await resolveApplication(lookups, principal, appRef);
      const message = await lookups.findMessage(app.id, messageRef, { withPayload: false });
      if (message === null) throw notFound('Message');
      return store.listDestinations(app.id, message.id, page, now());
    },

    async endpointMessages(principal, appRef, endpointRef, query) {
      const app = await resolveApplication(lookups, principal, appRef);
      const endpoint = await endpointOf(app.id, endpointRef);
      if (!query.withPayload) return store.listEndpointMessages(app.id, endpoint.id, query, now());
      // The heads first, then their payloads within the page's byte budget (never 250 payloads at once).
      const heads = await store.listEndpointMessages(app.id, endpoint.id, { ...query, withPayload: false }, now());
      const read: ReadPayloads = (ids, budget) => lookups.readPayloads(app.id, ids, budget);
      const attach = (v: EndpointMessageView, payload: Uint8Array | null): EndpointMessageView => ({
        ...v,
        message: { ...v.message, payload },
      });
      const backward = query.iterator?.startsWith('-') ?? false;
      return withPayloadsWithin(heads, (v) => v.message.id, attach, read, deps.maxPageBytes, backward);
    },

    async stats(principal, appRef, endpointRef, since, until) {
      if (since !== null && until !== null && since.valueOf() > until.valueOf()) {
        throw new AppError('validation', [
          { loc: ['query', 'since'], msg: 'since must not be after until', type: 'value_error' },
        ]);
      }
      const app = await resolveApplication(lookups, principal, appRef);
      const endpoint = await endpointOf(app.id, endpointRef);
      return store.endpointStats(app.id, endpoint.id, since, until);
    },

    async deadLetters(principal, appRef, endpointRef, query) {
      const app = await resolveApplication(lookups, principal, appRef);
      const endpointId = endpointRef === null ? null : (await endpointOf(app.id, endpointRef)).id;
      return store.listDeadLetters(app.id, { ...query, endpointId });
    },

    async allDeadLetters(principal, query) {
      requireAdmin(principal);
      return store.listDeadLetters(null, { ...query, endpointId: null });
    },
  };
}
