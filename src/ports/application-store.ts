import type { FindOptions, Page, PageQuery } from './paging.ts';
import type { Tx } from './unit-of-work.ts';

/**
 * Applications (the tenants): the one owner of writes to `applications`. Writes take the caller's {@link Tx}
 * so that they commit with the other writes of one use case (and with an idempotency key). Reads take an
 * optional `tx`: inside a transaction every statement must use it.

 * Instants are Dates from the database clock; `now: Date | null` parameters follow the Clock seam
 * (null = `clock_timestamp()`). Errors: unique violations become AppError `conflict` (409); everything else
 * is a fault.
 */
export interface ApplicationStore {
  /**
   * Inserts an application.
   * @throws AppError `conflict` when `uid` is taken
   */
  insertApplication(tx: Tx, app: NewApplication, now: Date | null): Promise<ApplicationRecord>;
  /**
   * Inserts an application unless one with the same `uid` exists; returns the stored one either way.
   * Safe under concurrency (`ON CONFLICT DO NOTHING`, then read).
   */
  insertApplicationIfAbsent(
    tx: Tx,
    app: NewApplication & { readonly uid: string },
    now: Date | null,
  ): Promise<{ readonly app: ApplicationRecord; readonly created: boolean }>;
  /** Finds an application by id (`app_…`) or by uid. `forUpdate` locks the row (needs `tx`). */
  findApplication(ref: string, options?: FindOptions): Promise<ApplicationRecord | null>;
  /** One page of applications, without those `filters` exclude (Svix `exclude_apps_with_*`). */
  listApplications(page: PageQuery, filters?: ApplicationListFilters): Promise<Page<ApplicationRecord>>;
  /**
   * Changes the given fields; absent fields keep their value.
   * @throws AppError `conflict` when the new `uid` is taken
   */
  updateApplication(
    tx: Tx,
    id: string,
    changes: ApplicationChanges,
    now: Date | null,
  ): Promise<ApplicationRecord | null>;
  /** Deletes an application and (by cascade) everything it owns. False when there was none. */
  deleteApplication(tx: Tx, id: string): Promise<boolean>;
}

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

export interface ApplicationRecord {
  readonly id: string;
  readonly uid: string | null;
  readonly name: string;
  /** Messages per second (Svix `throttleRate`), null = unlimited. */
  readonly rateLimit: number | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /**
   * Raised by every change of one of its endpoints' payload filters (docs/adr/0029-endpoint-payload-filters.md);
   * '0' = none ever set. Absent where a record was not read from the store.
   */
  readonly filterRevision?: string;
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
