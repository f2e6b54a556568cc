import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { publishMessage } from '../../app/publish.ts';
import { keyScope, principalOf, sendAnswer } from '../idempotency.ts';
import { payloadBytes } from '../payload-span.ts';
import type { messageHead } from '../../app/answers.ts';
import { messageHeadFromJson, messageJson } from '../present.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';
import { messageIn, messageOut, withContentQuery } from '../schemas/message.ts';
import { applicationInput } from './application-create.ts';

/** Content type of a raw message whose request names none. */
const RAW_DEFAULT_CONTENT_TYPE = 'text/plain';

/**
 * `POST /api/v1/app/{app}/msg` (Svix create message): stores the message and one delivery per subscribed
 * endpoint in one transaction (with the Idempotency-Key when given), then answers 202 with the message. The
 * payload stored and delivered is the exact byte span of `payload` in the request (docs/design.md#publishing), or for a
 * raw message (`transformationsParams.rawPayload`, the svix client's `messageInRaw`) the raw body's UTF-8 bytes
 * with its content type (default text/plain); the answer embeds it when `with_content` (default true; the
 * svix client sends false). `deliverAt` makes the first attempt due then, and is echoed.
 *
 * The stored idempotent answer holds the message without its payload (payloads are encrypted at rest and
 * must not be copied into the key table in plain text); a replay reads the payload back from the message.
 *
 * The route parses the request and presents the answer; `publishMessage` (app/publish.ts) decides how it is
 * stored: the grouped keyed publish first, the ordinary path when refused. A connection failure is answered
 * as such (503); a client retrying with its key is then answered from the key row if the group did commit.
 */
export function registerMessageCreate(app: Api, deps: HttpDeps): void {
  app.post(
    '/api/v1/app/:appId/msg',
    {
      schema: {
        tags: ['Message'],
        summary: 'Create message',
        params: z.object({ appId: refParam }),
        querystring: withContentQuery,
        body: messageIn,
        response: { 202: messageOut, 409: errorBody, 413: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const raw = body.transformationsParams ?? null;
      const payload = raw === null ? payloadBytes(request.rawText ?? '') : Buffer.from(raw.rawPayload, 'utf8');
      const contentType = raw === null ? null : (raw.headers?.['content-type'] ?? RAW_DEFAULT_CONTENT_TYPE);
      const retentionHours =
        body.payloadRetentionHours ?? (body.payloadRetentionPeriod == null ? null : body.payloadRetentionPeriod * 24);
      const scope = keyScope(deps, request);
      const create = body.application == null ? null : applicationInput(body.application);
      const answer = await publishMessage(deps, {
        principal,
        appRef: request.params.appId,
        create,
        scope,
        message: {
          eventType: body.eventType,
          eventId: body.eventId ?? null,
          channels: body.channels ?? null,
          tags: body.tags ?? null,
          payload,
          retentionHours,
          contentType,
          deliverAt: body.deliverAt ?? null,
        },
      });
      // A replayed answer comes back from jsonb, whose key order is its own: rebuild it in the Svix order.
      const head = messageHeadFromJson(answer.body as ReturnType<typeof messageHead>);
      let content: { payload: Uint8Array | null; contentType: string | null } = { payload: null, contentType: null };
      if (request.query.with_content) {
        content = answer.replayed
          ? await deps.queries.getMessage(principal, request.params.appId, head.id, true)
          : { payload, contentType };
      }
      reply.type('application/json; charset=utf-8');
      return sendAnswer(reply, answer, messageJson(head, content.payload, content.contentType));
    },
  );
}
