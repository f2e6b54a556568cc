import { z } from 'zod';
import {
  flagQuery,
  idIterator,
  listQuery,
  listResponse,
  rateFieldsIn,
  rateFieldsOut,
  rateSchema,
  sameAsOlderName,
  stringMap,
  uidSchema,
  WIRE_LIMITS,
} from './common.ts';

/** `throttleRate` and its older name: both may be given only with the same value. */
const RATE_NAMES = [['throttleRate', 'rateLimit']] as const;

/**
 * Svix `ApplicationIn` (`throttleRate`; the older name `rateLimit` is accepted too, and both together only with
 * the same value). Any other field is refused (422 naming it).
 */
export const applicationIn = z
  .strictObject({
    name: z.string().min(1).max(WIRE_LIMITS.nameMaxLength),
    uid: uidSchema.nullish(),
    throttleRate: rateSchema.nullish().describe('Maximum messages per second; null = unlimited'),
    rateLimit: rateSchema.nullish().describe('Older name of throttleRate'),
    metadata: stringMap.nullish(),
  })
  .superRefine(sameAsOlderName(RATE_NAMES))
  .meta({ id: 'ApplicationIn' });

/** Svix `ApplicationPatch`: only the given fields change; null clears a nullable one. */
export const applicationPatch = z
  .strictObject({
    name: z.string().min(1).max(WIRE_LIMITS.nameMaxLength).optional(),
    uid: uidSchema.nullish(),
    ...rateFieldsIn,
    metadata: stringMap.optional(),
  })
  .superRefine(sameAsOlderName(RATE_NAMES))
  .meta({ id: 'ApplicationPatch' });

/** Svix `ApplicationOut`, plus `rateLimit` (same value as `throttleRate`, older name). */
export const applicationOut = z
  .object({
    id: z.string(),
    uid: z.string().nullable(),
    name: z.string(),
    ...rateFieldsOut,
    metadata: z.record(z.string(), z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'ApplicationOut' });

export const applicationList = listResponse(applicationOut).meta({ id: 'ListResponseApplicationOut' });

/** `GET /api/v1/app` query: ascending by id (creation) unless `order=descending`. */
export const applicationListQuery = listQuery(idIterator('app'), 'ascending').extend({
  exclude_apps_with_no_endpoints: flagQuery.default(false).describe('Leave out applications without endpoints'),
  exclude_apps_with_disabled_endpoints: flagQuery
    .default(false)
    .describe('Leave out applications whose endpoints are all disabled'),
  exclude_apps_with_svix_play_endpoints: flagQuery
    .default(false)
    .describe('Leave out applications whose endpoints are all Svix Play URLs'),
});

/** `POST /api/v1/app` query: `get_if_exists` (the svix client's getOrCreate) or `get_or_create`. */
export const applicationCreateQuery = z.object({
  get_if_exists: z.stringbool().optional(),
  get_or_create: z.stringbool().optional(),
});
