import { z } from 'zod';
import { DeliveryState } from '../../domain/delivery-state.ts';
import { PAYLOAD_PATH_LIMITS, payloadPath } from '../../domain/payload-field.ts';
import { holdFields } from './delivery.ts';
import { messageStatusQuery, statusCodeClass } from './message-fields.ts';
import {
  channelName,
  eventTypeName,
  flagQuery,
  idIterator,
  instantQuery,
  listParam,
  listQuery,
  listResponse,
  queryInt,
  refParam,
  tagName,
} from './common.ts';

/** Longest `payload_value`, in characters. */
const PAYLOAD_VALUE_MAX_LENGTH = 1024;

/** An HTTP status: exactly this one (Tidings). */
const statusCode = queryInt(100, 599);

/** The window and the message filters of every search (docs/reference/api.md, "Search"). */
const searchFields = {
  after: instantQuery
    .optional()
    .describe(
      'Required: the window starts after this instant (excluded). A search reads one window of at most ' +
        'TIDINGS_SEARCH_MAX_WINDOW (422 search_unbounded otherwise)',
    ),
  before: instantQuery.optional().describe('The window ends before this instant (excluded); default now (included)'),
  event_types: listParam(eventTypeName).optional(),
  channel: channelName.optional(),
  tag: tagName.optional(),
  payload_field: z
    .string()
    .max(PAYLOAD_PATH_LIMITS.maxLength)
    .optional()
    .describe(
      'A field of the JSON payload, as dotted keys (`customer.id`; digits also index an array: `items.0.sku`). ' +
        'With payload_value: only messages whose field equals it. Payloads are encrypted at rest, so they are ' +
        'decrypted and compared in the API, at most TIDINGS_SEARCH_PAYLOAD_ROWS / TIDINGS_SEARCH_PAYLOAD_BYTES ' +
        'per request',
    ),
  payload_value: z
    .string()
    .max(PAYLOAD_VALUE_MAX_LENGTH)
    .optional()
    .describe(
      'The value payload_field must equal: a string field by its text; a number, true, false or null by its ' +
        'JSON text as published',
    ),
};

/** The two payload parameters of a query. */
interface PayloadParams {
  readonly payload_field?: string | undefined;
  readonly payload_value?: string | undefined;
}

/** Checks payload_field and payload_value: both or neither, and a usable path. */
function payloadPair(q: PayloadParams, ctx: z.RefinementCtx): void {
  if (q.payload_field !== undefined && payloadPath(q.payload_field) === null) {
    const message = `must be dotted keys (no empty key), at most ${PAYLOAD_PATH_LIMITS.maxSegments} deep`;
    ctx.addIssue({ code: 'custom', path: ['payload_field'], message });
  }
  if ((q.payload_field === undefined) !== (q.payload_value === undefined)) {
    const missing = q.payload_field === undefined ? 'payload_field' : 'payload_value';
    const message = 'payload_field and payload_value go together: give both, or neither';
    ctx.addIssue({ code: 'custom', path: [missing], message });
  }
}

/** An iterator of the delivery search: `<message id>` or `<message id>.<endpoint id>` (`-` first: the page before). */
const deliveryIterator = z
  .string()
  .regex(/^-?msg_[0-9A-Za-z]{1,64}(\.ep_[0-9A-Za-z]{1,64})?$/, 'must be an iterator returned by this search');

/** `GET /app/{app}/search/msg`: messages in a window, newest first. */
export const messageSearchQuery = listQuery(idIterator('msg'), 'descending')
  .extend({
    ...searchFields,
    with_content: flagQuery.default(false).describe('Include the payloads (default false)'),
  })
  .superRefine(payloadPair);

/** Delivery states in a query string: comma-separated and/or repeated. */
const deliveryStates = listParam(z.enum(Object.values(DeliveryState) as [DeliveryState, ...DeliveryState[]]));

/** The delivery filters: state (exact, Tidings; or Svix `status`) and the last attempt's status class. */
const deliveryFields = {
  delivery_state: deliveryStates
    .optional()
    .describe('pending, leased, succeeded, dead, skipped, canceled (comma-separated or repeated)'),
  status: messageStatusQuery
    .optional()
    .describe('Svix MessageStatus: 0 succeeded, 1 pending, 2 dead, 3 leased, 4 canceled or skipped'),
  status_code_class: statusCodeClass
    .optional()
    .describe('The HTTP status class of the last attempt: 0 (none), 100 … 500'),
  status_code: statusCode.optional().describe('The HTTP status of the last attempt, exactly (Tidings): 100 … 599'),
};

/** `GET /app/{app}/search/delivery`: deliveries of messages in a window, newest message first. */
export const deliverySearchQuery = listQuery(deliveryIterator, 'descending')
  .extend({
    ...searchFields,
    ...deliveryFields,
    endpoint_id: refParam.optional().describe('One endpoint (id or uid; a deleted one by id)'),
  })
  .superRefine(payloadPair);

/** `GET /app/{app}/endpoint/{ep}/undelivered`: the endpoint's deliveries in a window that did not succeed. */
export const undeliveredQuery = listQuery(deliveryIterator, 'descending')
  .extend({
    ...searchFields,
    ...deliveryFields,
  })
  .superRefine(payloadPair);

/** `GET /app/{app}/search/attempt`: attempts to one endpoint in a window, newest first. */
export const attemptSearchQuery = listQuery(idIterator('atmpt'), 'descending')
  .extend({
    ...searchFields,
    endpoint_id: refParam
      .optional()
      .describe('Required: attempts are indexed by endpoint (id or uid; a deleted one by id)'),
    status: messageStatusQuery
      .refine((n) => n === 0 || n === 2, 'a recorded attempt is 0 (success) or 2 (fail)')
      .optional(),
    status_code_class: statusCodeClass.optional(),
    status_code: statusCode.optional().describe('The HTTP status the attempt got, exactly (Tidings): 100 … 599'),
    with_msg: flagQuery.default(false),
  })
  .superRefine(payloadPair);

/** Tidings: one delivery found by a search, with why it is in its state. */
export const deliverySearchOut = z
  .object({
    msgId: z.string(),
    eventId: z.string().nullable(),
    eventType: z.string(),
    channels: z.array(z.string()).nullable(),
    tags: z.array(z.string()).nullable(),
    msgTimestamp: z.string(),
    endpointId: z.string(),
    deliveryState: z.string().describe('pending, leased, succeeded, dead, skipped, canceled'),
    status: z
      .number()
      .describe('Svix MessageStatus: 0 success, 1 pending, 2 fail, 3 sending, 4 canceled (skipped too)'),
    statusText: z.string(),
    reason: z
      .string()
      .nullable()
      .describe(
        'Why the delivery is in its state: the reason of its latest timeline row (docs/reference/timeline.md), ' +
          'e.g. endpoint_disabled (skipped), endpoint_deleted (canceled), exhausted / gone (dead), ' +
          'retry_scheduled (pending)',
      ),
    stateChangedAt: z.string().nullable().describe("When it entered its state (that row's instant)"),
    attemptCount: z.number(),
    lastStatusCode: z.number().nullable(),
    lastErrorKind: z.string().nullable(),
    lastAttemptAt: z.string().nullable(),
    nextAttempt: z.string().nullable(),
    ...holdFields,
  })
  .meta({ id: 'DeliverySearchOut' });

export const deliverySearchList = listResponse(deliverySearchOut).meta({ id: 'ListResponseDeliverySearchOut' });
