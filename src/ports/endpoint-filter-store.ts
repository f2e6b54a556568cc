import type { PayloadFilter } from '../domain/payload-filter.ts';
import type { EndpointKey } from './retry-policy-store.ts';
import type { Tx } from './unit-of-work.ts';

/** The payload filters of an application's live endpoints, as of one filter revision. */
export interface AppFilters {
  /** The application's filter revision (applications.filter_revision) the filters were read at. */
  readonly revision: string;
  /** The live endpoints that have a filter, in id order. */
  readonly filters: readonly { readonly endpointId: string; readonly filter: PayloadFilter }[];
}

/** An endpoint a message skipped because of its payload filter, as the endpoint is now. */
export interface FilteredEndpoint {
  readonly endpointId: string;
  /** Null when the endpoint was deleted since. */
  readonly url: string | null;
  readonly description: string | null;
}

/**
 * Endpoint payload filters (docs/adr/0029-endpoint-payload-filters.md): the column endpoints.filter, the
 * application's filter revision that every change raises, and the endpoints a message skipped
 * (messages.filtered_out).
 */
export interface EndpointFilterStore {
  /** A live endpoint's filter (null = none), or undefined when there is no such endpoint. */
  read(key: EndpointKey): Promise<PayloadFilter | null | undefined>;
  /**
   * Sets (null: clears) a live endpoint's filter and raises its application's filter revision, in one statement;
   * returns the filter after, or undefined when there is no such endpoint (nothing changed). `now` follows the
   * Clock seam (null = the database clock): the endpoint's `updated_at`.
   */
  write(key: EndpointKey, filter: PayloadFilter | null, now: Date | null): Promise<PayloadFilter | null | undefined>;
  /** The filters of an application's live endpoints with the revision they are at; null = no such application. */
  forApp(appId: string, tx?: Tx): Promise<AppFilters | null>;
  /**
   * The endpoints a message of the application skipped because of their filter, or undefined when there is no such
   * message. `messageRef` is its id or eventId.
   */
  filteredOut(appId: string, messageRef: string): Promise<readonly FilteredEndpoint[] | undefined>;
}
