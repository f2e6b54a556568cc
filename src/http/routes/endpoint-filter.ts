import { z } from 'zod';
import type { Json } from '../../domain/payload-filter.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import {
  endpointFilterIn,
  endpointFilterOut,
  filteredEndpointsOut,
  filterTestIn,
  filterTestOut,
} from '../schemas/endpoint-filter.ts';

const endpointParams = z.object({ appId: refParam, endpointId: refParam });
const DESCRIPTION =
  'Tidings only. A message that does not match the filter makes no delivery for the endpoint; the message lists the ' +
  'endpoints it skipped (…/msg/{msg}/filtered-endpoint). A change applies to messages published after it: ' +
  'deliveries already made stay, and replay-missing does not make what a filter skipped.';

/**
 * Endpoint payload filters (Tidings-only routes, beside the Svix models, which stay strict;
 * docs/adr/0029-endpoint-payload-filters.md): `GET|PUT|DELETE /api/v1/app/{app}/endpoint/{ep}/filter`,
 * `POST /api/v1/app/{app}/filter/test` (a filter against a sample message, nothing written) and
 * `GET /api/v1/app/{app}/msg/{msg}/filtered-endpoint` (the endpoints a message skipped).
 */
export function registerEndpointFilter(app: Api, deps: Pick<HttpDeps, 'endpointFilters'>): void {
  const filters = deps.endpointFilters;
  const path = '/api/v1/app/:appId/endpoint/:endpointId/filter';
  const common = { tags: ['Endpoint'], description: DESCRIPTION, params: endpointParams };
  const answered = { 200: endpointFilterOut, ...commonErrors };
  app.get(
    path,
    { schema: { ...common, summary: 'Endpoint payload filter (Tidings)', response: answered } },
    async (r) => ({
      filter: await filters.get(principalOf(r), r.params.appId, r.params.endpointId),
    }),
  );
  app.put(
    path,
    {
      schema: {
        ...common,
        summary: 'Set endpoint payload filter (Tidings)',
        body: endpointFilterIn,
        response: answered,
      },
    },
    async (r) => ({ filter: await filters.set(principalOf(r), r.params.appId, r.params.endpointId, r.body.filter) }),
  );
  app.delete(
    path,
    {
      schema: {
        ...common,
        summary: 'Clear endpoint payload filter (Tidings)',
        response: { 204: z.null().describe('Cleared'), ...commonErrors },
      },
    },
    async (r, reply) => {
      await filters.set(principalOf(r), r.params.appId, r.params.endpointId, null);
      return reply.code(204).send(null);
    },
  );
  app.post(
    '/api/v1/app/:appId/filter/test',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Test a payload filter against a sample message (Tidings)',
        description:
          'Tidings only. Checks the filter as …/endpoint/{ep}/filter does (422 naming the part), writes nothing.',
        params: z.object({ appId: refParam }),
        body: filterTestIn,
        response: { 200: filterTestOut, ...commonErrors },
      },
    },
    async (r) => {
      const { message } = r.body;
      const sample = {
        eventType: message.eventType,
        eventId: message.eventId ?? null,
        channels: message.channels ?? null,
        tags: message.tags ?? null,
        ...(message.payload === undefined ? {} : { payload: message.payload as Json }),
      };
      return { matches: await filters.test(principalOf(r), r.params.appId, r.body.filter, sample) };
    },
  );
  app.get(
    '/api/v1/app/:appId/msg/:msgId/filtered-endpoint',
    {
      schema: {
        tags: ['Message'],
        summary: 'Endpoints a message skipped by their payload filter (Tidings)',
        description:
          'Tidings only. The endpoints whose payload filter the message did not match when it was published (no ' +
          'delivery was made for them), as stored with the message; each endpoint as it is now.',
        params: z.object({ appId: refParam, msgId: refParam }),
        response: { 200: filteredEndpointsOut, ...commonErrors },
      },
    },
    async (r) => ({
      data: [...(await filters.filteredOut(principalOf(r), r.params.appId, r.params.msgId))],
    }),
  );
}
