import type { FastifyReply } from 'fastify';
import type { ApplicationRecord, AttemptView, EndpointRecord, MessageView, Page, TimelineEntry } from '../ports/catalog-store.ts';

/**
 * Records → response bodies in the Svix shapes (camelCase, ISO-8601 instants). Message bodies are built as
 * bytes around the stored payload so that it is returned verbatim (DESIGN §5: no parse-and-reserialize).
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

/** The fields of a message other than its payload, in Svix `MessageOut` order. */
export function messageHead(msg: Pick<MessageView, 'id' | 'eventId' | 'eventType' | 'channels' | 'tags' | 'createdAt'>) {
  return {
    eventId: msg.eventId, eventType: msg.eventType,
    channels: msg.channels === null ? null : [...msg.channels], tags: msg.tags === null ? null : [...msg.tags],
    id: msg.id, timestamp: iso(msg.createdAt),
  };
}

const EMPTY_OBJECT = Buffer.from('{}');

/**
 * The JSON bytes of a Svix `MessageOut`: `head` serialised, then `"payload":` followed by the payload bytes
 * exactly as stored (or `{}` when there is no content to show, as Svix does).
 */
export function messageJson(head: object, payload: Uint8Array | null): Buffer {
  const fields = JSON.stringify(head);
  return Buffer.concat([Buffer.from(`${fields.slice(0, -1)}${fields.length > 2 ? ',' : ''}"payload":`), payload ?? EMPTY_OBJECT, Buffer.from('}')]);
}

/** The JSON bytes of a list of messages (each built with {@link messageJson}). */
export function messageListJson(page: Page<MessageView>, withContent: boolean): Buffer {
  const items = page.data.map((m) => messageJson(messageHead(m), withContent ? m.payload : null));
  const tail = JSON.stringify({ iterator: page.iterator, prevIterator: page.prevIterator, done: page.done });
  const parts: Buffer[] = [Buffer.from('{"data":[')];
  items.forEach((item, i) => parts.push(...(i === 0 ? [item] : [Buffer.from(','), item])));
  parts.push(Buffer.from(`],${tail.slice(1)}`));
  return Buffer.concat(parts);
}

/** Svix `MessageAttemptOut` (status 0 success / 2 fail; triggerType 0 scheduled / 1 manual). */
export function attemptOut(a: AttemptView, options: { readonly withContent: boolean; readonly withMsg: boolean }) {
  return {
    id: a.id, msgId: a.messageId, endpointId: a.endpointId, url: a.url,
    response: options.withContent ? (a.responseBody ?? a.errorDetail ?? '') : '',
    responseStatusCode: a.responseStatusCode ?? 0, responseDurationMs: a.durationMs,
    status: a.succeeded ? 0 : 2, statusText: a.succeeded ? 'success' : 'fail', triggerType: a.trigger === 'manual' ? 1 : 0,
    timestamp: iso(a.createdAt), attemptNumber: a.attemptNumber, errorKind: a.errorKind,
    // Svix: "message payloads are never included in the response, regardless of this flag".
    ...(options.withMsg ? { msg: { ...messageHead({ id: a.messageId, ...a.message }), payload: {} } } : {}),
  };
}

/** One timeline row. */
export function timelineEntryOut(e: TimelineEntry) {
  return {
    id: e.id, state: e.state, workerId: e.workerId, fencingToken: e.fencingToken, statusCode: e.statusCode,
    latencyMs: e.latencyMs, errorKind: e.errorKind, reason: e.reason, at: iso(e.at),
  };
}

/** A Svix list response `{data, iterator, prevIterator, done}`. */
export function listOut<T, U>(page: Page<T>, map: (item: T) => U) {
  return { data: page.data.map(map), iterator: page.iterator, prevIterator: page.prevIterator, done: page.done };
}

/** Sends JSON built as bytes (message bodies), bypassing the schema serializer. */
export function sendJsonBytes(reply: FastifyReply, bytes: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(bytes);
}
