import { z } from 'zod';
import { parseDurationMs } from '../../config/config.ts';
import { eventTypeName } from './common.ts';

/** Longest duration text accepted ("10h", "1500ms", …). */
const DURATION_TEXT_MAX = 32;
/** Most delays a schedule may carry on the wire; TIDINGS_RETRY_POLICY_MAX_DELAYS is the limit checked after. */
const SCHEDULE_WIRE_MAX = 1000;

/** A duration: whole milliseconds, or a text in the settings' style ("500ms", "5s", "30m", "2h", "1d"); in ms after. */
const duration = z
  .union([z.number().int().min(0).max(2_147_483_647), z.string().min(1).max(DURATION_TEXT_MAX)])
  .transform((value, ctx) => {
    if (typeof value === 'number') return value;
    try {
      return parseDurationMs(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });

const fields = {
  schedule: z
    .array(duration)
    .max(SCHEDULE_WIRE_MAX)
    .nullish()
    .describe('Delay after each failed attempt (ms, or "5s", "30m", "2h"…); past its end the last delay repeats'),
  attemptTimeout: duration
    .nullish()
    .describe('Overall deadline of one attempt (ms, or "5s"…); TIDINGS_LEASE must exceed it plus 1 s'),
  maxAttempts: z
    .number()
    .int()
    .nullish()
    .describe('Attempts in all, the first included (1 to TIDINGS_RETRY_POLICY_MAX_ATTEMPTS)'),
};

/** `PUT …/retry-policy`: the whole policy; a field absent or null falls back (event type, then installation). */
export const retryPolicyIn = z.strictObject(fields).meta({ id: 'RetryPolicyIn' });

/** `PATCH …/retry-policy`: only the given fields change; null clears one (it falls back again). */
export const retryPolicyPatch = z.strictObject(fields).meta({ id: 'RetryPolicyPatch' });

const source = z.enum(['endpoint', 'eventType', 'installation', 'schedule']);

/** A policy as stored: each field in ms, null when not set. */
const policyOut = z.object({
  schedule: z.array(z.number()).nullable(),
  attemptTimeout: z.number().nullable(),
  maxAttempts: z.number().nullable(),
});

/** `GET …/retry-policy`: the owner's own policy, and every field resolved with where it came from. */
export const retryPolicyOut = z
  .object({
    policy: policyOut,
    eventType: z
      .string()
      .nullable()
      .optional()
      .describe('The event type whose policy took part in `effective` (endpoints only)'),
    effective: z.object({
      schedule: z.array(z.number()),
      attemptTimeout: z.number(),
      maxAttempts: z.number(),
      sources: z
        .object({ schedule: source, attemptTimeout: source, maxAttempts: source })
        .describe(
          'Where each field came from: endpoint, eventType, installation (the settings), or schedule ' +
            "(maxAttempts: the schedule's entries + 1)",
        ),
    }),
  })
  .meta({ id: 'RetryPolicyOut' });

/** `GET /api/v1/app/{app}/endpoint/{ep}/retry-policy` query. */
export const endpointRetryPolicyQuery = z.object({
  event_type: eventTypeName.optional().describe('Resolve for messages of this event type (its policy takes part)'),
});
