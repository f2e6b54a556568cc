import { z } from 'zod';
import {
  channelName,
  eventTypeName,
  idIterator,
  listQuery,
  listResponse,
  rateFieldsIn,
  rateFieldsOut,
  sameAsOlderName,
  stringMap,
  uidSchema,
  WIRE_LIMITS,
} from './common.ts';

const url = z
  .string()
  .min(1)
  .max(WIRE_LIMITS.urlMaxLength)
  .describe('http(s) URL; addresses refused by the egress policy answer 422 url_not_allowed');
/**
 * An endpoint's event-type filter and channels: at least one entry, or null/absent for "every event type" /
 * "every channel". An empty list is refused (as Svix does): stored, it would read as "everything", the
 * opposite of what an empty list says.
 */
const eventTypes = z
  .array(eventTypeName)
  .min(1, 'must not be empty: omit it (or send null) to receive every event type')
  .max(WIRE_LIMITS.eventTypesMax);
const channels = z
  .array(channelName)
  .min(1, 'must not be empty: omit it (or send null) to receive every channel')
  .max(WIRE_LIMITS.channelsMax);
const headers = z
  .record(z.string().max(WIRE_LIMITS.nameMaxLength), z.string().max(WIRE_LIMITS.urlMaxLength))
  .refine((m) => Object.keys(m).length <= WIRE_LIMITS.mapEntriesMax, `at most ${WIRE_LIMITS.mapEntriesMax} entries`);
const version = z.number().int().min(1).max(2_147_483_647);

/** Fields and their older names: both may be given only with the same value. */
const OLDER_NAMES = [
  ['eventTypes', 'filterTypes'],
  ['throttleRate', 'rateLimit'],
] as const;

const endpointFields = z.strictObject({
  url,
  description: z.string().max(WIRE_LIMITS.urlMaxLength).nullish(),
  uid: uidSchema.nullish(),
  disabled: z.boolean().nullish(),
  eventTypes: eventTypes.nullish(),
  filterTypes: eventTypes.nullish(),
  channels: channels.nullish(),
  secret: z.string().max(WIRE_LIMITS.nameMaxLength).nullish(),
  metadata: stringMap.nullish(),
  headers: headers.nullish().describe('Custom static headers sent with every request'),
  ...rateFieldsIn,
  version: version.nullish(),
});

/**
 * Svix `EndpointIn`. `eventTypes` and its older name `filterTypes` are both accepted (as are `throttleRate`
 * and `rateLimit`); both names together only with the same value. `secret`: `whsec_` + base64 of 24–64 bytes
 * (or the bare base64); omitted = generated.
 */
export const endpointIn = endpointFields.superRefine(sameAsOlderName(OLDER_NAMES)).meta({ id: 'EndpointIn' });

/** Svix `EndpointUpsertIn` (PUT): the fields of {@link endpointIn} but the secret. */
export const endpointUpdate = endpointFields
  .omit({ secret: true })
  .superRefine(sameAsOlderName(OLDER_NAMES))
  .meta({ id: 'EndpointUpdate' });

/** Svix `EndpointPatch`: only the given fields change; null clears a nullable one. */
export const endpointPatch = z
  .strictObject({
    url: url.optional(),
    description: z.string().max(WIRE_LIMITS.urlMaxLength).optional(),
    uid: uidSchema.nullish(),
    disabled: z.boolean().optional(),
    eventTypes: eventTypes.nullish(),
    filterTypes: eventTypes.nullish(),
    channels: channels.nullish(),
    metadata: stringMap.optional(),
    headers: headers.nullish(),
    ...rateFieldsIn,
    version: version.optional(),
  })
  .superRefine(sameAsOlderName(OLDER_NAMES))
  .meta({ id: 'EndpointPatch' });

/** Svix `EndpointOut`, plus the older names (`filterTypes`, `rateLimit`), `version` and the custom headers. */
export const endpointOut = z
  .object({
    id: z.string(),
    uid: z.string().nullable(),
    url: z.string(),
    description: z.string(),
    version: z.number(),
    disabled: z.boolean(),
    eventTypes: z.array(z.string()).nullable(),
    filterTypes: z.array(z.string()).nullable(),
    channels: z.array(z.string()).nullable(),
    ...rateFieldsOut,
    metadata: z.record(z.string(), z.string()),
    headers: z.record(z.string(), z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'EndpointOut' });

export const endpointList = listResponse(endpointOut).meta({ id: 'ListResponseEndpointOut' });
export const endpointListQuery = listQuery(idIterator('ep'), 'ascending');

/** Svix `EndpointSecretOut`. */
export const endpointSecretOut = z.object({ key: z.string() }).meta({ id: 'EndpointSecretOut' });
