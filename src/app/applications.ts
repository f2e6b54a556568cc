import type { ApiKeyStore } from '../ports/api-key-store.ts';
import { AppError, notFound } from '../domain/errors.ts';
import { hasPrefix, newId } from '../domain/ids.ts';
import type {
  ApplicationChanges,
  ApplicationListFilters,
  ApplicationRecord,
  ApplicationStore,
} from '../ports/application-store.ts';
import type { Page, PageQuery } from '../ports/paging.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import type { LookupCache } from './lookup-cache.ts';
import type { Principal } from './credentials.ts';

/** What a caller gives for an application (Svix `ApplicationIn`). `rateLimit` is Svix `throttleRate`. */
export interface ApplicationInput {
  readonly name: string;
  /** Absent (undefined) on a PUT keeps the current uid; null clears it. */
  readonly uid?: string | null;
  readonly rateLimit: number | null;
  readonly metadata: Readonly<Record<string, string>>;
}

/** A 422 naming one field, in the Svix/FastAPI shape. */
export function fieldError(loc: readonly (string | number)[], msg: string, type = 'value_error'): AppError {
  return new AppError('validation', [{ loc, msg, type }]);
}

/**
 * Isolation (docs/guides/security.md, "Isolation between applications"): operator-only routes (listing or creating
 * applications) answer 403 to an application-scoped key whatever they name.
 * @throws AppError `forbidden`
 */
export function requireAdmin(principal: Principal): void {
  if (principal.kind !== 'admin') throw new AppError('forbidden', 'This credential may not use this route');
}

/**
 * Resolves an application by id or uid as `principal` sees it: an application-scoped key gets the same 404
 * for another application as for a missing one (docs/guides/security.md: no existence oracle).
 * @throws AppError `not_found`
 */
export async function resolveApplication(
  store: Pick<ApplicationStore, 'findApplication'>,
  principal: Principal,
  ref: string,
  tx?: Tx,
  forUpdate = false,
): Promise<ApplicationRecord> {
  const app = await store.findApplication(ref, tx === undefined ? {} : { tx, forUpdate });
  if (app === null || (principal.kind === 'app' && principal.appId !== app.id)) throw notFound('Application');
  return app;
}

/** The application's fields in the order a refusal names them, with the name the API gives each. */
const OPERATOR_FIELDS: readonly (readonly [keyof ApplicationChanges, string])[] = [
  ['uid', 'uid'],
  ['rateLimit', 'throttleRate'],
  ['metadata', 'metadata'],
  ['name', 'name'],
];

const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const sameMetadata = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
  sameValue(
    Object.entries(a).sort(([x], [y]) => (x < y ? -1 : 1)),
    Object.entries(b).sort(([x], [y]) => (x < y ? -1 : 1)),
  );

/**
 * An application's fields are the operator's (docs/adr/0011-credential-capabilities.md): a credential scoped
 * to the application may send them unchanged (a PUT echoing what it read) but changes none of them — a new
 * uid would send the operator's get-or-create publishes to a new, empty application; `throttleRate` is the
 * operator's limit on its customer.
 * @throws AppError `field_forbidden` naming the first field `changes` would change
 */
export function checkCustomerChanges(
  principal: Principal,
  current: ApplicationRecord,
  changes: ApplicationChanges,
): void {
  if (principal.kind === 'admin') return;
  for (const [field, wire] of OPERATOR_FIELDS) {
    const next = changes[field];
    if (next === undefined) continue;
    const unchanged =
      field === 'metadata'
        ? sameMetadata(current.metadata, next as Readonly<Record<string, string>>)
        : sameValue(current[field], next);
    if (!unchanged)
      throw new AppError(
        'field_forbidden',
        `This credential may not change the application's ${wire}; only the operator can`,
      );
  }
}

/** A uid must not look like an application id, or it could shadow one. */
function checkUid(uid: string | null | undefined): void {
  if (typeof uid === 'string' && hasPrefix(uid, 'app'))
    throw fieldError(['body', 'uid'], 'uid must not have the form of an application id (app_…)');
}

/** Dependencies of {@link createApplications}. */
export interface ApplicationsDeps {
  readonly store: ApplicationStore;
  /** Revokes the application's scoped keys when it is deleted. */
  readonly keys: Pick<ApiKeyStore, 'revokeApplicationKeys'>;
  readonly clock: Clock;
  readonly random: Random;
  /** Applications by reference (id or uid) as publishes found them; absent = every publish reads its application. */
  readonly publishCache?: LookupCache<ApplicationRecord>;
}

/** Application management (Svix applications API). Writes run in the caller's transaction. */
export interface Applications {
  /**
   * Creates an application. With `getIfExists` and a uid that is taken, returns the existing one
   * (`created: false`) instead of 409.
   * @throws AppError `forbidden` for a scoped key, `conflict` when the uid is taken (without getIfExists)
   */
  create(
    tx: Tx,
    principal: Principal,
    input: ApplicationInput,
    options: { readonly getIfExists: boolean },
  ): Promise<{ readonly app: ApplicationRecord; readonly created: boolean }>;
  /** @throws AppError `forbidden` for a scoped key */
  /** One page of applications, less those `filters` exclude (Svix `exclude_apps_with_*`). Operator only. */
  list(principal: Principal, page: PageQuery, filters?: ApplicationListFilters): Promise<Page<ApplicationRecord>>;
  /** @throws AppError `not_found` */
  get(principal: Principal, ref: string): Promise<ApplicationRecord>;
  /**
   * PUT: replaces name, rate limit and metadata (and uid when given); a scoped credential may only send them
   * unchanged (`field_forbidden` otherwise). When `ref` names no application and
   * is not an `app_` id, an admin creates one with uid = `input.uid ?? ref` (Svix "create or update").
   * @throws AppError `not_found`, `conflict`
   */
  upsert(
    tx: Tx,
    principal: Principal,
    ref: string,
    input: ApplicationInput,
  ): Promise<{ readonly app: ApplicationRecord; readonly created: boolean }>;
  /**
   * PATCH: changes the given fields only.
   * @throws AppError `not_found`, `conflict`, `field_forbidden` (a scoped credential changing any field)
   */
  patch(tx: Tx, principal: Principal, ref: string, changes: ApplicationChanges): Promise<ApplicationRecord>;
  /**
   * Deletes the application, everything it owns, and revokes its scoped keys. Operator only (ADR 0011; the
   * route refuses scoped credentials before this runs).
   * @throws AppError `not_found`, `forbidden`
   */
  delete(tx: Tx, principal: Principal, ref: string): Promise<void>;
  /**
   * The application a message is published to: `ref` resolved for `principal`; when missing and `create`
   * is given (Svix `MessageIn.application`), an admin creates it (uid = `create.uid ?? ref`). With
   * `cached` and no `create`, the application may come from the publish lookup cache and be stale: the
   * caller has the publish statement confirm `ref` (docs/adr/0006-round-trips-and-wake-ups.md). Any other
   * call reads it, and keeps what it found in that cache.
   * @throws AppError `not_found`
   */
  resolveForPublish(
    tx: Tx,
    principal: Principal,
    ref: string,
    create: ApplicationInput | null,
    options?: { readonly cached?: boolean },
  ): Promise<ApplicationRecord>;
}

/** Makes the application use cases. */
export function createApplications(deps: ApplicationsDeps): Applications {
  const { store, clock } = deps;
  const newAppId = () => newId('app', clock.nowMs(), () => deps.random.next());

  const insertFor = async (tx: Tx, principal: Principal, ref: string, input: ApplicationInput) => {
    if (principal.kind !== 'admin' || hasPrefix(ref, 'app')) throw notFound('Application');
    const uid = input.uid ?? ref;
    checkUid(uid);
    return store.insertApplicationIfAbsent(
      tx,
      { id: newAppId(), uid, name: input.name, rateLimit: input.rateLimit, metadata: input.metadata },
      clock.sqlNow(),
    );
  };

  return {
    async create(tx, principal, input, options) {
      requireAdmin(principal);
      checkUid(input.uid);
      const app = {
        id: newAppId(),
        uid: input.uid ?? null,
        name: input.name,
        rateLimit: input.rateLimit,
        metadata: input.metadata,
      };
      if (options.getIfExists && app.uid !== null)
        return store.insertApplicationIfAbsent(tx, { ...app, uid: app.uid }, clock.sqlNow());
      return { app: await store.insertApplication(tx, app, clock.sqlNow()), created: true };
    },

    async list(principal, page, filters = {}) {
      requireAdmin(principal);
      return store.listApplications(page, filters);
    },

    get: (principal, ref) => resolveApplication(store, principal, ref),

    async upsert(tx, principal, ref, input) {
      const found = await store.findApplication(ref, { tx, forUpdate: true });
      if (found === null) return insertFor(tx, principal, ref, input);
      if (principal.kind === 'app' && principal.appId !== found.id) throw notFound('Application');
      checkUid(input.uid);
      const changes: ApplicationChanges = {
        name: input.name,
        rateLimit: input.rateLimit,
        metadata: input.metadata,
        ...(input.uid === undefined ? {} : { uid: input.uid }),
      };
      checkCustomerChanges(principal, found, changes);
      const app = await store.updateApplication(tx, found.id, changes, clock.sqlNow());
      if (app === null) throw notFound('Application');
      return { app, created: false };
    },

    async patch(tx, principal, ref, changes) {
      const found = await resolveApplication(store, principal, ref, tx, true);
      checkUid(changes.uid);
      checkCustomerChanges(principal, found, changes);
      const app = await store.updateApplication(tx, found.id, changes, clock.sqlNow());
      if (app === null) throw notFound('Application');
      return app;
    },

    async delete(tx, principal, ref) {
      requireAdmin(principal);
      const found = await resolveApplication(store, principal, ref, tx, true);
      await deps.keys.revokeApplicationKeys(tx, found.id, clock.sqlNow());
      await store.deleteApplication(tx, found.id);
    },

    async resolveForPublish(tx, principal, ref, create, options = {}) {
      const read = () => store.findApplication(ref, { tx });
      // A get-or-create may insert the application in this transaction: never kept before its commit.
      const found =
        create !== null || deps.publishCache === undefined
          ? await read()
          : await deps.publishCache.get(ref, options.cached !== true, read);
      if (found !== null) {
        if (principal.kind === 'app' && principal.appId !== found.id) throw notFound('Application');
        return found;
      }
      if (create === null) throw notFound('Application');
      return (await insertFor(tx, principal, ref, create)).app;
    },
  };
}
