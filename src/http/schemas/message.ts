import { z } from 'zod';
import { messageFilterFields, messageOutFields } from './message-fields.ts';
import { mediaTypeProblem } from '../../domain/http-fields.ts';
import { applicationIn } from './application.ts';
import {
  channelName,
  eventIdSchema,
  eventTypeName,
  flagQuery,
  idIterator,
  listQuery,
  listResponse,
  rfc3339Instant,
  tagName,
  WIRE_LIMITS,
} from './common.ts';

/** Longest payload retention: 100 years, in days (keeps hours within a 32-bit integer). */
const RETENTION_DAYS_MAX = 36_500;

/** Longest content type of a raw message, in characters. */
const CONTENT_TYPE_MAX_LENGTH = 256;

/**
 * A media type as a `Content-Type` header carries it (domain/http-fields.ts): `type/subtype`, optionally
 * followed by `; name=value` parameters; visible ASCII, with SP or HTAB (never a line break, a Unicode space
 * or a control character) around `;`, so that the sender can send it unchanged at every attempt.
 */
const mediaType = z
  .string()
  .min(3)
  .max(CONTENT_TYPE_MAX_LENGTH)
  .superRefine((value, ctx) => {
    const problem = mediaTypeProblem(value);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * Svix `transformationsParams`, as the client's `messageInRaw(eventType, body, contentType?)` fills it:
 * `rawPayload` is delivered byte for byte (UTF-8) instead of `payload`, with `headers["content-type"]` as
 * its content type (default text/plain). Transformations themselves are not served: any other key, or
 * any other header, is refused with 422 naming it.
 */
const transformationsParams = z
  .strictObject({
    rawPayload: z.string().describe('Delivered byte for byte (UTF-8) instead of payload'),
    headers: z
      .strictObject({ 'content-type': mediaType.optional() })
      .nullish()
      .describe("Only content-type: the raw body's content type (default text/plain)"),
  })
  .meta({ id: 'TransformationsParams' });

/** Svix `deliverAt`: an RFC 3339 instant with its offset. */
const deliverAt = rfc3339Instant.describe(
  'RFC 3339 instant of the first attempt (at most TIDINGS_DELIVER_AT_HORIZON ahead; in the past = at once)',
);

/** A JSON object (Svix refuses any other payload value). */
const jsonObject = z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
  error: (issue) => (issue.input === undefined ? 'field required' : 'payload must be a JSON object'),
});

/**
 * Svix `MessageIn`. `payload` is required and must be a JSON object; it is delivered as the exact bytes of
 * its span in the request body. A raw message (`transformationsParams.rawPayload`, payload `{}`) is
 * delivered as its raw body. `deliverAt` schedules the first attempt. `application` creates the application
 * when the path names none. Any field outside the model is refused (422 naming it).
 */
export const messageIn = z
  .strictObject({
    eventType: eventTypeName,
    eventId: eventIdSchema.nullish(),
    payload: jsonObject.describe('A JSON object; delivered byte for byte'),
    channels: z.array(channelName).min(1).max(WIRE_LIMITS.channelsMax).nullish(),
    tags: z.array(tagName).min(1).max(WIRE_LIMITS.tagsMax).nullish(),
    payloadRetentionHours: z
      .number()
      .int()
      .min(1)
      .max(RETENTION_DAYS_MAX * 24)
      .nullish(),
    payloadRetentionPeriod: z
      .number()
      .int()
      .min(1)
      .max(RETENTION_DAYS_MAX)
      .nullish()
      .describe('Days; mutually exclusive with payloadRetentionHours'),
    application: applicationIn.nullish(),
    transformationsParams: transformationsParams.nullish(),
    deliverAt: deliverAt.nullish(),
  })
  .superRefine((body, ctx) => {
    if (body.payloadRetentionHours != null && body.payloadRetentionPeriod != null) {
      ctx.addIssue({
        code: 'custom',
        path: ['payloadRetentionHours'],
        message: 'payloadRetentionHours and payloadRetentionPeriod are mutually exclusive',
      });
    }
    if (body.transformationsParams != null && body.payload !== undefined && Object.keys(body.payload).length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['payload'],
        message: 'must be {} when transformationsParams.rawPayload is given (the raw body is delivered instead)',
      });
    }
  })
  .meta({ id: 'MessageIn' });

/**
 * Svix `MessageOut`. `payload` is the stored bytes verbatim (`{}` without content or once expunged); for a
 * raw message, the raw body as a JSON string. `deliverAt` as published (null = at once).
 */
export const messageOut = z
  .object({
    ...messageOutFields,
    deliverAt: z.string().nullable(),
  })
  .meta({ id: 'MessageOut' });

export const messageList = listResponse(messageOut).meta({ id: 'ListResponseMessageOut' });

/** `with_content` (default true, as Svix answers a request that does not say). */
export const withContentQuery = z.object({ with_content: flagQuery.default(true) });

/** `GET /app/{app}/msg` query: newest first unless `order=ascending`; Svix filters. */
export const messageListQuery = listQuery(idIterator('msg'), 'descending').extend({
  with_content: flagQuery
    .default(false)
    .describe(
      'Include the payloads (default false: content is in a list only when asked; a single message shows it by ' +
        'default)',
    ),
  ...messageFilterFields,
});
