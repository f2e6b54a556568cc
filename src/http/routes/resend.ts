import { z } from 'zod';
import { emptyAnswer } from '../../app/answers.ts';
import { writeOnce } from '../../app/write-once.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { keyScope, principalOf, sendAnswer } from '../idempotency.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';

/**
 * `POST /api/v1/app/{app}/msg/{msg}/endpoint/{ep}/resend` (Svix resend): one manual attempt now, with the
 * message's original `webhook-id`; if it fails it is not retried (docs/design.md#delivery-lifecycle). Answers 202 with
 * no body. With an Idempotency-Key, a retried call answers the stored 202 and queues nothing more.
 */
export function registerResend(
  app: Api,
  deps: Pick<HttpDeps, 'resender' | 'idempotency' | 'unitOfWork' | 'config'>,
): void {
  app.post(
    '/api/v1/app/:appId/msg/:msgId/endpoint/:endpointId/resend',
    {
      schema: {
        tags: ['Message Attempt'],
        summary: 'Resend a message to an endpoint',
        params: z.object({ appId: refParam, msgId: refParam, endpointId: refParam }),
        response: { 202: z.null(), 409: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const p = request.params;
      const answer = await writeOnce(deps, keyScope(deps, request), async (tx) => {
        await deps.resender.resend(tx, principalOf(request), p.appId, p.msgId, p.endpointId);
        return emptyAnswer(202);
      });
      return sendAnswer(reply, answer);
    },
  );
}
