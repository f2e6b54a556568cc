import type { FastifyReply } from 'fastify';
import type { DeliveryState } from '../domain/delivery-state.ts';
import { endpointOut, messageHead, taskData } from '../app/answers.ts';
import type { AttemptView, MessageView } from '../ports/message-query-store.ts';
import type { Page } from '../ports/paging.ts';
import type { TimelineEntry } from '../ports/delivery-query-store.ts';
import type {
  DeadLetterView,
  DeliveryHold,
  DestinationView,
  EndpointMessageView,
} from '../ports/delivery-query-store.ts';
import type { TaskRecord } from '../ports/task-store.ts';
import { fitPage, readsBackward } from '../app/page-budget.ts';

/**
 * Records → response bodies in the Svix shapes (camelCase, ISO-8601 instants). Message bodies are built as
 * bytes around the stored payload so that it is returned verbatim (docs/design.md#publishing: no
 * parse-and-reserialize). The shapes that idempotent writes store (applications, endpoints, event types, message heads,
 * started tasks) live in app/answers.ts, since the use cases build them inside the write's transaction.
 */

const iso = (d: Date): string => d.toISOString();

/** {@link messageHead} rebuilt from its JSON form (a stored idempotent answer), in the same key order. */
export function messageHeadFromJson(stored: ReturnType<typeof messageHead>) {
  return messageHead({
    ...stored,
    createdAt: new Date(stored.timestamp),
    deliverAt: stored.deliverAt == null ? null : new Date(stored.deliverAt),
  });
}

const EMPTY_OBJECT = Buffer.from('{}');

/**
 * The JSON bytes of a Svix `MessageOut`: `head` serialised, then `"payload":` followed by the payload bytes
 * exactly as stored (or `{}` when there is no content to show, as Svix does). A raw message's body
 * (`contentType` set) is not JSON: it is shown as a JSON string of its text.
 */
export function messageJson(head: object, payload: Uint8Array | null, contentType: string | null = null): Buffer {
  const fields = JSON.stringify(head);
  const shown =
    payload === null
      ? EMPTY_OBJECT
      : contentType === null
        ? payload
        : Buffer.from(JSON.stringify(Buffer.from(payload).toString('utf8')));
  return Buffer.concat([
    Buffer.from(`${fields.slice(0, -1)}${fields.length > 2 ? ',' : ''}"payload":`),
    shown,
    Buffer.from('}'),
  ]);
}

/**
 * How a list answer is held to TIDINGS_MAX_PAGE_BYTES ({@link fitPage}): the budget, and whether the request
 * reads backward.
 */
export interface PageFit {
  readonly budgetBytes: number;
  readonly backward: boolean;
}

/** The {@link PageFit} of a list request: TIDINGS_MAX_PAGE_BYTES and the direction its iterator reads. */
export function pageFit(config: { readonly maxPageBytes: number }, iterator: string | null | undefined): PageFit {
  return { budgetBytes: config.maxPageBytes, backward: readsBackward(iterator) };
}

/** The JSON bytes of a list built from its items' bytes, cut to `fit` when given. */
function listJson<T>(page: Page<T>, items: readonly Buffer[], fit: PageFit | undefined): Buffer {
  const fitted =
    fit === undefined
      ? page
      : fitPage(
          page,
          items.map((b) => b.length),
          fit.budgetBytes,
          fit.backward,
        );
  // A forward page keeps its first items, a backward one its last (fitPage).
  const first = fit?.backward === true ? page.data.length - fitted.data.length : 0;
  const shown = items.slice(first, first + fitted.data.length);
  const tail = JSON.stringify({ iterator: fitted.iterator, prevIterator: fitted.prevIterator, done: fitted.done });
  const parts: Buffer[] = [Buffer.from('{"data":[')];
  shown.forEach((item, i) => parts.push(...(i === 0 ? [item] : [Buffer.from(','), item])));
  parts.push(Buffer.from(`],${tail.slice(1)}`));
  return Buffer.concat(parts);
}

/** The JSON bytes of a list of messages (each built with {@link messageJson}), within `fit`. */
export function messageListJson(page: Page<MessageView>, withContent: boolean, fit?: PageFit): Buffer {
  const items = page.data.map((m) => messageJson(messageHead(m), withContent ? m.payload : null, m.contentType));
  return listJson(page, items, fit);
}

/** Svix `MessageAttemptOut` (status 0 success / 2 fail; triggerType 0 scheduled / 1 manual). */
export function attemptOut(
  a: AttemptView,
  options: { readonly withContent: boolean; readonly withMsg: boolean; readonly operator?: boolean },
) {
  return {
    id: a.id,
    msgId: a.messageId,
    endpointId: a.endpointId,
    url: a.url,
    // An attempt without a response body shows why it failed (error detail, e.g. the refused address).
    response: options.withContent
      ? a.responseBody !== null && a.responseBody !== ''
        ? a.responseBody
        : (a.errorDetail ?? '')
      : '',
    responseStatusCode: a.responseStatusCode ?? 0,
    responseDurationMs: a.durationMs,
    status: a.succeeded ? 0 : 2,
    statusText: a.succeeded ? 'success' : 'fail',
    triggerType: a.trigger === 'manual' ? 1 : 0,
    timestamp: iso(a.createdAt),
    attemptNumber: a.attemptNumber,
    errorKind: a.errorKind,
    // Svix: "message payloads are never included in the response, regardless of this flag".
    ...(options.withMsg ? { msg: { ...messageHead({ id: a.messageId, ...a.message }), payload: {} } } : {}),
    // The operator's network detail (addresses, deciding setting): never shown to an application's key.
    ...(options.operator === true ? { operatorDetail: a.operatorDetail } : {}),
  };
}

/**
 * One timeline row. The dispatcher id (a host name) and the fencing token are the operator's: a credential
 * scoped to one application (an application key, a portal token) gets null for both.
 */
export function timelineEntryOut(e: TimelineEntry, operator: boolean) {
  return {
    id: e.id,
    state: e.state,
    dispatcherId: operator ? e.dispatcherId : null,
    fencingToken: operator ? e.fencingToken : null,
    statusCode: e.statusCode,
    latencyMs: e.latencyMs,
    errorKind: e.errorKind,
    reason: e.reason,
    at: iso(e.at),
  };
}

/**
 * A Svix list response `{data, iterator, prevIterator, done}`; with `fit`, ended early (with an iterator to
 * the rest) once its items reach TIDINGS_MAX_PAGE_BYTES as JSON.
 */
export function listOut<T, U>(page: Page<T>, map: (item: T) => U, fit?: PageFit) {
  const data = page.data.map(map);
  if (fit === undefined) return { data, iterator: page.iterator, prevIterator: page.prevIterator, done: page.done };
  const sizes = data.map((item) => Buffer.byteLength(JSON.stringify(item)));
  const fitted = fitPage({ ...page, data }, sizes, fit.budgetBytes, fit.backward);
  // A forward page keeps its first items, a backward one its last (fitPage).
  const first = fit.backward ? data.length - fitted.data.length : 0;
  const kept = data.slice(first, first + fitted.data.length);
  return { data: kept, iterator: fitted.iterator, prevIterator: fitted.prevIterator, done: fitted.done };
}

/** Sends JSON built as bytes (message bodies), bypassing the schema serializer. */
export function sendJsonBytes(reply: FastifyReply, bytes: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(bytes);
}

/**
 * Svix `MessageStatus` of a delivery state: succeeded 0 success, pending 1, dead 2 fail, leased 3 sending,
 * canceled 4; Tidings' skipped (not sent: the endpoint was disabled) is shown as 4 canceled. Without
 * `expanded` (Svix `expanded_statuses=false`), 4 is shown as 0, as Svix does for older clients.
 */
export function svixStatus(
  state: DeliveryState,
  expanded: boolean,
): { readonly status: number; readonly statusText: string } {
  const table: Readonly<Record<DeliveryState, readonly [number, string]>> = {
    succeeded: [0, 'success'],
    pending: [1, 'pending'],
    dead: [2, 'fail'],
    leased: [3, 'sending'],
    canceled: [4, 'canceled'],
    skipped: [4, 'canceled'],
  };
  const [status, statusText] = table[state];
  return status === 4 && !expanded ? { status: 0, statusText: 'success' } : { status, statusText };
}

/** A finite instant as ISO text, else null. */
const isoOrNull = (d: Date | null): string | null =>
  d === null || !Number.isFinite(d.valueOf()) ? null : d.toISOString();

/** Tidings' `heldBy` and `heldUntil` of a delivery (schemas/delivery.ts `holdFields`). */
export function holdOut(h: DeliveryHold): {
  readonly heldBy: DeliveryHold['heldBy'];
  readonly heldUntil: string | null;
} {
  return { heldBy: h.heldBy, heldUntil: isoOrNull(h.heldUntil) };
}

/** Svix `MessageEndpointOut`: the endpoint and its delivery's status, plus Tidings' `deliveryState` and hold. */
export function messageEndpointOut(d: DestinationView, expanded: boolean) {
  const ep = endpointOut(d.endpoint);
  return {
    id: ep.id,
    ...svixStatus(d.state, expanded),
    nextAttempt: isoOrNull(d.nextAttemptAt),
    url: ep.url,
    description: ep.description,
    throttleRate: ep.throttleRate,
    uid: ep.uid,
    disabled: ep.disabled,
    eventTypes: ep.eventTypes,
    channels: ep.channels,
    createdAt: ep.createdAt,
    updatedAt: ep.updatedAt,
    deliveryState: d.state,
    ...holdOut(d),
  };
}

/** The JSON bytes of a list of Svix `EndpointMessageOut` (payloads verbatim, as {@link messageJson}), within `fit`. */
export function endpointMessageListJson(
  page: Page<EndpointMessageView>,
  withContent: boolean,
  expanded: boolean,
  fit?: PageFit,
): Buffer {
  const items = page.data.map((v) =>
    messageJson(
      {
        ...svixStatus(v.state, expanded),
        nextAttempt: isoOrNull(v.nextAttemptAt),
        ...messageHead(v.message),
        deliveryState: v.state,
        ...holdOut(v),
      },
      withContent ? v.message.payload : null,
      v.message.contentType,
    ),
  );
  return listJson(page, items, fit);
}

/** Svix `EndpointStats` (deliveries by status), plus Tidings' `skipped` (kept apart from canceled). */
export function endpointStatsOut(counts: Readonly<Record<DeliveryState, number>>) {
  return {
    success: counts.succeeded,
    pending: counts.pending,
    sending: counts.leased,
    fail: counts.dead,
    canceled: counts.canceled,
    skipped: counts.skipped,
  };
}

/** Tidings: one dead letter. */
export function deadLetterOut(d: DeadLetterView) {
  return {
    appId: d.appId,
    msgId: d.messageId,
    endpointId: d.endpointId,
    eventType: d.eventType,
    msgTimestamp: iso(d.messageCreatedAt),
    reason: d.reason,
    attemptCount: d.attemptCount,
    lastStatusCode: d.lastStatusCode,
    lastErrorKind: d.lastErrorKind,
    lastAttemptAt: isoOrNull(d.lastAttemptAt),
    deadAt: iso(d.deadAt),
  };
}

/**
 * Svix `BackgroundTaskOut`: `data` is the task's progress without its internal cursor and pace slots
 * (replay tasks: messagesSent, scanned, alreadyQueued, expunged, unavailable, held, heldBy, heldUntil, error).
 */
export function backgroundTaskOut(t: TaskRecord) {
  return { id: t.id, status: t.status, task: t.kind, data: taskData(t), updatedAt: iso(t.updatedAt) };
}
