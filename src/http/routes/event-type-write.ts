import { z } from 'zod';
import type { EventTypeChanges, EventTypeFields } from '../../ports/event-type-store.ts';
import { writeOnce } from '../../app/write-once.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { keyScope, principalOf, sendAnswer } from '../idempotency.ts';
import { eventTypeCreatedAnswer, eventTypeOut } from '../../app/answers.ts';
import { commonErrors, errorBody, eventTypeName, refParam } from '../schemas/common.ts';
import {
  eventTypeDeleteQuery,
  eventTypeIn,
  eventTypeOut as eventTypeOutSchema,
  eventTypePatch,
  eventTypeUpsertIn,
} from '../schemas/event-type.ts';

type UpsertBody = z.output<typeof eventTypeUpsertIn>;

/** Feature flags as stored: `featureFlags` plus the older single `featureFlag`, without repeats; null when none. */
function flagsOf(
  flags: readonly string[] | null | undefined,
  flag: string | null | undefined,
): readonly string[] | null {
  const all = [...(flags ?? []), ...(flag == null ? [] : [flag])];
  return all.length === 0 ? null : [...new Set(all)];
}

/** An `EventTypeIn` / `EventTypeUpsertIn` body as the use case takes it (absent fields take Svix's defaults). */
function fieldsOf(body: UpsertBody): EventTypeFields {
  return {
    description: body.description,
    archived: body.archived ?? false,
    deprecated: body.deprecated ?? false,
    schemas: body.schemas ?? null,
    groupName: body.groupName ?? null,
    featureFlags: flagsOf(body.featureFlags, body.featureFlag),
  };
}

/** A PATCH body: present fields only; null clears. */
function changesOf(body: z.output<typeof eventTypePatch>): EventTypeChanges {
  return {
    ...(body.description === undefined ? {} : { description: body.description }),
    ...(body.archived === undefined ? {} : { archived: body.archived }),
    ...(body.deprecated === undefined ? {} : { deprecated: body.deprecated }),
    ...(body.schemas === undefined ? {} : { schemas: body.schemas }),
    ...(body.groupName === undefined ? {} : { groupName: body.groupName }),
    ...(body.featureFlags === undefined && body.featureFlag === undefined
      ? {}
      : { featureFlags: flagsOf(body.featureFlags, body.featureFlag) }),
  };
}

const nameParams = z.object({ eventTypeName: refParam });

/**
 * Svix event type writes (operator credentials only): `POST /api/v1/event-type` (201; unarchives an
 * archived one; 409 when a live one has the name), `PUT …/{name}` (200 updated / 201 created),
 * `PATCH …/{name}`, `DELETE …/{name}` (204; archives, or deletes with `expunge=true`). `schemas` must be
 * `{"<version>": <JSON Schema>}`; messages of the type are then checked against the highest version (422).
 */
export function registerEventTypeWrite(
  app: Api,
  deps: Pick<HttpDeps, 'eventTypes' | 'idempotency' | 'unitOfWork' | 'config'>,
): void {
  app.post(
    '/api/v1/event-type',
    {
      schema: {
        tags: ['Event Type'],
        summary: 'Create event type',
        body: eventTypeIn,
        response: { 201: eventTypeOutSchema, 409: errorBody, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { name, ...rest } = request.body;
      const fields = fieldsOf(rest);
      const answer = await writeOnce(deps, keyScope(deps, request), async (tx) =>
        eventTypeCreatedAnswer(await deps.eventTypes.create(tx, principal, name, fields)),
      );
      return sendAnswer(reply, answer);
    },
  );

  app.put(
    '/api/v1/event-type/:eventTypeName',
    {
      schema: {
        tags: ['Event Type'],
        summary: 'Update (or create) event type',
        params: z.object({ eventTypeName }),
        body: eventTypeUpsertIn,
        response: { 200: eventTypeOutSchema, 201: eventTypeOutSchema, ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await deps.unitOfWork.transaction((tx) =>
        deps.eventTypes.upsert(tx, principal, request.params.eventTypeName, fieldsOf(request.body)),
      );
      return reply.code(result.created ? 201 : 200).send(eventTypeOut(result.eventType));
    },
  );

  app.patch(
    '/api/v1/event-type/:eventTypeName',
    {
      schema: {
        tags: ['Event Type'],
        summary: 'Patch event type',
        params: nameParams,
        body: eventTypePatch,
        response: { 200: eventTypeOutSchema, ...commonErrors },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const changes = changesOf(request.body);
      return eventTypeOut(
        await deps.unitOfWork.transaction((tx) =>
          deps.eventTypes.patch(tx, principal, request.params.eventTypeName, changes),
        ),
      );
    },
  );

  app.delete(
    '/api/v1/event-type/:eventTypeName',
    {
      schema: {
        tags: ['Event Type'],
        summary: 'Archive (or expunge) event type',
        params: nameParams,
        querystring: eventTypeDeleteQuery,
        response: { 204: z.null().describe('Archived or deleted'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await deps.unitOfWork.transaction((tx) =>
        deps.eventTypes.delete(tx, principal, request.params.eventTypeName, request.query.expunge),
      );
      return reply.code(204).send(null);
    },
  );
}
