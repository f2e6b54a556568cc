import { z } from 'zod';
import { eventTypeName, instantQuery, WIRE_LIMITS } from './common.ts';

/** Longest grace period of a secret rotation (Svix: 0 s to 7 days). */
const GRACE_MAX_SECONDS = 7 * 24 * 3600;

/**
 * Svix `EndpointSecretRotateIn`: `key` null/absent = generate one; `gracePeriodSeconds` absent =
 * TIDINGS_SECRET_ROTATION_GRACE.
 */
export const endpointSecretRotateIn = z
  .strictObject({
    key: z
      .string()
      .max(WIRE_LIMITS.nameMaxLength)
      .nullish()
      .describe('whsec_ + base64 of 24–64 bytes (or the bare base64); omitted = generated'),
    gracePeriodSeconds: z
      .number()
      .int()
      .min(0)
      .max(GRACE_MAX_SECONDS)
      .nullish()
      .describe('How long the previous secret still signs, 0–604800 s'),
  })
  .meta({ id: 'EndpointSecretRotateIn' });

const headerMap = <V extends z.ZodType>(value: V) =>
  z
    .record(z.string().min(1).max(WIRE_LIMITS.nameMaxLength), value)
    .refine((m) => Object.keys(m).length <= WIRE_LIMITS.mapEntriesMax, `at most ${WIRE_LIMITS.mapEntriesMax} entries`);

/** Svix `EndpointHeadersIn` (PUT): every custom header; the ones not given are removed. */
export const endpointHeadersIn = z
  .strictObject({
    headers: headerMap(z.string().max(WIRE_LIMITS.urlMaxLength)),
  })
  .meta({ id: 'EndpointHeadersIn' });

/** Svix `EndpointHeadersPatchIn`: set the given headers; a null value or a name in `deleteHeaders` removes one. */
export const endpointHeadersPatchIn = z
  .strictObject({
    headers: headerMap(z.string().max(WIRE_LIMITS.urlMaxLength).nullable()),
    deleteHeaders: z.array(z.string().min(1).max(WIRE_LIMITS.nameMaxLength)).max(WIRE_LIMITS.mapEntriesMax).nullish(),
  })
  .meta({ id: 'EndpointHeadersPatchIn' });

/** Svix `EndpointHeadersOut`: plain headers, and the names of the sensitive ones (their values are never shown). */
export const endpointHeadersOut = z
  .object({
    headers: z.record(z.string(), z.string()),
    sensitive: z.array(z.string()),
  })
  .meta({ id: 'EndpointHeadersOut' });

/** `GET …/stats` query (Svix): messages created in [since, until). */
export const endpointStatsQuery = z.object({
  since: instantQuery.optional(),
  until: instantQuery.optional(),
});

/** Svix `EndpointStats`, plus Tidings' `skipped` (deliveries kept while the endpoint was disabled). */
export const endpointStatsOut = z
  .object({
    success: z.number(),
    pending: z.number(),
    sending: z.number(),
    fail: z.number(),
    canceled: z.number(),
    skipped: z.number(),
  })
  .meta({ id: 'EndpointStats' });

/** Svix `EventExampleIn`. */
export const eventExampleIn = z
  .strictObject({
    eventType: eventTypeName,
    exampleIndex: z
      .number()
      .int()
      .min(0)
      .max(1_000)
      .nullish()
      .describe("Which entry of the schema's `examples` (default 0)"),
  })
  .meta({ id: 'EventExampleIn' });
