import { AppError, notFound } from '../domain/errors.ts';
import {
  compileFilter,
  filterDocument,
  filterIssues,
  filterMatches,
  filterPayload,
  matchesAll,
  type CompiledFilter,
  type FilterLimits,
  type Json,
  type PayloadFilter,
} from '../domain/payload-filter.ts';
import type { ApplicationRecord, ApplicationStore } from '../ports/application-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { EndpointFilterStore, FilteredEndpoint, AppFilters } from '../ports/endpoint-filter-store.ts';
import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { FilterOutcome, NewMessage } from '../ports/message-store.ts';
import type { EndpointKey } from '../ports/retry-policy-store.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';
import type { LookupCache } from './lookup-cache.ts';

/** Where a filter sits in a request body: its problems are named from here. */
const FILTER_LOC = ['body', 'filter'] as const;

/** Dependencies of {@link createEndpointFilters}. */
export interface EndpointFiltersDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  readonly store: EndpointFilterStore;
  readonly clock: Clock;
  /** The bounds every filter is checked against (TIDINGS_FILTER_MAX_*). */
  readonly limits: FilterLimits;
}

/** A sample message to test a filter against (`POST …/filter/test`). */
export interface FilterSample {
  readonly eventType: string;
  readonly eventId?: string | null;
  readonly channels?: readonly string[] | null;
  readonly tags?: readonly string[] | null;
  /** The JSON payload; absent = a raw message (its payload conditions see a missing field). */
  readonly payload?: Json;
}

/**
 * Endpoint payload filters (Tidings-only routes; docs/adr/0029-endpoint-payload-filters.md). A filter is checked
 * when written (422 naming the part that is wrong); a change applies to messages published after it.
 */
export interface EndpointFilters {
  /** The endpoint's filter (null = none). @throws AppError `not_found` */
  get(principal: Principal, appRef: string, endpointRef: string): Promise<PayloadFilter | null>;
  /**
   * Sets the endpoint's filter; `{}` (matches every message) or null clears it.
   * @throws AppError `not_found`; `validation` naming each wrong part under body.filter (nothing changed)
   */
  set(principal: Principal, appRef: string, endpointRef: string, filter: unknown): Promise<PayloadFilter | null>;
  /**
   * Whether `filter` (checked as {@link set} checks it) matches `sample`; writes nothing.
   * @throws AppError `not_found` (the application), `validation`
   */
  test(principal: Principal, appRef: string, filter: unknown, sample: FilterSample): Promise<boolean>;
  /** The endpoints a message skipped because of their filter. @throws AppError `not_found` */
  filteredOut(principal: Principal, appRef: string, messageRef: string): Promise<readonly FilteredEndpoint[]>;
}

/**
 * A filter as the routes take it: checked against the bounds and the grammar.
 * @throws AppError `validation` naming each wrong part from body.filter
 */
export function checkedFilter(filter: unknown, limits: FilterLimits): PayloadFilter {
  const issues = filterIssues(filter, limits);
  if (issues.length > 0) {
    throw new AppError(
      'validation',
      issues.map((i) => ({ loc: [...FILTER_LOC, ...i.loc], msg: i.msg, type: 'value_error.filter' })),
    );
  }
  return filter as PayloadFilter;
}

/** Makes the filter use cases. */
export function createEndpointFilters(deps: EndpointFiltersDeps): EndpointFilters {
  const endpointKey = async (principal: Principal, appRef: string, endpointRef: string): Promise<EndpointKey> => {
    const app = await resolveApplication(deps.lookups, principal, appRef);
    const ep = await deps.lookups.findEndpoint(app.id, endpointRef);
    if (ep === null) throw notFound('Endpoint');
    return { appId: app.id, endpointId: ep.id };
  };
  return {
    async get(principal, appRef, endpointRef) {
      const filter = await deps.store.read(await endpointKey(principal, appRef, endpointRef));
      if (filter === undefined) throw notFound('Endpoint');
      return filter;
    },
    async set(principal, appRef, endpointRef, filter) {
      const key = await endpointKey(principal, appRef, endpointRef);
      const checked = filter === null ? null : checkedFilter(filter, deps.limits);
      const stored = checked === null || matchesAll(checked) ? null : checked;
      const after = await deps.store.write(key, stored, deps.clock.sqlNow());
      if (after === undefined) throw notFound('Endpoint');
      return after;
    },
    async test(principal, appRef, filter, sample) {
      await resolveApplication(deps.lookups, principal, appRef);
      return filterMatches(checkedFilter(filter, deps.limits), sample);
    },
    async filteredOut(principal, appRef, messageRef) {
      const app = await resolveApplication(deps.lookups, principal, appRef);
      const skipped = await deps.store.filteredOut(app.id, messageRef);
      if (skipped === undefined) throw notFound('Message');
      return skipped;
    },
  };
}

/** What a publish tells {@link PublishFilters.decide} of its message. */
export type FilteredMessage = Pick<
  NewMessage,
  'eventType' | 'eventId' | 'channels' | 'tags' | 'payload' | 'contentType'
>;

/** The payload filters as a publish meets them: evaluated once per message and endpoint, before it is stored. */
export interface PublishFilters {
  /**
   * Which of the application's endpoints the message skips because of their filter, with the filter revision the
   * publish statement confirms; null when the application's record carries no revision (nothing to confirm).
   * `cached`: the filters may come from the cache (the statement confirms their revision); otherwise they are read.
   */
  decide(
    tx: Tx | undefined,
    app: ApplicationRecord,
    message: FilteredMessage,
    cached: boolean,
  ): Promise<FilterOutcome | null>;
}

/** An application's filters as a publish keeps them: each compiled once, when read. */
export interface CompiledAppFilters {
  readonly revision: string;
  readonly filters: readonly { readonly endpointId: string; readonly matches: CompiledFilter }[];
}

/** Dependencies of {@link createPublishFilters}. */
export interface PublishFiltersDeps {
  readonly store: Pick<EndpointFilterStore, 'forApp'>;
  /** Applications' compiled filters by id, as publishes found them (TIDINGS_PUBLISH_LOOKUP_CACHE entries). */
  readonly cache: LookupCache<CompiledAppFilters>;
}

const compiled = (read: AppFilters | null): CompiledAppFilters | null =>
  read === null
    ? null
    : {
        revision: read.revision,
        filters: read.filters.map((f) => ({ endpointId: f.endpointId, matches: compileFilter(f.filter) })),
      };

/** Makes the publish side of the filters. */
export function createPublishFilters(deps: PublishFiltersDeps): PublishFilters {
  return {
    async decide(tx, app, message, cached) {
      const wanted = app.filterRevision;
      if (wanted === undefined) return null;
      // No filter was ever set: nothing to read, but the revision is confirmed all the same.
      if (wanted === '0') return { revision: wanted, skipped: [] };
      const read = async () => compiled(await deps.store.forApp(app.id, tx));
      let filters = await deps.cache.get(app.id, !cached, read);
      if (filters !== null && filters.revision !== wanted && cached) filters = await deps.cache.get(app.id, true, read);
      // The application is gone: the statement refuses the message (its foreign key), whatever is passed.
      if (filters === null) return { revision: wanted, skipped: [] };
      if (filters.filters.length === 0) return { revision: filters.revision, skipped: [] };
      const doc = filterDocument({ ...message, payload: filterPayload(message.payload, message.contentType) });
      const skipped = filters.filters.filter((f) => !f.matches(doc)).map((f) => f.endpointId);
      return { revision: filters.revision, skipped };
    },
  };
}
