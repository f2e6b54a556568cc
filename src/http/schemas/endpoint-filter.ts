import { z } from 'zod';
import { channelName, eventIdSchema, eventTypeName, tagName, WIRE_LIMITS } from './common.ts';

const FILTER_DESCRIPTION =
  'A JSON match over the message (docs/reference/api.md, "Payload filters"): field names (eventType, eventId, ' +
  "channels, tags, payload, then the payload's own fields, nested) with a value to equal or an object of " +
  'operators: $eq, $neq, $gt, $gte, $lt, $lte, $in, $nin, $exists, and $and, $or, $not. Bounded by ' +
  'TIDINGS_FILTER_MAX_BYTES, _DEPTH, _NODES and _PATH; a wrong part is 422 naming it under body.filter.';

/** A filter on the wire: any object; its grammar and bounds are checked by the domain (422 naming the part). */
const filter = z.record(z.string(), z.unknown()).describe(FILTER_DESCRIPTION);

/** `PUT …/endpoint/{ep}/filter`: the filter; `{}` clears it (every message its event types and channels select). */
export const endpointFilterIn = z.strictObject({ filter }).meta({ id: 'EndpointFilterIn' });

/** `GET|PUT …/endpoint/{ep}/filter`: the endpoint's filter, null = none. */
export const endpointFilterOut = z
  .object({ filter: z.record(z.string(), z.unknown()).nullable() })
  .meta({ id: 'EndpointFilterOut' });

/** A sample message: what a filter sees of a message. */
const sample = z
  .strictObject({
    eventType: eventTypeName,
    eventId: eventIdSchema.nullish(),
    channels: z.array(channelName).max(WIRE_LIMITS.channelsMax).nullish(),
    tags: z.array(tagName).max(WIRE_LIMITS.tagsMax).nullish(),
    payload: z.unknown().optional().describe('The JSON payload; absent = a raw message (payload conditions fail)'),
  })
  .meta({ id: 'FilterSampleMessage' });

/** `POST /api/v1/app/{app}/filter/test`: a filter and a sample message. */
export const filterTestIn = z.strictObject({ filter, message: sample }).meta({ id: 'FilterTestIn' });

/** Whether the filter matches the sample. */
export const filterTestOut = z
  .object({ matches: z.boolean().describe('The message would be delivered to an endpoint with this filter') })
  .meta({ id: 'FilterTestOut' });

/** `GET …/msg/{msg}/filtered-endpoint`: the endpoints the message skipped because of their payload filter. */
export const filteredEndpointsOut = z
  .object({
    data: z.array(
      z.object({
        endpointId: z.string(),
        url: z.string().nullable().describe('Null: the endpoint was deleted since'),
        description: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'FilteredEndpointsOut' });
