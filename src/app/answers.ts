import type { ApplicationRecord } from '../ports/application-store.ts';
import type { EndpointRecord } from '../ports/endpoint-store.ts';
import type { EventTypeRecord } from '../ports/event-type-store.ts';
import type { StoredAnswer } from '../ports/idempotency-store.ts';
import type { MessageView } from '../ports/message-query-store.ts';
import type { TaskRecord } from '../ports/task-store.ts';

/**
 * The answers of the writes a POST may repeat under an Idempotency-Key (docs/adr/0003-svix-compatibility.md):
 * records in the Svix shapes (camelCase, ISO 8601 instants), the JSON that the idempotency store keeps with
 * the key in the write's own transaction, so that a replay answers exactly what the first request did. The
 * use cases build them inside that transaction; the HTTP layer only sends them (and reuses the shapes for its
 * reads, so a GET and a replayed POST agree).
 */

const iso = (d: Date): string => d.toISOString();

/** Svix `ApplicationOut`. */
export function applicationOut(app: ApplicationRecord) {
  return {
    id: app.id, uid: app.uid, name: app.name, throttleRate: app.rateLimit, rateLimit: app.rateLimit,
    metadata: { ...app.metadata }, createdAt: iso(app.createdAt), updatedAt: iso(app.updatedAt),
  };
}

/** Svix `EndpointOut` (never the secret). */
export function endpointOut(ep: EndpointRecord) {
  const types = ep.filterTypes === null ? null : [...ep.filterTypes];
  return {
    id: ep.id, uid: ep.uid, url: ep.url, description: ep.description, version: ep.version, disabled: ep.status === 'disabled',
    eventTypes: types, filterTypes: types, channels: ep.channels === null ? null : [...ep.channels],
    throttleRate: ep.rateLimit, rateLimit: ep.rateLimit, metadata: { ...ep.metadata }, headers: { ...ep.headers },
    createdAt: iso(ep.createdAt), updatedAt: iso(ep.updatedAt),
  };
}

/** Svix `EventTypeOut`; `schemas` only `withContent` (Svix list semantics), else null. */
export function eventTypeOut(et: EventTypeRecord, withContent = true) {
  return {
    name: et.name, description: et.description, archived: et.archived, deprecated: et.deprecated,
    schemas: withContent && et.schemas !== null ? { ...et.schemas } : null, groupName: et.groupName,
    featureFlags: et.featureFlags === null ? null : [...et.featureFlags], featureFlag: et.featureFlags?.[0] ?? null,
    createdAt: iso(et.createdAt), updatedAt: iso(et.updatedAt),
  };
}

/** The fields of a message other than its payload, in Svix `MessageOut` order (`deliverAt` last). */
export function messageHead(msg: Pick<MessageView, 'id' | 'eventId' | 'eventType' | 'channels' | 'tags' | 'createdAt'> & { readonly deliverAt?: Date | null }) {
  return {
    eventId: msg.eventId, eventType: msg.eventType,
    channels: msg.channels === null ? null : [...msg.channels], tags: msg.tags === null ? null : [...msg.tags],
    id: msg.id, timestamp: iso(msg.createdAt), deliverAt: msg.deliverAt == null ? null : iso(msg.deliverAt),
  };
}

/** Svix `RecoverOut` / `ReplayOut`: the task that was started. */
export function taskStartedOut(t: TaskRecord) {
  return { id: t.id, status: t.status, task: t.kind, updatedAt: iso(t.updatedAt) };
}

/** A stored answer with no body (204 No Content, or 202 Accepted for a resend). */
export const emptyAnswer = (status: 202 | 204): StoredAnswer => ({ status, body: null });
