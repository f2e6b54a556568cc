import { z } from 'zod';
import { messageOutFields, messageStatusQuery } from './message-fields.ts';
import {
  channelName,
  eventTypeName,
  flagQuery,
  idIterator,
  instantQuery,
  listParam,
  listQuery,
  listResponse,
  tagName,
} from './common.ts';

/** `expanded_statuses` (Svix): false (the default when absent) shows canceled as success, as Svix does. */
const expandedStatuses = flagQuery.default(false);

/** `GET /app/{app}/msg/{msg}/endpoint` query: by endpoint id, ascending unless asked otherwise. */
export const destinationListQuery = listQuery(idIterator('ep'), 'ascending').extend({
  expanded_statuses: expandedStatuses,
});

/**
 * Tidings: whether a pending delivery waits behind its endpoint rather than its schedule (`nextAttempt`
 * stays the schedule's due time, which may be past while a hold lasts).
 */
export const holdFields = {
  heldBy: z
    .enum(['paused', 'breaker', 'throttled'])
    .nullable()
    .describe(
      "What holds this pending delivery back: the endpoint's pause, its circuit breaker (open, or half-open " +
        "awaiting its probe), or a receiver's Retry-After throttle; null = not held (it goes at nextAttempt)",
    ),
  heldUntil: z
    .string()
    .nullable()
    .describe(
      "When the hold ends (the breaker's cool-down or the throttle), ISO-8601; null when held with no set end " +
        "(paused until resumed; a breaker awaiting its probe's outcome) or not held",
    ),
};

/**
 * Svix `MessageEndpointOut`, plus Tidings' `deliveryState` (pending, leased, succeeded, dead, skipped, canceled)
 * and hold.
 */
export const messageEndpointOut = z
  .object({
    id: z.string(),
    status: z.number(),
    statusText: z.string(),
    nextAttempt: z.string().nullable(),
    url: z.string(),
    description: z.string(),
    throttleRate: z.number().nullable(),
    uid: z.string().nullable(),
    disabled: z.boolean(),
    eventTypes: z.array(z.string()).nullable(),
    channels: z.array(z.string()).nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    deliveryState: z.string(),
    ...holdFields,
  })
  .meta({ id: 'MessageEndpointOut' });

export const messageEndpointList = listResponse(messageEndpointOut).meta({ id: 'ListResponseMessageEndpointOut' });

/**
 * `GET /app/{app}/endpoint/{ep}/msg` query (Svix): newest first; filters status, channel, tag, event_types, before,
 * after.
 */
export const endpointMessageListQuery = listQuery(idIterator('msg'), 'descending').extend({
  status: messageStatusQuery.optional(),
  channel: channelName.optional(),
  tag: tagName.optional(),
  event_types: listParam(eventTypeName).optional(),
  before: instantQuery.optional(),
  after: instantQuery.optional(),
  with_content: flagQuery
    .default(false)
    .describe('Include the payloads (default false: content is in a list only when asked)'),
  expanded_statuses: expandedStatuses,
});

/** Svix `EndpointMessageOut` (the message with its delivery's status), plus Tidings' `deliveryState` and hold. */
export const endpointMessageOut = z
  .object({
    status: z.number(),
    statusText: z.string(),
    nextAttempt: z.string().nullable(),
    ...messageOutFields,
    deliveryState: z.string(),
    ...holdFields,
  })
  .meta({ id: 'EndpointMessageOut' });

export const endpointMessageList = listResponse(endpointMessageOut).meta({ id: 'ListResponseEndpointMessageOut' });

/** An opaque dead-letter cursor (`-` in front = the page before it). */
const deadLetterIterator = z.string().regex(/^-?\d{1,19}$/, 'must be an iterator returned by this list');

/** `GET …/dead-letter` query (Tidings): newest first; filters event_types, before, after (message creation). */
export const deadLetterListQuery = listQuery(deadLetterIterator, 'descending').extend({
  event_types: listParam(eventTypeName).optional(),
  before: instantQuery.optional(),
  after: instantQuery.optional(),
});

/** Tidings: one dead letter — a delivery that ended `dead`, with its reason and last attempt. */
export const deadLetterOut = z
  .object({
    appId: z.string().describe('The application of the message'),
    msgId: z.string(),
    endpointId: z.string(),
    eventType: z.string(),
    msgTimestamp: z.string(),
    reason: z.string().nullable().describe('exhausted, gone, lease_lost_repeatedly, …'),
    attemptCount: z.number(),
    lastStatusCode: z.number().nullable(),
    lastErrorKind: z.string().nullable(),
    lastAttemptAt: z.string().nullable(),
    deadAt: z.string(),
  })
  .meta({ id: 'DeadLetterOut' });

export const deadLetterList = listResponse(deadLetterOut).meta({ id: 'ListResponseDeadLetterOut' });
