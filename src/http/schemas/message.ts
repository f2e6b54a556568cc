import { z } from 'zod';
import { applicationIn } from './application.ts';
import { channelName, eventTypeName, flagQuery, idIterator, instantQuery, listParam, listQuery, tagName, WIRE_LIMITS } from './common.ts';

/** Longest payload retention: 100 years, in days (keeps hours within a 32-bit integer). */
const RETENTION_DAYS_MAX = 36_500;

/**
 * Svix `MessageIn`. `payload` is required and may be any JSON value; it is delivered as the exact bytes of
 * its span in the request body. `application` creates the application when the path names none.
 * Accepted and ignored: `deliverAt`, `transformationsParams` and any other field.
 */
export const messageIn = z.object({
  eventType: eventTypeName,
  eventId: z.string().min(1).max(WIRE_LIMITS.nameMaxLength).nullish(),
  payload: z.unknown().describe('Any JSON value; delivered byte for byte'),
  channels: z.array(channelName).min(1).max(WIRE_LIMITS.channelsMax).nullish(),
  tags: z.array(tagName).min(1).max(WIRE_LIMITS.tagsMax).nullish(),
  payloadRetentionHours: z.number().int().min(1).max(RETENTION_DAYS_MAX * 24).nullish(),
  payloadRetentionPeriod: z.number().int().min(1).max(RETENTION_DAYS_MAX).nullish().describe('Days; mutually exclusive with payloadRetentionHours'),
  application: applicationIn.nullish(),
}).superRefine((body, ctx) => {
  if (!('payload' in body) || body.payload === undefined) ctx.addIssue({ code: 'custom', path: ['payload'], message: 'field required' });
  if (body.payloadRetentionHours != null && body.payloadRetentionPeriod != null) {
    ctx.addIssue({ code: 'custom', path: ['payloadRetentionHours'], message: 'payloadRetentionHours and payloadRetentionPeriod are mutually exclusive' });
  }
}).meta({ id: 'MessageIn' });

/** Svix `MessageOut`. `payload` is the stored bytes verbatim (`{}` without content or once expunged). */
export const messageOut = z.object({
  id: z.string(),
  eventId: z.string().nullable(),
  eventType: z.string(),
  payload: z.unknown(),
  channels: z.array(z.string()).nullable(),
  tags: z.array(z.string()).nullable(),
  timestamp: z.string(),
}).meta({ id: 'MessageOut' });

export const messageList = z.object({ data: z.array(messageOut), iterator: z.string().nullable(), prevIterator: z.string().nullable(), done: z.boolean() }).meta({ id: 'ListResponseMessageOut' });

/** `with_content` (default true, as Svix answers a request that does not say). */
export const withContentQuery = z.object({ with_content: flagQuery.default(true) });

/** `GET /app/{app}/msg` query: newest first unless `order=ascending`; Svix filters. */
export const messageListQuery = listQuery(idIterator('msg'), 'descending').extend({
  with_content: flagQuery.default(true),
  event_types: listParam(eventTypeName).optional(),
  channel: channelName.optional(),
  tag: tagName.optional(),
  before: instantQuery.optional(),
  after: instantQuery.optional(),
});
