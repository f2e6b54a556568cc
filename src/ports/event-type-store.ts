import type { Page, PageQuery } from './paging.ts';
import type { Tx } from './unit-of-work.ts';

/**
 * Event types (Svix `/api/v1/event-type`): one catalog for the whole deployment, as Svix has one per
 * environment. `schemas` is Svix's versioned map, `{"1": <JSON Schema>, "2": …}`; a message of a type with
 * schemas is checked against the highest version (docs/adr/0003-svix-compatibility.md).
 */
export interface EventTypeRecord extends EventTypeFields {
  readonly name: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /**
   * The row's revision (decimal text of a bigint): new from one sequence on every insert and update, so it
   * names one state of the row for ever, also across a delete and a new registration of the same name.
   */
  readonly revision: string;
}

/** The writable fields of an event type (Svix `EventTypeIn` without the name). */
export interface EventTypeFields {
  readonly description: string;
  /** Archived = "deleted" in Svix: still readable, no longer accepted for new messages or filters. */
  readonly archived: boolean;
  readonly deprecated: boolean;
  /** Version → JSON Schema, or null. */
  readonly schemas: Readonly<Record<string, unknown>> | null;
  readonly groupName: string | null;
  readonly featureFlags: readonly string[] | null;
}

/** A PATCH: only the given fields change. */
export type EventTypeChanges = Partial<EventTypeFields>;

/** A page of event types, keyset on the name (the iterator is a name; `-name` goes back). */
export interface EventTypeListQuery extends PageQuery {
  readonly includeArchived: boolean;
}

/**
 * Storage of event types. Writes take the caller's {@link Tx} (they commit with an idempotency key);
 * reads inside a transaction must pass it (the embedded engine has one connection).
 * Instants come from the database clock; `now` follows the Clock seam (null = `clock_timestamp()`).
 */
export interface EventTypeStore {
  /**
   * Svix create: inserts the event type, or replaces an archived one of the same name (unarchiving it;
   * description and schemas are not kept, as Svix documents).
   * @returns null when a live (unarchived) event type has this name
   */
  createEventType(tx: Tx, name: string, fields: EventTypeFields, now: Date | null): Promise<EventTypeRecord | null>;
  /** Svix PUT: inserts or overwrites every field. `created` says which. */
  upsertEventType(
    tx: Tx,
    name: string,
    fields: EventTypeFields,
    now: Date | null,
  ): Promise<{ readonly eventType: EventTypeRecord; readonly created: boolean }>;
  /** The event type of this name, archived or not, or null. `forUpdate` locks the row (needs `tx`). */
  findEventType(
    name: string,
    options?: { readonly tx?: Tx; readonly forUpdate?: boolean },
  ): Promise<EventTypeRecord | null>;
  listEventTypes(query: EventTypeListQuery): Promise<Page<EventTypeRecord>>;
  /** Changes the given fields; null when there is no such event type. */
  updateEventType(tx: Tx, name: string, changes: EventTypeChanges, now: Date | null): Promise<EventTypeRecord | null>;
  /** Deletes the row (Svix `expunge=true`); false when there was none. */
  deleteEventType(tx: Tx, name: string): Promise<boolean>;
  /** The names among `names` that are not registered or are archived, in the order given. */
  unknownEventTypes(names: readonly string[], tx?: Tx): Promise<string[]>;
}
