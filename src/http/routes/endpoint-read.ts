import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { endpointOut } from '../../app/answers.ts';
import { listOut, pageFit } from '../present.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import {
  endpointList,
  endpointListQuery,
  endpointOut as endpointOutSchema,
  endpointSecretOut,
} from '../schemas/endpoint.ts';

const one = z.object({ appId: refParam, endpointId: refParam });

/**
 * `GET /api/v1/app/{app}/endpoint` (ascending unless `order=descending`), `GET …/endpoint/{ep}`, `GET
 * …/endpoint/{ep}/secret`.
 */
export function registerEndpointRead(app: Api, deps: Pick<HttpDeps, 'endpoints' | 'config'>): void {
  app.get(
    '/api/v1/app/:appId/endpoint',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'List endpoints',
        params: z.object({ appId: refParam }),
        querystring: endpointListQuery,
        response: { 200: endpointList, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.endpoints.list(principalOf(request), request.params.appId, {
        limit: q.limit,
        iterator: q.iterator ?? null,
        order: q.order,
      });
      return listOut(page, endpointOut, pageFit(deps.config, q.iterator));
    },
  );

  app.get(
    '/api/v1/app/:appId/endpoint/:endpointId',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Get endpoint',
        params: one,
        response: { 200: endpointOutSchema, ...commonErrors },
      },
    },
    async (request) =>
      endpointOut(await deps.endpoints.get(principalOf(request), request.params.appId, request.params.endpointId)),
  );

  app.get(
    '/api/v1/app/:appId/endpoint/:endpointId/secret',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Get endpoint signing secret',
        params: one,
        response: { 200: endpointSecretOut, ...commonErrors },
      },
    },
    async (request, reply) => {
      const key = await deps.endpoints.secret(principalOf(request), request.params.appId, request.params.endpointId);
      return reply.header('cache-control', 'no-store').send({ key });
    },
  );
}
