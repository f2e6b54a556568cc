import { z } from 'zod';
import type { DeliveryState } from '../../domain/delivery-state.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { endpointMessageListJson, listOut, messageEndpointOut, pageFit, sendJsonBytes } from '../present.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import {
  destinationListQuery,
  endpointMessageList,
  endpointMessageListQuery,
  messageEndpointList,
} from '../schemas/delivery.ts';

/**
 * The delivery states a Svix `status` filter selects (see present.ts `svixStatus`); with
 * `expanded_statuses=false`, success (0) also selects what is shown as success there (canceled, skipped).
 */
function statesOf(status: number | undefined, expanded: boolean): readonly DeliveryState[] | null {
  switch (status) {
    case undefined:
      return null;
    case 0:
      return expanded ? ['succeeded'] : ['succeeded', 'canceled', 'skipped'];
    case 1:
      return ['pending'];
    case 2:
      return ['dead'];
    case 3:
      return ['leased'];
    default:
      return expanded ? ['canceled', 'skipped'] : [];
  }
}

/**
 * Svix `GET /api/v1/app/{app}/msg/{msg}/endpoint` (the endpoints a message is delivered to, with each
 * delivery's status and next attempt; by endpoint id) and `GET /api/v1/app/{app}/endpoint/{ep}/msg` (the
 * messages of an endpoint with their delivery's status; newest first; filters status, channel, tag,
 * event_types, before, after; payloads verbatim `with_content`).
 */
export function registerMessageDestinations(app: Api, deps: Pick<HttpDeps, 'deliveryQueries' | 'config'>): void {
  app.get(
    '/api/v1/app/:appId/msg/:msgId/endpoint',
    {
      schema: {
        tags: ['Message Attempt'],
        summary: 'List the destinations of a message',
        params: z.object({ appId: refParam, msgId: refParam }),
        querystring: destinationListQuery,
        response: { 200: messageEndpointList, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.deliveryQueries.destinations(
        principalOf(request),
        request.params.appId,
        request.params.msgId,
        { limit: q.limit, iterator: q.iterator ?? null, order: q.order },
      );
      return listOut(page, (d) => messageEndpointOut(d, q.expanded_statuses), pageFit(deps.config, q.iterator));
    },
  );

  app.get(
    '/api/v1/app/:appId/endpoint/:endpointId/msg',
    {
      schema: {
        tags: ['Message Attempt'],
        summary: 'List the messages of an endpoint',
        params: z.object({ appId: refParam, endpointId: refParam }),
        querystring: endpointMessageListQuery,
        response: { 200: endpointMessageList, ...commonErrors },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const page = await deps.deliveryQueries.endpointMessages(
        principalOf(request),
        request.params.appId,
        request.params.endpointId,
        {
          limit: q.limit,
          iterator: q.iterator ?? null,
          order: q.order,
          withPayload: q.with_content,
          states: statesOf(q.status, q.expanded_statuses),
          eventTypes: q.event_types === undefined || q.event_types.length === 0 ? null : q.event_types,
          channel: q.channel ?? null,
          tag: q.tag ?? null,
          before: q.before ?? null,
          after: q.after ?? null,
        },
      );
      return sendJsonBytes(
        reply,
        endpointMessageListJson(page, q.with_content, q.expanded_statuses, pageFit(deps.config, q.iterator)),
      );
    },
  );
}
