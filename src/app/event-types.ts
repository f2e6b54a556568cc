import { AppError, notFound } from '../domain/errors.ts';
import type { Page } from '../ports/paging.ts';
import type { Clock } from '../ports/clock.ts';
import type {
  EventTypeChanges,
  EventTypeFields,
  EventTypeListQuery,
  EventTypeRecord,
  EventTypeStore,
} from '../ports/event-type-store.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import { fieldError, requireAdmin } from './applications.ts';
import type { Principal } from './credentials.ts';
import type { Endpoints } from './endpoints.ts';
import type { PayloadSchemas } from './payload-schemas.ts';

/** Dependencies of {@link createEventTypes}. */
export interface EventTypesDeps {
  readonly store: EventTypeStore;
  readonly schemas: PayloadSchemas;
  readonly clock: Clock;
}

/**
 * Event type management (Svix `/api/v1/event-type`). The catalog is deployment-wide, as Svix's is per
 * environment: every credential may read it; only the operator (admin) may change it.
 */
export interface EventTypes {
  list(principal: Principal, query: EventTypeListQuery): Promise<Page<EventTypeRecord>>;
  /** @throws AppError `not_found` */
  get(principal: Principal, name: string): Promise<EventTypeRecord>;
  /**
   * Svix create: a new event type, or an archived one unarchived and overwritten.
   * @throws AppError `forbidden` (scoped key), `validation` (schemas), `conflict` (a live one has the name)
   */
  create(tx: Tx, principal: Principal, name: string, fields: EventTypeFields): Promise<EventTypeRecord>;
  /** Svix PUT: create or overwrite. @throws AppError `forbidden`, `validation` */
  upsert(
    tx: Tx,
    principal: Principal,
    name: string,
    fields: EventTypeFields,
  ): Promise<{ readonly eventType: EventTypeRecord; readonly created: boolean }>;
  /** Svix PATCH. @throws AppError `forbidden`, `validation`, `not_found` */
  patch(tx: Tx, principal: Principal, name: string, changes: EventTypeChanges): Promise<EventTypeRecord>;
  /**
   * Svix DELETE: archives the event type (kept, readable, refused for new messages); with `expunge`, deletes
   * it. Messages already published keep their event type name either way.
   * @throws AppError `forbidden`, `not_found`
   */
  delete(tx: Tx, principal: Principal, name: string, expunge: boolean): Promise<void>;
}

/** Makes the event type use cases. */
export function createEventTypes(deps: EventTypesDeps): EventTypes {
  const { store, clock } = deps;
  const checkSchemas = (schemas: unknown): void => {
    const issues = deps.schemas.check(schemas);
    if (issues.length > 0) throw new AppError('validation', issues);
  };

  return {
    list: (_principal, query) => store.listEventTypes(query),

    async get(_principal, name) {
      const found = await store.findEventType(name);
      if (found === null) throw notFound('Event type');
      return found;
    },

    async create(tx, principal, name, fields) {
      requireAdmin(principal);
      checkSchemas(fields.schemas);
      const created = await store.createEventType(tx, name, fields, clock.sqlNow());
      if (created === null) throw new AppError('conflict', `An event type named "${name}" already exists`);
      return created;
    },

    async upsert(tx, principal, name, fields) {
      requireAdmin(principal);
      checkSchemas(fields.schemas);
      return store.upsertEventType(tx, name, fields, clock.sqlNow());
    },

    async patch(tx, principal, name, changes) {
      requireAdmin(principal);
      if (changes.schemas !== undefined) checkSchemas(changes.schemas);
      const updated = await store.updateEventType(tx, name, changes, clock.sqlNow());
      if (updated === null) throw notFound('Event type');
      return updated;
    },

    async delete(tx, principal, name, expunge) {
      requireAdmin(principal);
      const done = expunge
        ? await store.deleteEventType(tx, name)
        : (await store.updateEventType(tx, name, { archived: true }, clock.sqlNow())) !== null;
      if (!done) throw notFound('Event type');
    },
  };
}

/**
 * The endpoint use cases with Svix's subscription check in front, when `strict` (TIDINGS_STRICT_EVENT_TYPES):
 * `filterTypes` / `eventTypes` may name only registered, unarchived event types; otherwise 422 at
 * loc `body.eventTypes` naming the unknown ones. Not strict: returns `endpoints` unchanged.
 */
export function withSubscriptionCheck(
  endpoints: Endpoints,
  deps: { readonly store: Pick<EventTypeStore, 'unknownEventTypes'>; readonly strict: boolean },
): Endpoints {
  if (!deps.strict) return endpoints;
  const check = async (tx: Tx, types: readonly string[] | null | undefined): Promise<void> => {
    if (types === null || types === undefined) return;
    const unknown = await deps.store.unknownEventTypes(types, tx);
    if (unknown.length > 0)
      throw fieldError(
        ['body', 'eventTypes'],
        'These event types do not exist (or are archived), and TIDINGS_STRICT_EVENT_TYPES=true refuses them: ' +
          `${unknown.join(', ')}`,
      );
  };
  return {
    ...endpoints,
    async create(tx, principal, appRef, input) {
      await check(tx, input.filterTypes);
      return endpoints.create(tx, principal, appRef, input);
    },
    async upsert(tx, principal, appRef, ref, input) {
      await check(tx, input.filterTypes);
      return endpoints.upsert(tx, principal, appRef, ref, input);
    },
    async patch(tx, principal, appRef, ref, changes) {
      await check(tx, changes.filterTypes);
      return endpoints.patch(tx, principal, appRef, ref, changes);
    },
  };
}
