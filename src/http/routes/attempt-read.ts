import { z } from 'zod';
import type { AttemptFilters } from '../../app/queries.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { attemptOut, listOut, pageFit } from '../present.ts';
import { attemptList, attemptListQuery, attemptOut as attemptOutSchema } from '../schemas/attempt.ts';
import { commonErrors, refParam } from '../schemas/common.ts';

type AttemptQuery = z.output<typeof attemptListQuery>;

function filters(q: AttemptQuery): AttemptFilters {
  return {
    limit: q.limit,
    iterator: q.iterator ?? null,
    order: q.order,
    withContent: q.with_content,
    status: q.status ?? null,
    statusCodeClass: q.status_code_class ?? null,
    eventTypes: q.event_types === undefined || q.event_types.length === 0 ? null : q.event_types,
    channel: q.channel ?? null,
    tag: q.tag ?? null,
    before: q.before ?? null,
    after: q.after ?? null,
    endpointRef: q.endpoint_id ?? null,
  };
}

/** The two attempt lists: of one message, and of one endpoint (its path parameter, and the query that reads it). */
const attemptLists = [
  {
    path: '/api/v1/app/:appId/attempt/msg/:msgId',
    summary: 'List attempts by message',
    param: 'msgId',
    list: 'listAttemptsByMessage',
  },
  {
    path: '/api/v1/app/:appId/attempt/endpoint/:endpointId',
    summary: 'List attempts by endpoint',
    param: 'endpointId',
    list: 'listAttemptsByEndpoint',
  },
] as const;

/**
 * Svix attempt routes: `GET /api/v1/app/{app}/attempt/msg/{msg}`, `GET /api/v1/app/{app}/attempt/endpoint/{ep}`
 * (newest first; filters status, status_code_class, event_types, channel, tag, before, after; endpoint_id
 * on the message list) and `GET /api/v1/app/{app}/msg/{msg}/attempt/{attempt}` (with `operatorDetail` for an
 * operator credential only).
 */
export function registerAttemptRead(app: Api, deps: Pick<HttpDeps, 'queries' | 'config'>): void {
  for (const route of attemptLists) {
    app.get(
      route.path,
      {
        schema: {
          tags: ['Message Attempt'],
          summary: route.summary,
          params: z.object({ appId: refParam, [route.param]: refParam }),
          querystring: attemptListQuery,
          response: { 200: attemptList, ...commonErrors },
        },
      },
      async (request) => {
        const q = request.query;
        // The schema above holds appId and this route's parameter (its computed key leaves their types open).
        const params = request.params as Record<'appId' | (typeof route)['param'], string>;
        const page = await deps.queries[route.list](
          principalOf(request),
          params.appId,
          params[route.param],
          filters(q),
        );
        return listOut(
          page,
          (a) => attemptOut(a, { withContent: q.with_content, withMsg: q.with_msg }),
          pageFit(deps.config, q.iterator),
        );
      },
    );
  }

  app.get(
    '/api/v1/app/:appId/msg/:msgId/attempt/:attemptId',
    {
      schema: {
        tags: ['Message Attempt'],
        summary: 'Get attempt',
        params: z.object({ appId: refParam, msgId: refParam, attemptId: refParam }),
        response: { 200: attemptOutSchema, ...commonErrors },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const attempt = await deps.queries.getAttempt(
        principal,
        request.params.appId,
        request.params.msgId,
        request.params.attemptId,
      );
      return attemptOut(attempt, { withContent: true, withMsg: false, operator: principal.kind === 'admin' });
    },
  );
}
