import { z } from 'zod';
import type { EndpointInput } from '../../app/endpoints.ts';
import { writeOnce } from '../../app/write-once.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { keyScope, principalOf, sendAnswer } from '../idempotency.ts';
import { endpointCreatedAnswer } from '../../app/answers.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';
import { endpointIn, endpointOut as endpointOutSchema } from '../schemas/endpoint.ts';

/** An `EndpointIn` body as the use case takes it (new names win over the older `filterTypes`/`rateLimit`). */
export function endpointInput(
  body: z.output<typeof endpointIn> | Omit<z.output<typeof endpointIn>, 'secret'>,
): EndpointInput {
  return {
    url: body.url,
    description: body.description ?? '',
    ...(body.uid === undefined ? {} : { uid: body.uid }),
    filterTypes: body.eventTypes ?? body.filterTypes ?? null,
    channels: body.channels ?? null,
    disabled: body.disabled ?? false,
    metadata: body.metadata ?? {},
    ...(body.headers === undefined ? {} : { headers: body.headers }),
    rateLimit: body.throttleRate ?? body.rateLimit ?? null,
    version: body.version ?? 1,
    ...('secret' in body && body.secret !== undefined ? { secret: body.secret } : {}),
  };
}

/**
 * `POST /api/v1/app/{app}/endpoint` (Svix create endpoint): 201 with the endpoint (never its secret; see
 * `GET …/secret`). The URL must pass the egress policy (422 `url_not_allowed`). Idempotency-Key honoured.
 */
export function registerEndpointCreate(app: Api, deps: HttpDeps): void {
  app.post(
    '/api/v1/app/:appId/endpoint',
    {
      schema: {
        tags: ['Endpoint'],
        summary: 'Create endpoint',
        params: z.object({ appId: refParam }),
        body: endpointIn,
        response: { 201: endpointOutSchema, 409: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const input = endpointInput(request.body);
      const answer = await writeOnce(deps, keyScope(deps, request), async (tx) =>
        endpointCreatedAnswer(await deps.endpoints.create(tx, principal, request.params.appId, input)),
      );
      return sendAnswer(reply, answer);
    },
  );
}
