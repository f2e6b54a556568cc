import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { eventTypeOut } from '../../app/answers.ts';
import { listOut, pageFit } from '../present.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import { eventTypeList, eventTypeListQuery, eventTypeOut as eventTypeOutSchema } from '../schemas/event-type.ts';

/**
 * Svix `GET /api/v1/event-type` (by name, ascending unless `order=descending`; archived ones only with
 * `include_archived=true`; schemas only `with_content`) and `GET /api/v1/event-type/{name}` (archived ones
 * too, with `archived: true`). Any credential may read the catalog.
 */
export function registerEventTypeRead(app: Api, deps: Pick<HttpDeps, 'eventTypes' | 'config'>): void {
  app.get(
    '/api/v1/event-type',
    {
      schema: {
        tags: ['Event Type'],
        summary: 'List event types',
        querystring: eventTypeListQuery,
        response: { 200: eventTypeList, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.eventTypes.list(principalOf(request), {
        limit: q.limit,
        iterator: q.iterator ?? null,
        order: q.order,
        includeArchived: q.include_archived,
      });
      return listOut(page, (et) => eventTypeOut(et, q.with_content), pageFit(deps.config, q.iterator));
    },
  );

  app.get(
    '/api/v1/event-type/:eventTypeName',
    {
      schema: {
        tags: ['Event Type'],
        summary: 'Get event type',
        params: z.object({ eventTypeName: refParam }),
        response: { 200: eventTypeOutSchema, ...commonErrors },
      },
    },
    async (request) => eventTypeOut(await deps.eventTypes.get(principalOf(request), request.params.eventTypeName)),
  );
}
