import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { deadLetterOut, listOut, pageFit } from '../present.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';
import { deadLetterList, deadLetterListQuery } from '../schemas/delivery.ts';
import { deadLetterReplayIn, taskStartedOut as taskStartedOutSchema } from '../schemas/replay.ts';
import { startTask } from './task-start.ts';

type ListQuery = z.output<typeof deadLetterListQuery>;

const filters = (q: ListQuery) => ({
  limit: q.limit,
  iterator: q.iterator ?? null,
  order: q.order,
  eventTypes: q.event_types === undefined || q.event_types.length === 0 ? null : q.event_types,
  before: q.before ?? null,
  after: q.after ?? null,
});

/** The dead-letter lists of an application and of one of its endpoints. */
const deadLetterLists = [
  {
    path: '/api/v1/app/:appId/dead-letter',
    summary: 'List dead letters of an application (Tidings)',
    params: z.object({ appId: refParam }),
  },
  {
    path: '/api/v1/app/:appId/endpoint/:endpointId/dead-letter',
    summary: 'List dead letters of an endpoint (Tidings)',
    params: z.object({ appId: refParam, endpointId: refParam }),
  },
];

/**
 * Tidings dead letters, in the Svix style: `GET /api/v1/dead-letter` (every application's, the operator's),
 * `GET /api/v1/app/{app}/dead-letter` and
 * `GET /api/v1/app/{app}/endpoint/{ep}/dead-letter` (deliveries that ended dead, newest first, with the
 * reason and the last attempt; filters event_types, before, after on the message's creation), and
 * `POST /api/v1/app/{app}/dead-letter/replay` (202 with a background task: the dead letters selected by
 * endpoint, event types and window go back to pending, paced per endpoint by TIDINGS_REPLAY_RATE).
 */
export function registerDeadLetters(
  app: Api,
  deps: Pick<HttpDeps, 'deliveryQueries' | 'replays' | 'taskRunner' | 'idempotency' | 'unitOfWork' | 'config'>,
): void {
  app.get(
    '/api/v1/dead-letter',
    {
      schema: {
        tags: ['Dead Letter'],
        summary: 'List dead letters of every application (Tidings)',
        querystring: deadLetterListQuery,
        response: { 200: deadLetterList, ...commonErrors },
      },
    },
    async (request) =>
      listOut(
        await deps.deliveryQueries.allDeadLetters(principalOf(request), filters(request.query)),
        deadLetterOut,
        pageFit(deps.config, request.query.iterator),
      ),
  );

  for (const route of deadLetterLists) {
    app.get(
      route.path,
      {
        schema: {
          tags: ['Dead Letter'],
          summary: route.summary,
          params: route.params,
          querystring: deadLetterListQuery,
          response: { 200: deadLetterList, ...commonErrors },
        },
      },
      async (request) => {
        // One of the two schemas above: an endpoint's list has its endpointId too.
        const params = request.params as { appId: string; endpointId?: string };
        return listOut(
          await deps.deliveryQueries.deadLetters(
            principalOf(request),
            params.appId,
            params.endpointId ?? null,
            filters(request.query),
          ),
          deadLetterOut,
          pageFit(deps.config, request.query.iterator),
        );
      },
    );
  }

  app.post(
    '/api/v1/app/:appId/dead-letter/replay',
    {
      schema: {
        tags: ['Dead Letter'],
        summary: 'Replay dead letters by filter (Tidings)',
        params: z.object({ appId: refParam }),
        body: deadLetterReplayIn,
        response: { 202: taskStartedOutSchema, 409: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const selection = {
        since: b.since,
        until: b.until ?? null,
        endpointRef: b.endpointId ?? null,
        eventTypes: b.eventTypes == null || b.eventTypes.length === 0 ? null : b.eventTypes,
      };
      return startTask(deps, request, reply, (tx, principal) =>
        deps.replays.replayDeadLetters(tx, principal, request.params.appId, selection),
      );
    },
  );
}
