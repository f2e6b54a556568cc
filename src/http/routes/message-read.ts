import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { messageHead } from '../../app/answers.ts';
import { messageJson, messageListJson, pageFit, sendJsonBytes } from '../present.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import { messageList, messageListQuery, messageOut, withContentQuery } from '../schemas/message.ts';

/**
 * `GET /api/v1/app/{app}/msg` (newest first; filters event_types, channel, tag, before, after) and
 * `GET /api/v1/app/{app}/msg/{msg}` (id or eventId). Payloads are embedded verbatim when `with_content`
 * (default false for the list, true for one message), else `{}`. A list ends early, with an iterator to
 * the rest, once its answer reaches TIDINGS_MAX_PAGE_BYTES; payloads past that are not read.
 */
export function registerMessageRead(app: Api, deps: Pick<HttpDeps, 'queries' | 'config'>): void {
  app.get(
    '/api/v1/app/:appId/msg',
    {
      schema: {
        tags: ['Message'],
        summary: 'List messages',
        params: z.object({ appId: refParam }),
        querystring: messageListQuery,
        response: { 200: messageList, ...commonErrors },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const page = await deps.queries.listMessages(principalOf(request), request.params.appId, {
        limit: q.limit,
        iterator: q.iterator ?? null,
        order: q.order,
        withPayload: q.with_content,
        eventTypes: q.event_types === undefined || q.event_types.length === 0 ? null : q.event_types,
        channel: q.channel ?? null,
        tag: q.tag ?? null,
        before: q.before ?? null,
        after: q.after ?? null,
      });
      return sendJsonBytes(reply, messageListJson(page, q.with_content, pageFit(deps.config, q.iterator)));
    },
  );

  app.get(
    '/api/v1/app/:appId/msg/:msgId',
    {
      schema: {
        tags: ['Message'],
        summary: 'Get message',
        params: z.object({ appId: refParam, msgId: refParam }),
        querystring: withContentQuery,
        response: { 200: messageOut, ...commonErrors },
      },
    },
    async (request, reply) => {
      const withContent = request.query.with_content;
      const msg = await deps.queries.getMessage(
        principalOf(request),
        request.params.appId,
        request.params.msgId,
        withContent,
      );
      return sendJsonBytes(reply, messageJson(messageHead(msg), withContent ? msg.payload : null, msg.contentType));
    },
  );
}
