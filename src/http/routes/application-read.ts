import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { applicationOut } from '../../app/answers.ts';
import { listOut, pageFit } from '../present.ts';
import {
  applicationList,
  applicationListQuery,
  applicationOut as applicationOutSchema,
} from '../schemas/application.ts';
import { commonErrors, refParam } from '../schemas/common.ts';

/**
 * `GET /api/v1/app` (admin only; ascending by id unless `order=descending`; Svix's `exclude_apps_with_*` filters) and
 * `GET /api/v1/app/{app}` (id or uid).
 */
export function registerApplicationRead(app: Api, deps: Pick<HttpDeps, 'applications' | 'config'>): void {
  app.get(
    '/api/v1/app',
    {
      schema: {
        tags: ['Application'],
        summary: 'List applications',
        querystring: applicationListQuery,
        response: { 200: applicationList, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.applications.list(
        principalOf(request),
        { limit: q.limit, iterator: q.iterator ?? null, order: q.order },
        {
          excludeWithNoEndpoints: q.exclude_apps_with_no_endpoints,
          excludeWithDisabledEndpoints: q.exclude_apps_with_disabled_endpoints,
          excludeWithSvixPlayEndpoints: q.exclude_apps_with_svix_play_endpoints,
        },
      );
      return listOut(page, applicationOut, pageFit(deps.config, q.iterator));
    },
  );

  app.get(
    '/api/v1/app/:appId',
    {
      schema: {
        tags: ['Application'],
        summary: 'Get application',
        params: z.object({ appId: refParam }),
        response: { 200: applicationOutSchema, ...commonErrors },
      },
    },
    async (request) => applicationOut(await deps.applications.get(principalOf(request), request.params.appId)),
  );
}
