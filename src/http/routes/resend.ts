import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';

/**
 * `POST /api/v1/app/{app}/msg/{msg}/endpoint/{ep}/resend` (Svix resend): one manual attempt now, with the
 * message's original `webhook-id`; if it fails it is not retried (DESIGN §3). Answers 202 with no body.
 */
export function registerResend(app: Api, deps: Pick<HttpDeps, 'resender'>): void {
  app.post('/api/v1/app/:appId/msg/:msgId/endpoint/:endpointId/resend', {
    schema: {
      tags: ['Message Attempt'], summary: 'Resend a message to an endpoint',
      params: z.object({ appId: refParam, msgId: refParam, endpointId: refParam }),
      response: { 202: z.null(), 409: errorBody, ...commonErrors },
    },
  }, async (request, reply) => {
    const p = request.params;
    await deps.resender.resend(principalOf(request), p.appId, p.msgId, p.endpointId);
    return reply.code(202).send(null);
  });
}
