import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors, refParam, tagName, WIRE_LIMITS } from '../schemas/common.ts';

/** Tidings filters of an erasure; without a body every payload of the application is erased (as in Svix). */
const eraseIn = z
  .strictObject({
    tag: tagName.nullish().describe('Only messages carrying this tag (Tidings)'),
    eventIdPrefix: z
      .string()
      .min(1)
      .max(WIRE_LIMITS.nameMaxLength)
      .nullish()
      .describe('Only messages whose eventId starts with this (Tidings)'),
  })
  .meta({ id: 'ExpungeAllContentsIn' });

/** Svix `ExpungeAllContentsOut`: the background task. */
const eraseOut = z
  .object({
    id: z.string(),
    status: z.enum(['running', 'finished', 'failed']),
    task: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'ExpungeAllContentsOut' });

/**
 * `POST /api/v1/app/{app}/msg/expunge-all-contents` (Svix `message.expungeAllContents`, docs/guides/security.md):
 * starts a background task (kind `application.purge_content`) that expunges the payloads and stored response bodies
 * of the application's messages — all of them, or (Tidings) those with `tag` or an eventId starting with
 * `eventIdPrefix`. The messages, deliveries, attempts and timelines stay. 202 with the task, whose progress
 * (`messagesPurged`) is read at `GET /api/v1/background-task/{task_id}`.
 */
export function registerMessageErase(app: Api, deps: Pick<HttpDeps, 'erasure'>): void {
  app.post(
    '/api/v1/app/:appId/msg/expunge-all-contents',
    {
      schema: {
        tags: ['Message'],
        summary: 'Expunge all contents (optionally by tag or eventId prefix)',
        params: z.object({ appId: refParam }),
        body: eraseIn.nullish(),
        response: { 202: eraseOut, ...commonErrors },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const task = await deps.erasure.start(principalOf(request), request.params.appId, {
        tag: body.tag ?? null,
        eventIdPrefix: body.eventIdPrefix ?? null,
      });
      return reply.code(202).send({
        id: task.id,
        status: task.status,
        task: 'application.purge_content',
        updatedAt: task.updatedAt.toISOString(),
      });
    },
  );
}
