import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { backgroundTaskOut, listOut, pageFit } from '../present.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import {
  backgroundTaskList,
  backgroundTaskListQuery,
  backgroundTaskOut as backgroundTaskOutSchema,
} from '../schemas/replay.ts';

/**
 * Svix `GET /api/v1/background-task` (newest first; filters status, task) and
 * `GET /api/v1/background-task/{id}`: recover and replay tasks (and any other kind stored in the same
 * table) with their progress in `data`. The list is for operator credentials (403 otherwise); a credential
 * scoped to an application reads its own tasks by id (another application's is 404).
 */
export function registerBackgroundTask(app: Api, deps: Pick<HttpDeps, 'tasks' | 'config'>): void {
  app.get(
    '/api/v1/background-task',
    {
      schema: {
        tags: ['Background Task'],
        summary: 'List background tasks',
        querystring: backgroundTaskListQuery,
        response: { 200: backgroundTaskList, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.tasks.list(principalOf(request), {
        limit: q.limit,
        iterator: q.iterator ?? null,
        order: q.order,
        status: q.status ?? null,
        kind: q.task ?? null,
      });
      return listOut(page, backgroundTaskOut, pageFit(deps.config, q.iterator));
    },
  );

  app.get(
    '/api/v1/background-task/:taskId',
    {
      schema: {
        tags: ['Background Task'],
        summary: 'Get background task',
        params: z.object({ taskId: refParam }),
        response: { 200: backgroundTaskOutSchema, ...commonErrors },
      },
    },
    async (request) => backgroundTaskOut(await deps.tasks.get(principalOf(request), request.params.taskId)),
  );
}
