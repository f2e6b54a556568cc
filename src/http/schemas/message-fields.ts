import { z } from 'zod';
import { channelName, eventTypeName, instantQuery, listParam, queryInt, tagName } from './common.ts';

/** Svix `MessageStatus` in a query: 0 success, 1 pending, 2 fail, 3 sending, 4 canceled. */
export const messageStatusQuery = queryInt(0, 4);

/** Svix `StatusCodeClass`: 0 (no response), 100, 200, 300, 400, 500. */
export const statusCodeClass = queryInt(0, 500).refine(
  (n) => [0, 100, 200, 300, 400, 500].includes(n),
  'must be 0, 100, 200, 300, 400 or 500',
);

/** The message filters of a list (Svix): event_types, channel, tag, before, after. */
export const messageFilterFields = {
  event_types: listParam(eventTypeName).optional(),
  channel: channelName.optional(),
  tag: tagName.optional(),
  before: instantQuery.optional(),
  after: instantQuery.optional(),
};

/** A message as Svix shows it in `MessageOut`, in an attempt's `msg` and in `EndpointMessageOut`. */
export const messageOutFields = {
  id: z.string(),
  eventId: z.string().nullable(),
  eventType: z.string(),
  payload: z.unknown(),
  channels: z.array(z.string()).nullable(),
  tags: z.array(z.string()).nullable(),
  timestamp: z.string(),
};
