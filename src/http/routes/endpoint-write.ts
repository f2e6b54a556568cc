import { z } from 'zod';
import type { EndpointPatch } from '../../app/endpoints.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { endpointOut } from '../../app/answers.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';
import { endpointOut as endpointOutSchema, endpointPatch, endpointUpdate } from '../schemas/endpoint.ts';
import { endpointInput } from './endpoint-create.ts';

const params = z.object({ appId: refParam, endpointId: refParam });

/** A PATCH body as the use case takes it: present fields only; null clears (headers: null → none). */
function patchInput(body: z.output<typeof endpointPatch>): EndpointPatch {
  const types = body.eventTypes !== undefined ? body.eventTypes : body.filterTypes;
  const rate = body.throttleRate !== undefined ? body.throttleRate : body.rateLimit;
  return {
    ...(body.url === undefined ? {} : { url: body.url }),
    ...(body.description === undefined ? {} : { description: body.description }),
    ...(body.uid === undefined ? {} : { uid: body.uid }),
    ...(body.disabled === undefined ? {} : { disabled: body.disabled }),
    ...(types === undefined ? {} : { filterTypes: types }),
    ...(body.channels === undefined ? {} : { channels: body.channels }),
    ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
    ...(body.headers === undefined ? {} : { headers: body.headers ?? {} }),
    ...(rate === undefined ? {} : { rateLimit: rate }),
    ...(body.version === undefined ? {} : { version: body.version }),
  };
}

/**
 * `PUT /api/v1/app/{app}/endpoint/{ep}` (Svix create-or-update), `PATCH …` (given fields) and `DELETE …`
 * (204; pending deliveries canceled). Setting `disabled: true` moves pending deliveries to skipped.
 */
export function registerEndpointWrite(app: Api, deps: Pick<HttpDeps, 'endpoints' | 'unitOfWork'>): void {
  app.put(
    '/api/v1/app/:appId/endpoint/:endpointId',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Update (or create) endpoint',
        params,
        body: endpointUpdate,
        response: { 200: endpointOutSchema, 201: endpointOutSchema, 409: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await deps.unitOfWork.transaction((tx) =>
        deps.endpoints.upsert(
          tx,
          principal,
          request.params.appId,
          request.params.endpointId,
          endpointInput(request.body),
        ),
      );
      return reply.code(result.created ? 201 : 200).send(endpointOut(result.endpoint));
    },
  );

  app.patch(
    '/api/v1/app/:appId/endpoint/:endpointId',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Patch endpoint',
        params,
        body: endpointPatch,
        response: { 200: endpointOutSchema, 409: errorBody, ...commonErrors },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const changes = patchInput(request.body);
      return endpointOut(
        await deps.unitOfWork.transaction((tx) =>
          deps.endpoints.patch(tx, principal, request.params.appId, request.params.endpointId, changes),
        ),
      );
    },
  );

  app.delete(
    '/api/v1/app/:appId/endpoint/:endpointId',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Delete endpoint',
        params,
        response: { 204: z.null().describe('Deleted'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await deps.unitOfWork.transaction((tx) =>
        deps.endpoints.delete(tx, principal, request.params.appId, request.params.endpointId),
      );
      return reply.code(204).send(null);
    },
  );
}
