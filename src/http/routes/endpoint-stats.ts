import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { endpointStatsOut } from '../present.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import { endpointStatsOut as endpointStatsOutSchema, endpointStatsQuery } from '../schemas/endpoint-settings.ts';

/**
 * Svix `GET /api/v1/app/{app}/endpoint/{ep}/stats`: the endpoint's deliveries by status (success, pending,
 * sending, fail, canceled, and Tidings' skipped) for messages created in [since, until) (default: all).
 */
export function registerEndpointStats(app: Api, deps: Pick<HttpDeps, 'deliveryQueries'>): void {
  app.get(
    '/api/v1/app/:appId/endpoint/:endpointId/stats',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Endpoint stats',
        params: z.object({ appId: refParam, endpointId: refParam }),
        querystring: endpointStatsQuery,
        response: { 200: endpointStatsOutSchema, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      return endpointStatsOut(
        await deps.deliveryQueries.stats(
          principalOf(request),
          request.params.appId,
          request.params.endpointId,
          q.since ?? null,
          q.until ?? null,
        ),
      );
    },
  );
}
