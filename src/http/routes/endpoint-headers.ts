import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import { endpointHeadersIn, endpointHeadersOut, endpointHeadersPatchIn } from '../schemas/endpoint-settings.ts';

const params = z.object({ appId: refParam, endpointId: refParam });

/**
 * Svix endpoint headers: `GET /api/v1/app/{app}/endpoint/{ep}/headers` (plain headers, and the names of
 * the sensitive ones such as Authorization, whose values are stored encrypted and never shown),
 * `PUT …/headers` (replace all; 204) and `PATCH …/headers` (set some, remove those given as null or in
 * `deleteHeaders`; 204). Names are case-insensitive and stored in lower case; the signature and transport
 * headers cannot be set (422).
 */
export function registerEndpointHeaders(app: Api, deps: Pick<HttpDeps, 'endpointSettings' | 'unitOfWork'>): void {
  app.get(
    '/api/v1/app/:appId/endpoint/:endpointId/headers',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Get endpoint headers',
        params,
        response: { 200: endpointHeadersOut, ...commonErrors },
      },
    },
    async (request) => {
      const view = await deps.endpointSettings.headers(
        principalOf(request),
        request.params.appId,
        request.params.endpointId,
      );
      return { headers: { ...view.headers }, sensitive: [...view.sensitive] };
    },
  );

  app.put(
    '/api/v1/app/:appId/endpoint/:endpointId/headers',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Set endpoint headers',
        params,
        body: endpointHeadersIn,
        response: { 204: z.null().describe('Set'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await deps.unitOfWork.transaction((tx) =>
        deps.endpointSettings.setHeaders(
          tx,
          principal,
          request.params.appId,
          request.params.endpointId,
          request.body.headers,
        ),
      );
      return reply.code(204).send(null);
    },
  );

  app.patch(
    '/api/v1/app/:appId/endpoint/:endpointId/headers',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Patch endpoint headers',
        params,
        body: endpointHeadersPatchIn,
        response: { 204: z.null().describe('Patched'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { headers, deleteHeaders } = request.body;
      await deps.unitOfWork.transaction((tx) =>
        deps.endpointSettings.patchHeaders(
          tx,
          principal,
          request.params.appId,
          request.params.endpointId,
          headers,
          deleteHeaders ?? [],
        ),
      );
      return reply.code(204).send(null);
    },
  );
}
