import { z } from 'zod';
import { messageFilterFields, messageOutFields, messageStatusQuery, statusCodeClass } from './message-fields.ts';
import { holdFields } from './delivery.ts';
import { flagQuery, idIterator, listQuery, listResponse, refParam } from './common.ts';

/** Filters shared by the attempt lists (Svix). Newest first unless `order=ascending`. */
export const attemptListQuery = listQuery(idIterator('atmpt'), 'descending').extend({
  status: messageStatusQuery.optional(),
  status_code_class: statusCodeClass.optional(),
  ...messageFilterFields,
  with_content: flagQuery
    .default(false)
    .describe("Include each attempt's stored response body (default false: content is in a list only when asked)"),
  with_msg: flagQuery.default(false),
  endpoint_id: refParam.optional(),
});

/**
 * Svix `MessageAttemptOut`, plus Tidings' `attemptNumber` and `errorKind` (docs/design.md#delivery-lifecycle; null on
 * success). `responseStatusCode` is 0 when no HTTP status arrived. `response` is the stored prefix of the response
 * body, or the error detail.
 */
export const attemptOut = z
  .object({
    id: z.string(),
    msgId: z.string(),
    endpointId: z.string(),
    url: z.string(),
    response: z.string(),
    responseStatusCode: z.number(),
    responseDurationMs: z.number(),
    status: z.number(),
    statusText: z.string(),
    triggerType: z.number(),
    timestamp: z.string(),
    attemptNumber: z.number(),
    errorKind: z.string().nullable(),
    msg: z.object(messageOutFields).optional(),
    /**
     * Tidings, operator credentials only (never an application's key): resolved and connected addresses, the
     * full reason of a refusal and the setting that decided it, signing key ids, the Retry-After received.
     */
    operatorDetail: z.record(z.string(), z.unknown()).nullable().optional(),
  })
  .meta({ id: 'MessageAttemptOut' });

export const attemptList = listResponse(attemptOut).meta({ id: 'ListResponseMessageAttemptOut' });

/** One row of a delivery timeline (Tidings). Ids and fencing tokens are decimal strings. */
export const timelineEntryOut = z
  .object({
    id: z.string(),
    state: z.string(),
    dispatcherId: z
      .string()
      .nullable()
      .describe('The dispatcher that held the lease (its host name); null for a credential scoped to one application'),
    fencingToken: z
      .string()
      .nullable()
      .describe("The lease's fencing token; null for a credential scoped to one application"),
    statusCode: z.number().nullable(),
    latencyMs: z.number().nullable(),
    errorKind: z.string().nullable(),
    reason: z.string().nullable(),
    at: z.string(),
  })
  .meta({ id: 'DeliveryTimelineEntry' });

/** The timeline response: the delivery's current state and one page of its transitions. */
export const timelineOut = z
  .object({
    deliveryState: z.string(),
    attemptCount: z.number(),
    nextAttemptAt: z.string().nullable(),
    ...holdFields,
    deadReason: z.string().nullable(),
    data: z.array(timelineEntryOut),
    iterator: z.string().nullable(),
    prevIterator: z.string().nullable(),
    done: z.boolean(),
  })
  .meta({ id: 'DeliveryTimeline' });

export const timelineQuery = listQuery(
  z.string().regex(/^-?\d{1,19}$/, 'must be an iterator returned by this list'),
  'ascending',
);
