import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors, refParam } from '../schemas/common.ts';

/**
 * Svix `DELETE /api/v1/app/{app}/msg/{msg}/content` (204): erases the message's payload; the message, its
 * deliveries, attempts and timelines stay, and reading it shows `payload: {}`. Idempotent.
 */
export function registerMessageExpunge(app: Api, deps: Pick<HttpDeps, 'messageContent' | 'unitOfWork'>): void {
  app.delete(
    '/api/v1/app/:appId/msg/:msgId/content',
    {
      schema: {
        tags: ['Message'],
        summary: 'Expunge message content',
        params: z.object({ appId: refParam, msgId: refParam }),
        response: { 204: z.null().describe('Expunged'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await deps.unitOfWork.transaction((tx) =>
        deps.messageContent.expunge(tx, principal, request.params.appId, request.params.msgId),
      );
      return reply.code(204).send(null);
    },
  );
}
