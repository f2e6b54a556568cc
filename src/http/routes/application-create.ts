import { z } from 'zod';
import type { ApplicationInput } from '../../app/applications.ts';
import { writeOnce } from '../../app/write-once.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { keyScope, principalOf, sendAnswer } from '../idempotency.ts';
import { applicationAnswer } from '../../app/answers.ts';
import { applicationCreateQuery, applicationIn } from '../schemas/application.ts';
import { commonErrors, errorBody } from '../schemas/common.ts';
import { applicationOut as applicationOutSchema } from '../schemas/application.ts';

/** The body of an `ApplicationIn` as the use case takes it (`throttleRate` wins over the older `rateLimit`). */
export function applicationInput(body: z.output<typeof applicationIn>): ApplicationInput {
  return {
    name: body.name,
    ...(body.uid === undefined ? {} : { uid: body.uid }),
    rateLimit: body.throttleRate ?? body.rateLimit ?? null,
    metadata: body.metadata ?? {},
  };
}

/**
 * `POST /api/v1/app` (Svix create application): 201 with the new application; with `get_if_exists=true`
 * (or `get_or_create=true`) and a taken uid, 200 with the existing one. Idempotency-Key honoured.
 */
export function registerApplicationCreate(app: Api, deps: HttpDeps): void {
  app.post(
    '/api/v1/app',
    {
      schema: {
        tags: ['Application'],
        summary: 'Create application',
        querystring: applicationCreateQuery,
        body: applicationIn,
        response: { 200: applicationOutSchema, 201: applicationOutSchema, 409: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const getIfExists = request.query.get_if_exists === true || request.query.get_or_create === true;
      const input = applicationInput(request.body);
      const answer = await writeOnce(deps, keyScope(deps, request), async (tx) => {
        const { app: created, created: isNew } = await deps.applications.create(tx, principal, input, { getIfExists });
        return applicationAnswer(created, isNew);
      });
      return sendAnswer(reply, answer);
    },
  );
}
