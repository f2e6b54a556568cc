import type { DeliveryState } from '../domain/delivery-state.ts';
import { AppError, notFound } from '../domain/errors.ts';
import { hasPrefix } from '../domain/ids.ts';
import { payloadFieldEquals } from '../domain/payload-field.ts';
import { durationText, idRange, searchWindow, type SearchWindow } from '../domain/search-window.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { AttemptView, MessageQueryStore, MessageView } from '../ports/message-query-store.ts';
import type { Page, PageQuery } from '../ports/paging.ts';
import type { DeliveryDetail, DeliveryHit, MessageFilters, ScanBounds, SearchStore } from '../ports/search-store.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';
import { withPayloadsWithin, type ReadPayloads } from './page-budget.ts';
import { scanStart, searchPage, type Examine, type ScanStart } from './search-page.ts';

/** A payload field equality (src/domain/payload-field.ts): the field at `path` equals `value`. */
export interface PayloadCondition {
  readonly path: readonly string[];
  readonly value: string;
}

/** What every search takes: a page, a window (`after` required, `before` default now) and the message filters. */
export interface SearchQuery extends PageQuery, MessageFilters {
  readonly after: Date | null;
  readonly before: Date | null;
  readonly payload: PayloadCondition | null;
}

/** A delivery search: optionally one endpoint, states, and the status class or status of the last attempt. */
export interface DeliverySearchQuery extends SearchQuery {
  readonly endpointRef: string | null;
  readonly states: readonly DeliveryState[] | null;
  readonly statusCodeClass: number | null;
  readonly statusCode: number | null;
}

/** An attempt search: one endpoint (required), whether it succeeded, its status class or status. */
export interface AttemptSearchQuery extends SearchQuery {
  readonly endpointRef: string | null;
  readonly succeeded: boolean | null;
  readonly statusCodeClass: number | null;
  readonly statusCode: number | null;
}

/** A delivery found, with why it is where it is and what holds it. */
export type DeliveryFound = DeliveryHit & Omit<DeliveryDetail, 'deliveryId'>;

/** Every state but succeeded: what the never-delivered view lists. */
export const NOT_DELIVERED: readonly DeliveryState[] = Object.freeze([
  'pending',
  'leased',
  'dead',
  'skipped',
  'canceled',
]);

/** The search of the delivery log (docs/reference/api.md, "Search"), each within one application. */
export interface Search {
  /** Messages in a window. @throws AppError `not_found`, `search_unbounded`, `validation` */
  messages(
    principal: Principal,
    appRef: string,
    query: SearchQuery & { readonly withPayload: boolean },
  ): Promise<Page<MessageView>>;
  /** Deliveries of messages in a window. @throws AppError `not_found`, `search_unbounded`, `validation` */
  deliveries(principal: Principal, appRef: string, query: DeliverySearchQuery): Promise<Page<DeliveryFound>>;
  /**
   * One endpoint's deliveries in a window that did not succeed (any state but succeeded).
   * @throws as {@link Search.deliveries}
   */
  undelivered(
    principal: Principal,
    appRef: string,
    endpointRef: string,
    query: Omit<DeliverySearchQuery, 'endpointRef'>,
  ): Promise<Page<DeliveryFound>>;
  /** Attempts to one endpoint in a window. @throws AppError `not_found`, `search_unbounded`, `validation` */
  attempts(principal: Principal, appRef: string, query: AttemptSearchQuery): Promise<Page<AttemptView>>;
}

/** The bounds of every search (src/config/config.ts). */
export interface SearchSettings {
  /** TIDINGS_SEARCH_MAX_WINDOW, ms. */
  readonly maxWindowMs: number;
  /** TIDINGS_SEARCH_SCAN_ROWS: index rows one request examines at most. */
  readonly scanRows: number;
  /** TIDINGS_SEARCH_PAYLOAD_ROWS: payloads one request decrypts at most for a payload field filter. */
  readonly payloadRows: number;
  /** TIDINGS_SEARCH_PAYLOAD_BYTES: stored payload bytes one request reads at most for it (plus one payload). */
  readonly payloadBytes: number;
  /** TIDINGS_MAX_PAGE_BYTES: the payload bytes a page with content reads at most. */
  readonly maxPageBytes: number;
}

/** What the search looks up: the application, an endpoint, and payloads (decrypted). */
export type SearchLookups = Pick<ApplicationStore, 'findApplication'> &
  Pick<EndpointStore, 'findEndpoint'> &
  Pick<MessageQueryStore, 'readPayloads'>;

/** Dependencies of {@link createSearch}. */
export interface SearchDeps {
  readonly lookups: SearchLookups;
  readonly store: SearchStore;
  /** The window's default end is `nowMs()`; holds are judged at `sqlNow()` (null = the database clock). */
  readonly clock: Pick<Clock, 'nowMs' | 'sqlNow'>;
  readonly settings: SearchSettings;
}

/**
 * A live endpoint of the application by id or uid, or a deleted one by id (its canceled deliveries stay
 * searchable). Another application's endpoint is not found, as a missing one: the answers tell nothing apart.
 */
async function endpointIdOf(lookups: SearchLookups, appId: string, ref: string): Promise<string> {
  const endpoint = await lookups.findEndpoint(appId, ref);
  if (endpoint !== null) return endpoint.id;
  if (hasPrefix(ref, 'ep') && (await lookups.findEndpoint(appId, ref, { deletedToo: true })) !== null) return ref;
  throw notFound('Endpoint');
}

/**
 * The payload filter as an {@link Examine}: reads the payloads of the candidates' messages (`messageOf`) in order,
 * at most `settings.payloadRows` candidates and `settings.payloadBytes` stored bytes (plus one payload), and
 * compares each (src/domain/payload-field.ts). An erased payload has nothing to compare.
 */
function payloadExamine<T>(
  lookups: SearchLookups,
  settings: SearchSettings,
  appId: string,
  condition: PayloadCondition,
  messageOf: (item: T) => string,
): Examine<T> {
  return async (items) => {
    const candidates = items.slice(0, settings.payloadRows);
    const ids = [...new Set(candidates.map((c) => messageOf(c.value)))];
    const read = await lookups.readPayloads(appId, ids, settings.payloadBytes);
    const payloads = new Map(read.map((r) => [r.id, r.payload]));
    const matches: boolean[] = [];
    for (const c of candidates) {
      const id = messageOf(c.value);
      if (!payloads.has(id)) break;
      const payload = payloads.get(id) ?? null;
      matches.push(payload !== null && payloadFieldEquals(payload, condition.path, condition.value));
    }
    return { examined: matches.length, matches };
  };
}

/** Makes the search use cases. */
export function createSearch(deps: SearchDeps): Search {
  const { lookups, store, settings } = deps;
  const limits = {
    maxWindowMs: settings.maxWindowMs,
    maxWindowText: `TIDINGS_SEARCH_MAX_WINDOW (${durationText(settings.maxWindowMs)})`,
  };
  const windowOf = (q: SearchQuery): SearchWindow =>
    searchWindow(q.after, q.before, new Date(deps.clock.nowMs()), limits);
  const filtersOf = (q: SearchQuery): MessageFilters => ({ eventTypes: q.eventTypes, channel: q.channel, tag: q.tag });
  const boundsOf = (q: SearchQuery, start: ScanStart, range: ScanBounds['range']): ScanBounds => ({
    range,
    order: start.order,
    after: start.after,
    scanRows: settings.scanRows,
    // With a payload filter the scan returns the candidates whose payloads are then read (at most payloadRows).
    take: q.payload === null ? q.limit + 1 : settings.payloadRows,
  });
  const examineOf = <T>(appId: string, q: SearchQuery, messageOf: (item: T) => string): Examine<T> | null =>
    q.payload === null ? null : payloadExamine(lookups, settings, appId, q.payload, messageOf);

  type DeliveryQuery = Omit<DeliverySearchQuery, 'endpointRef'>;
  const searchDeliveries = async (
    appId: string,
    endpoint: string | null,
    q: DeliveryQuery,
  ): Promise<Page<DeliveryFound>> => {
    const start = scanStart(q);
    const filters = { ...filtersOf(q), states: q.states, statusCodeClass: q.statusCodeClass, statusCode: q.statusCode };
    const bounds = boundsOf(q, start, idRange('msg', windowOf(q)));
    const scanned = await store.scanDeliveries(appId, endpoint, bounds, filters);
    const page = await searchPage(
      scanned,
      q,
      start,
      examineOf<DeliveryHit>(appId, q, (d) => d.message.id),
    );
    const described = await store.describeDeliveries(
      appId,
      page.data.map((d) => d.deliveryId),
      deps.clock.sqlNow(),
    );
    const details = new Map(described.map((d) => [d.deliveryId, d]));
    return {
      ...page,
      data: page.data.map((d) => {
        const detail = details.get(d.deliveryId);
        return {
          ...d,
          reason: detail?.reason ?? null,
          stateChangedAt: detail?.stateChangedAt ?? null,
          heldBy: detail?.heldBy ?? null,
          heldUntil: detail?.heldUntil ?? null,
        };
      }),
    };
  };

  return {
    async messages(principal, appRef, q) {
      const app = await resolveApplication(lookups, principal, appRef);
      const start = scanStart(q);
      const scanned = await store.scanMessages(app.id, boundsOf(q, start, idRange('msg', windowOf(q))), filtersOf(q));
      const page = await searchPage(
        scanned,
        q,
        start,
        examineOf<MessageView>(app.id, q, (m) => m.id),
      );
      if (!q.withPayload) return page;
      const read: ReadPayloads = (ids, budget) => lookups.readPayloads(app.id, ids, budget);
      const attach = (m: MessageView, payload: Uint8Array | null): MessageView => ({ ...m, payload });
      return withPayloadsWithin(page, (m) => m.id, attach, read, settings.maxPageBytes, start.backward);
    },

    async deliveries(principal, appRef, q) {
      const app = await resolveApplication(lookups, principal, appRef);
      const endpoint = q.endpointRef === null ? null : await endpointIdOf(lookups, app.id, q.endpointRef);
      return searchDeliveries(app.id, endpoint, q);
    },

    async undelivered(principal, appRef, endpointRef, q) {
      const app = await resolveApplication(lookups, principal, appRef);
      const endpoint = await endpointIdOf(lookups, app.id, endpointRef);
      if (q.states?.includes('succeeded') === true) {
        const msg =
          'succeeded deliveries were delivered: this view lists the others ' + '(search/delivery lists every state)';
        throw new AppError('validation', [{ loc: ['query', 'delivery_state'], msg, type: 'value_error' }]);
      }
      return searchDeliveries(app.id, endpoint, { ...q, states: q.states ?? NOT_DELIVERED });
    },

    async attempts(principal, appRef, q) {
      const app = await resolveApplication(lookups, principal, appRef);
      if (q.endpointRef === null) {
        throw new AppError('search_unbounded', [
          {
            loc: ['query', 'endpoint_id'],
            type: 'search_unbounded.no_indexed_key',
            msg:
              'attempts are indexed by endpoint: add endpoint_id (id or uid); to search every endpoint, ' +
              "search deliveries (search/delivery), which carry each one's last attempt",
          },
        ]);
      }
      const endpoint = await endpointIdOf(lookups, app.id, q.endpointRef);
      const start = scanStart(q);
      const filters = {
        ...filtersOf(q),
        succeeded: q.succeeded,
        statusCodeClass: q.statusCodeClass,
        statusCode: q.statusCode,
      };
      const bounds = boundsOf(q, start, idRange('atmpt', windowOf(q)));
      const scanned = await store.scanAttempts(app.id, endpoint, bounds, filters);
      return searchPage(
        scanned,
        q,
        start,
        examineOf<AttemptView>(app.id, q, (a) => a.messageId),
      );
    },
  };
}
