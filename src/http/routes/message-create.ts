import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { AppError } from '../../domain/errors.ts';
import type { PublishInput } from '../../app/publish.ts';
import type { StoredAnswer } from '../../ports/idempotency-store.ts';
import { idempotentPost, keyScope, principalOf, sendAnswer } from '../idempotency.ts';
import { payloadBytes } from '../payload-span.ts';
import { messageHead, messageHeadFromJson, messageJson } from '../present.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';
import { messageIn, messageOut, withContentQuery } from '../schemas/message.ts';
import { applicationInput } from './application-create.ts';

/** Content type of a raw message whose request names none. */
const RAW_DEFAULT_CONTENT_TYPE = 'text/plain';

/**
 * `POST /api/v1/app/{app}/msg` (Svix create message): stores the message and one delivery per subscribed
 * endpoint in one transaction (with the Idempotency-Key when given), then answers 202 with the message. The
 * payload stored and delivered is the exact byte span of `payload` in the request (DESIGN §5), or for a raw
 * message (`transformationsParams.rawPayload`, the svix client's `messageInRaw`) the raw body's UTF-8 bytes
 * with its content type (default text/plain); the answer embeds it when `with_content` (default true; the
 * svix client sends false). `deliverAt` makes the first attempt due then, and is echoed.
 *
 * The stored idempotent answer holds the message without its payload (payloads are encrypted at rest and
 * must not be copied into the key table in plain text); a replay reads the payload back from the message.
 *
 * A request with an Idempotency-Key and without get-or-create first tries the grouped keyed publish (ADR
 * 0007): lookups and checks outside a transaction, then key, message and answer in a transaction shared
 * with concurrent requests. When it is not stored that way (the key exists, a lookup or check refused it, the
 * database refused the group) nothing was stored, and the request takes the ordinary keyed path, which
 * answers it as before (replay, 404, 409, 422…). A connection failure is answered as such (503); a client
 * retrying with its key is then answered from the key row if the group did commit.
 */
export function registerMessageCreate(app: Api, deps: HttpDeps): void {
  app.post('/api/v1/app/:appId/msg', {
    schema: {
      tags: ['Message'], summary: 'Create message', params: z.object({ appId: refParam }), querystring: withContentQuery, body: messageIn,
      response: { 202: messageOut, 409: errorBody, 413: errorBody, ...commonErrors },
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const body = request.body;
    const raw = body.transformationsParams ?? null;
    const payload = raw === null ? payloadBytes(request.rawText ?? '') : Buffer.from(raw.rawPayload, 'utf8');
    const contentType = raw === null ? null : raw.headers?.['content-type'] ?? RAW_DEFAULT_CONTENT_TYPE;
    const retentionHours = body.payloadRetentionHours ?? (body.payloadRetentionPeriod == null ? null : body.payloadRetentionPeriod * 24);
    const scope = body.application == null ? keyScope(deps, request) : null;
    const inputFor = (appId: string): PublishInput => ({
      appId, eventType: body.eventType, eventId: body.eventId ?? null, channels: body.channels ?? null, tags: body.tags ?? null, payload, retentionHours,
      contentType, deliverAt: body.deliverAt ?? null,
    });
    const answerOf = (message: Parameters<typeof messageHead>[0]): StoredAnswer => ({ status: 202, body: messageHead(message) });
    let grouped: StoredAnswer | null = null;
    if (scope !== null) {
      grouped = await deps.unitOfWork.autocommit(async (tx) => {
        const target = await deps.applications.resolveForPublish(tx, principal, request.params.appId, null);
        const stored = await deps.publisher.publishKeyed(scope, inputFor(target.id), answerOf);
        return stored === null ? null : stored.answer;
      // A refused lookup or check (404, 422…) stored nothing: the ordinary path answers it, replay included.
      // Anything else (the database unreachable, an unknown commit outcome) is this request's answer.
      }).catch((error: unknown) => {
        if (error instanceof AppError) return null;
        throw error;
      });
    }
    const answer = grouped !== null ? { ...grouped, replayed: false } : await idempotentPost(deps, request, async (tx) => {
      const target = await deps.applications.resolveForPublish(tx, principal, request.params.appId, body.application == null ? null : applicationInput(body.application));
      const { message } = await deps.publisher.publish(tx, inputFor(target.id));
      return answerOf(message);
    // Without get-or-create, the only write is the one PUBLISH statement: no BEGIN/COMMIT needed (ADR 0006).
    }, { withoutKey: body.application == null ? 'autocommit' : 'transaction' });
    // A replayed answer comes back from jsonb, whose key order is its own: rebuild it in the Svix order.
    const head = messageHeadFromJson(answer.body as ReturnType<typeof messageHead>);
    let content: { payload: Uint8Array | null; contentType: string | null } = { payload: null, contentType: null };
    if (request.query.with_content) {
      content = answer.replayed ? await deps.queries.getMessage(principal, request.params.appId, head.id, true) : { payload, contentType };
    }
    reply.type('application/json; charset=utf-8');
    return sendAnswer(reply, answer, messageJson(head, content.payload, content.contentType));
  });
}
