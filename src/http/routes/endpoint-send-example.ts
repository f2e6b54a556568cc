import { z } from 'zod';
import { writeOnce } from '../../app/write-once.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { keyScope, principalOf, sendAnswer } from '../idempotency.ts';
import { exampleSentAnswer, type messageHead } from '../../app/answers.ts';
import { messageHeadFromJson, messageJson } from '../present.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';
import { eventExampleIn } from '../schemas/endpoint-settings.ts';
import { messageOut } from '../schemas/message.ts';

/**
 * Svix `POST /api/v1/app/{app}/endpoint/{ep}/send-example` (202 with the message): publishes the event
 * type's example (the `examples` of its latest schema version; `{}` without one) to this endpoint only,
 * signed like any message. The event type must be registered (422 at body.eventType); a disabled endpoint
 * is 409. Idempotency-Key honoured (the stored answer holds no payload; a replay reads it back).
 */
export function registerEndpointSendExample(
  app: Api,
  deps: Pick<HttpDeps, 'exampleSender' | 'queries' | 'idempotency' | 'unitOfWork' | 'config'>,
): void {
  app.post(
    '/api/v1/app/:appId/endpoint/:endpointId/send-example',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Send an example message to the endpoint',
        params: z.object({ appId: refParam, endpointId: refParam }),
        body: eventExampleIn,
        response: { 202: messageOut, 409: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const p = request.params;
      let payload: Uint8Array | null = null;
      const example = { eventType: request.body.eventType, exampleIndex: request.body.exampleIndex ?? null };
      const answer = await writeOnce(deps, keyScope(deps, request), async (tx) => {
        const message = await deps.exampleSender.send(tx, principal, p.appId, p.endpointId, example);
        payload = message.payload;
        return exampleSentAnswer(message);
      });
      const head = messageHeadFromJson(answer.body as ReturnType<typeof messageHead>);
      if (answer.replayed) payload = (await deps.queries.getMessage(principal, p.appId, head.id, true)).payload;
      reply.type('application/json; charset=utf-8');
      return sendAnswer(reply, answer, messageJson(head, payload));
    },
  );
}
