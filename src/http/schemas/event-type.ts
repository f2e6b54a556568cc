import { z } from 'zod';
import { eventTypeName, flagQuery, listQuery, listResponse, WIRE_LIMITS } from './common.ts';

/** Feature flag or group name (Svix): 1–256 of letters, digits, `-`, `_`, `.`. */
const flagName = z
  .string()
  .min(1)
  .max(WIRE_LIMITS.nameMaxLength)
  .regex(/^[a-zA-Z0-9\-_.]+$/, 'may contain only letters, digits, "-", "_" and "."');
const description = z.string().max(WIRE_LIMITS.urlMaxLength);
const featureFlags = z.array(flagName).max(WIRE_LIMITS.mapEntriesMax);
/** Svix `schemas`: version ("1", "2", …) → JSON Schema. Checked further by the use case (keys, compiling). */
const schemas = z
  .record(z.string(), z.unknown())
  .describe('Version ("1", "2", …) → JSON Schema; messages are checked against the highest version');

/** Svix `EventTypeIn`. `featureFlag` (the older single flag) is accepted as one more flag. */
export const eventTypeIn = z
  .strictObject({
    name: eventTypeName,
    description,
    archived: z.boolean().nullish(),
    deprecated: z.boolean().nullish(),
    schemas: schemas.nullish(),
    groupName: flagName.nullish(),
    featureFlags: featureFlags.nullish(),
    featureFlag: flagName.nullish(),
  })
  .meta({ id: 'EventTypeIn' });

/** Svix `EventTypeUpsertIn` (PUT): the fields of {@link eventTypeIn} but the name (it is in the path). */
export const eventTypeUpsertIn = eventTypeIn.omit({ name: true }).meta({ id: 'EventTypeUpsertIn' });

/** Svix `EventTypePatch`: only the given fields change; null clears a nullable one. */
export const eventTypePatch = z
  .strictObject({
    description: description.optional(),
    archived: z.boolean().optional(),
    deprecated: z.boolean().optional(),
    schemas: schemas.nullish(),
    groupName: flagName.nullish(),
    featureFlags: featureFlags.nullish(),
    featureFlag: flagName.nullish(),
  })
  .meta({ id: 'EventTypePatch' });

/** Svix `EventTypeOut`. `schemas` is null unless the list was asked `with_content`. */
export const eventTypeOut = z
  .object({
    name: z.string(),
    description: z.string(),
    archived: z.boolean(),
    deprecated: z.boolean(),
    schemas: z.record(z.string(), z.unknown()).nullable(),
    groupName: z.string().nullable(),
    featureFlags: z.array(z.string()).nullable(),
    featureFlag: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'EventTypeOut' });

export const eventTypeList = listResponse(eventTypeOut).meta({ id: 'ListResponseEventTypeOut' });

/** An iterator over event type names (`-` in front = the page before it). */
const nameIterator = z
  .string()
  .regex(/^-?[a-zA-Z0-9\-_.]{1,256}$/, 'must be an iterator returned by this list (an event type name)');

/** `GET /api/v1/event-type` query: by name, ascending unless `order=descending`. */
export const eventTypeListQuery = listQuery(nameIterator, 'ascending').extend({
  include_archived: flagQuery.default(false),
  with_content: flagQuery
    .default(false)
    .describe('Include the schemas (default false, as the svix client asks: content is in a list only when asked)'),
});

/** `DELETE /api/v1/event-type/{name}` query: `expunge=true` deletes instead of archiving. */
export const eventTypeDeleteQuery = z.object({ expunge: flagQuery.default(false) });
