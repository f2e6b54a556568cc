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
 * work a route hands to {@link writeOnce} (app/write-once.ts) calls its use case and builds the answer with
 * one of the `…Answer` functions below, which also fix the status; nothing of the HTTP layer runs in the
 * transaction. The HTTP layer then only sends the answer (and reuses the shapes for its reads, so a GET
 * and a replayed POST agree).
 */

const iso = (d: Date): string => d.toISOString();

/** Svix `ApplicationOut`. */
export function applicationOut(app: ApplicationRecord) {
  return {
    id: app.id,
    uid: app.uid,
    name: app.name,
    throttleRate: app.rateLimit,
    rateLimit: app.rateLimit,
    metadata: { ...app.metadata },
    createdAt: iso(app.createdAt),
    updatedAt: iso(app.updatedAt),
  };
}

/** Svix `EndpointOut` (never the secret). */
export function endpointOut(ep: EndpointRecord) {
  const types = ep.filterTypes === null ? null : [...ep.filterTypes];
  return {
    id: ep.id,
    uid: ep.uid,
    url: ep.url,
    description: ep.description,
    version: ep.version,
    disabled: ep.status === 'disabled',
    eventTypes: types,
    filterTypes: types,
    channels: ep.channels === null ? null : [...ep.channels],
    throttleRate: ep.rateLimit,
    rateLimit: ep.rateLimit,
    metadata: { ...ep.metadata },
    headers: { ...ep.headers },
    createdAt: iso(ep.createdAt),
    updatedAt: iso(ep.updatedAt),
  };
}

/** Svix `EventTypeOut`; `schemas` only `withContent` (Svix list semantics), else null. */
export function eventTypeOut(et: EventTypeRecord, withContent = true) {
  return {
    name: et.name,
    description: et.description,
    archived: et.archived,
    deprecated: et.deprecated,
    schemas: withContent && et.schemas !== null ? { ...et.schemas } : null,
    groupName: et.groupName,
    featureFlags: et.featureFlags === null ? null : [...et.featureFlags],
    featureFlag: et.featureFlags?.[0] ?? null,
    createdAt: iso(et.createdAt),
    updatedAt: iso(et.updatedAt),
  };
}

/** The fields of a message other than its payload, in Svix `MessageOut` order (`deliverAt` last). */
export function messageHead(
  msg: Pick<MessageView, 'id' | 'eventId' | 'eventType' | 'channels' | 'tags' | 'createdAt'> & {
    readonly deliverAt?: Date | null;
  },
) {
  return {
    eventId: msg.eventId,
    eventType: msg.eventType,
    channels: msg.channels === null ? null : [...msg.channels],
    tags: msg.tags === null ? null : [...msg.tags],
    id: msg.id,
    timestamp: iso(msg.createdAt),
    deliverAt: msg.deliverAt == null ? null : iso(msg.deliverAt),
  };
}

/** A task's progress as shown (`data`): without its internal cursor and pace slots. */
export function taskData(t: TaskRecord): Record<string, unknown> {
  const { cursor: _cursor, slots: _slots, ...data } = t.progress as Record<string, unknown>;
  return data;
}

/**
 * Svix `RecoverOut` / `ReplayOut`: the task that was started, plus Tidings' `data` (its progress as the
 * background task shows it; for a task of one endpoint, `held`: what waits behind the endpoint already).
 */
export function taskStartedOut(t: TaskRecord) {
  return { id: t.id, status: t.status, task: t.kind, updatedAt: iso(t.updatedAt), data: taskData(t) };
}

/** A stored answer with no body (204 No Content, or 202 Accepted for a resend). */
export const emptyAnswer = (status: 202 | 204): StoredAnswer => ({ status, body: null });

/** Svix create application: 201 with the application, or 200 when get-or-create found it (`created` false). */
export const applicationAnswer = (app: ApplicationRecord, created: boolean): StoredAnswer => ({
  status: created ? 201 : 200,
  body: applicationOut(app),
});

/** Svix create endpoint: 201 with the endpoint. */
export const endpointCreatedAnswer = (ep: EndpointRecord): StoredAnswer => ({ status: 201, body: endpointOut(ep) });

/** Svix create event type: 201 with the event type. */
export const eventTypeCreatedAnswer = (et: EventTypeRecord): StoredAnswer => ({ status: 201, body: eventTypeOut(et) });

/** Svix recover, replay-missing, bulk replay, and Tidings' dead-letter replay: 202 with the task started. */
export const taskStartedAnswer = (t: TaskRecord): StoredAnswer => ({ status: 202, body: taskStartedOut(t) });

/** Svix send example: 202 with the message's head (its payload is read back from the message on a replay). */
export const exampleSentAnswer = (msg: Parameters<typeof messageHead>[0]): StoredAnswer => ({
  status: 202,
  body: messageHead(msg),
});
