import { z } from 'zod';
import { emptyAnswer } from '../../app/answers.ts';
import { writeOnce } from '../../app/write-once.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { keyScope, principalOf, sendAnswer } from '../idempotency.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import { endpointSecretRotateIn } from '../schemas/endpoint-settings.ts';

/**
 * Svix `POST /api/v1/app/{app}/endpoint/{ep}/secret/rotate` (204): the endpoint signs with a new secret
 * (`key`, or a generated one); for the grace period (`gracePeriodSeconds`, default
 * TIDINGS_SECRET_ROTATION_GRACE) every request carries the previous secret's signature too (docs/design.md#signing).
 * Idempotency-Key honoured: a repeated rotation with the same key rotates once.
 */
export function registerEndpointSecretRotate(
  app: Api,
  deps: Pick<HttpDeps, 'endpointSettings' | 'idempotency' | 'unitOfWork' | 'config'>,
): void {
  app.post(
    '/api/v1/app/:appId/endpoint/:endpointId/secret/rotate',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Rotate endpoint signing secret',
        params: z.object({ appId: refParam, endpointId: refParam }),
        body: endpointSecretRotateIn,
        response: { 204: z.null().describe('Rotated'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { key, gracePeriodSeconds } = request.body;
      const answer = await writeOnce(deps, keyScope(deps, request), async (tx) => {
        await deps.endpointSettings.rotateSecret(tx, principal, request.params.appId, request.params.endpointId, {
          key: key ?? null,
          graceMs: gracePeriodSeconds == null ? null : gracePeriodSeconds * 1000,
        });
        return emptyAnswer(204);
      });
      return sendAnswer(reply, answer);
    },
  );
}
