import { z } from 'zod';
import type { DeliveryState } from '../../domain/delivery-state.ts';
import { payloadPath } from '../../domain/payload-field.ts';
import type { DeliveryFound, PayloadCondition, SearchQuery } from '../../app/search.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { attemptOut, holdOut, listOut, messageListJson, pageFit, sendJsonBytes, svixStatus } from '../present.ts';
import { attemptList } from '../schemas/attempt.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import { messageList } from '../schemas/message.ts';
import {
  attemptSearchQuery,
  deliverySearchList,
  deliverySearchQuery,
  messageSearchQuery,
  undeliveredQuery,
} from '../schemas/search.ts';

/** Svix `MessageStatus` → the delivery states it names (4 is canceled and Tidings' skipped). */
const STATES_OF_STATUS: readonly (readonly DeliveryState[])[] = [
  ['succeeded'],
  ['pending'],
  ['dead'],
  ['leased'],
  ['canceled', 'skipped'],
];

/** The query parameters every search has (schemas/search.ts). */
interface CommonParams {
  readonly limit: number;
  readonly iterator?: string | null | undefined;
  readonly order: 'ascending' | 'descending';
  readonly after?: Date | undefined;
  readonly before?: Date | undefined;
  readonly event_types?: string[] | undefined;
  readonly channel?: string | undefined;
  readonly tag?: string | undefined;
  readonly payload_field?: string | undefined;
  readonly payload_value?: string | undefined;
}

/** The page, window and message filters of a search query. */
function common(q: CommonParams): SearchQuery {
  const path = q.payload_field === undefined ? null : payloadPath(q.payload_field);
  const payload: PayloadCondition | null =
    path === null || q.payload_value === undefined ? null : { path, value: q.payload_value };
  return {
    limit: q.limit,
    iterator: q.iterator ?? null,
    order: q.order,
    after: q.after ?? null,
    before: q.before ?? null,
    eventTypes: q.event_types === undefined || q.event_types.length === 0 ? null : q.event_types,
    channel: q.channel ?? null,
    tag: q.tag ?? null,
    payload,
  };
}

/** The state parameters of a delivery search. */
interface StateParams {
  readonly delivery_state?: readonly DeliveryState[] | undefined;
  readonly status?: number | undefined;
}

/** `delivery_state` and Svix `status` together: the states both allow (null = any). */
function statesOf(q: StateParams): readonly DeliveryState[] | null {
  const byStatus = q.status === undefined ? null : (STATES_OF_STATUS[q.status] ?? []);
  const exact = q.delivery_state === undefined || q.delivery_state.length === 0 ? null : q.delivery_state;
  if (byStatus === null) return exact;
  return exact === null ? byStatus : exact.filter((s) => byStatus.includes(s));
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
const copy = (list: readonly string[] | null): string[] | null => (list === null ? null : [...list]);

/** Tidings `DeliverySearchOut`. */
function deliverySearchOut(d: DeliveryFound) {
  const m = d.message;
  return {
    msgId: m.id,
    eventId: m.eventId,
    eventType: m.eventType,
    channels: copy(m.channels),
    tags: copy(m.tags),
    msgTimestamp: m.createdAt.toISOString(),
    endpointId: d.endpointId,
    deliveryState: d.state,
    ...svixStatus(d.state, true),
    reason: d.reason,
    stateChangedAt: iso(d.stateChangedAt),
    attemptCount: d.attemptCount,
    lastStatusCode: d.lastStatusCode,
    lastErrorKind: d.lastErrorKind,
    lastAttemptAt: iso(d.lastAttemptAt),
    nextAttempt: iso(d.nextAttemptAt),
    ...holdOut(d),
  };
}

const appParams = z.object({ appId: refParam });

/**
 * The search of the delivery log (Tidings; docs/reference/api.md, "Search"), each within one application and one
 * window of time (`after` required, at most TIDINGS_SEARCH_MAX_WINDOW wide; otherwise 422 `search_unbounded`):
 * `GET /api/v1/app/{app}/search/msg` (messages), `GET /api/v1/app/{app}/search/delivery` (deliveries: state,
 * endpoint, last status class), `GET /api/v1/app/{app}/search/attempt` (attempts to one endpoint) and
 * `GET /api/v1/app/{app}/endpoint/{ep}/undelivered` (what the endpoint did not get: every state but succeeded, with
 * the reason). A request examines at most TIDINGS_SEARCH_SCAN_ROWS index rows; a page may come back short, even
 * empty, with `done: false` and an iterator that resumes where it stopped.
 */
export function registerSearch(app: Api, deps: Pick<HttpDeps, 'search' | 'config'>): void {
  app.get(
    '/api/v1/app/:appId/search/msg',
    {
      schema: {
        tags: ['Search'],
        summary: 'Search messages (Tidings)',
        params: appParams,
        querystring: messageSearchQuery,
        response: { 200: messageList, ...commonErrors },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const query = { ...common(q), withPayload: q.with_content };
      const page = await deps.search.messages(principalOf(request), request.params.appId, query);
      return sendJsonBytes(reply, messageListJson(page, q.with_content, pageFit(deps.config, q.iterator)));
    },
  );

  app.get(
    '/api/v1/app/:appId/search/delivery',
    {
      schema: {
        tags: ['Search'],
        summary: 'Search deliveries (Tidings)',
        params: appParams,
        querystring: deliverySearchQuery,
        response: { 200: deliverySearchList, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.search.deliveries(principalOf(request), request.params.appId, {
        ...common(q),
        endpointRef: q.endpoint_id ?? null,
        states: statesOf(q),
        statusCodeClass: q.status_code_class ?? null,
        statusCode: q.status_code ?? null,
      });
      return listOut(page, deliverySearchOut, pageFit(deps.config, q.iterator));
    },
  );

  app.get(
    '/api/v1/app/:appId/endpoint/:endpointId/undelivered',
    {
      schema: {
        tags: ['Search'],
        summary: 'What an endpoint did not get in a window (Tidings)',
        params: z.object({ appId: refParam, endpointId: refParam }),
        querystring: undeliveredQuery,
        response: { 200: deliverySearchList, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.search.undelivered(
        principalOf(request),
        request.params.appId,
        request.params.endpointId,
        {
          ...common(q),
          states: statesOf(q),
          statusCodeClass: q.status_code_class ?? null,
          statusCode: q.status_code ?? null,
        },
      );
      return listOut(page, deliverySearchOut, pageFit(deps.config, q.iterator));
    },
  );

  app.get(
    '/api/v1/app/:appId/search/attempt',
    {
      schema: {
        tags: ['Search'],
        summary: 'Search attempts to an endpoint (Tidings)',
        params: appParams,
        querystring: attemptSearchQuery,
        response: { 200: attemptList, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.search.attempts(principalOf(request), request.params.appId, {
        ...common(q),
        endpointRef: q.endpoint_id ?? null,
        succeeded: q.status === undefined ? null : q.status === 0,
        statusCodeClass: q.status_code_class ?? null,
        statusCode: q.status_code ?? null,
      });
      const out = (a: Parameters<typeof attemptOut>[0]) => attemptOut(a, { withContent: false, withMsg: q.with_msg });
      return listOut(page, out, pageFit(deps.config, q.iterator));
    },
  );
}
