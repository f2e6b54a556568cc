import { z } from 'zod';
import type { ApplicationChanges } from '../../ports/application-store.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { applicationOut } from '../../app/answers.ts';
import { applicationIn, applicationOut as applicationOutSchema, applicationPatch } from '../schemas/application.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';
import { applicationInput } from './application-create.ts';

const params = z.object({ appId: refParam });

/**
 * `PUT /api/v1/app/{app}` (Svix create-or-update: 200 updated, 201 created), `PATCH /api/v1/app/{app}`
 * (the given fields) and `DELETE /api/v1/app/{app}` (204; everything the application owns goes with it).
 */
export function registerApplicationWrite(app: Api, deps: Pick<HttpDeps, 'applications' | 'unitOfWork'>): void {
  app.put(
    '/api/v1/app/:appId',
    {
      schema: {
        tags: ['Application'],
        summary: 'Update (or create) application',
        params,
        body: applicationIn,
        response: { 200: applicationOutSchema, 201: applicationOutSchema, 409: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await deps.unitOfWork.transaction((tx) =>
        deps.applications.upsert(tx, principal, request.params.appId, applicationInput(request.body)),
      );
      return reply.code(result.created ? 201 : 200).send(applicationOut(result.app));
    },
  );

  app.patch(
    '/api/v1/app/:appId',
    {
      schema: {
        tags: ['Application'],
        summary: 'Patch application',
        params,
        body: applicationPatch,
        response: { 200: applicationOutSchema, 409: errorBody, ...commonErrors },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const body = request.body;
      const rate = body.throttleRate !== undefined ? body.throttleRate : body.rateLimit;
      const changes: ApplicationChanges = {
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.uid === undefined ? {} : { uid: body.uid }),
        ...(rate === undefined ? {} : { rateLimit: rate }),
        ...(body.metadata === undefined ? {} : { metadata: body.metadata }),
      };
      return applicationOut(
        await deps.unitOfWork.transaction((tx) =>
          deps.applications.patch(tx, principal, request.params.appId, changes),
        ),
      );
    },
  );

  app.delete(
    '/api/v1/app/:appId',
    {
      schema: {
        tags: ['Application'],
        summary: 'Delete application',
        params,
        response: { 204: z.null().describe('Deleted'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await deps.unitOfWork.transaction((tx) => deps.applications.delete(tx, principal, request.params.appId));
      return reply.code(204).send(null);
    },
  );
}
