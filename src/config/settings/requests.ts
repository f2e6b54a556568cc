import { z } from 'zod';
import { int, durationMs, type SettingTable } from '../parse.ts';

/** Bounds of what a request may ask for or store: bodies, pages, searches, schemas, filters, idempotency. */
export const REQUEST_SETTINGS = {
  filterMaxBytes: {
    env: 'TIDINGS_FILTER_MAX_BYTES',
    schema: int(2, 65536),
    defaultValue: '4096',
    unit: 'bytes',
    description: 'Largest endpoint payload filter, as JSON text; larger → 422 naming filter.',
  },
  filterMaxDepth: {
    env: 'TIDINGS_FILTER_MAX_DEPTH',
    schema: int(1, 64),
    defaultValue: '8',
    unit: 'levels',
    description: 'Deepest nesting of objects and arrays in an endpoint payload filter; deeper → 422 naming the part.',
  },
  filterMaxNodes: {
    env: 'TIDINGS_FILTER_MAX_NODES',
    schema: int(1, 1000),
    defaultValue: '64',
    unit: 'nodes',
    description:
      'Most keys and list entries in an endpoint payload filter (its cost per message); more → 422 naming ' + 'filter.',
  },
  filterMaxPath: {
    env: 'TIDINGS_FILTER_MAX_PATH',
    schema: int(1, 64),
    defaultValue: '8',
    unit: 'fields',
    description:
      'Most field names along one path of an endpoint payload filter (payload.a.b = 3); more → 422 naming the ' +
      'field.',
  },
  operationalApp: {
    env: 'TIDINGS_OPERATIONAL_APP',
    schema: z.string().min(1).optional(),
    defaultValue: undefined,
    unit: 'app id or uid',
    description:
      'Application that receives operational webhooks (endpoint.disabled, endpoint.breaker_opened, ' +
      'endpoint.recovered, message.attempt.exhausted, message.attempt.failing); unset = none.',
  },
  maxBodyBytes: {
    env: 'TIDINGS_MAX_BODY_BYTES',
    schema: int(1024, 64 * 1024 * 1024),
    defaultValue: '1048576',
    unit: 'bytes',
    description: 'Largest API request body (a message payload included); larger → 413.',
  },
  maxJsonDepth: {
    env: 'TIDINGS_MAX_JSON_DEPTH',
    schema: int(8, 1_000_000),
    defaultValue: '128',
    unit: 'levels',
    description:
      'Deepest nesting of objects and arrays in an API request body, the body itself level 1 (a message ' +
      'payload included; Svix, on serde_json, stops at 128); deeper → 422 naming the setting and the part.',
  },
  maxPageBytes: {
    env: 'TIDINGS_MAX_PAGE_BYTES',
    schema: int(64 * 1024, 1024 * 1024 * 1024),
    defaultValue: '4194304',
    unit: 'bytes',
    description:
      'Most bytes of the items of one list answer (a page of messages with their payloads, of attempts with ' +
      'their response bodies, of endpoints…): the page ends early, with an iterator to the rest, once its ' +
      'items reach this; it always holds at least one item. Payloads past it are not read from the database.',
  },
  searchMaxWindowMs: {
    env: 'TIDINGS_SEARCH_MAX_WINDOW',
    schema: durationMs(60_000),
    defaultValue: '7d',
    unit: 'duration',
    description:
      "Widest window of time one search of the delivery log reads (the API's search routes: `after` to " +
      '`before`); a wider one is refused with 422 search_unbounded naming `after`. Search a longer stretch as ' +
      'several windows.',
  },
  searchScanRows: {
    env: 'TIDINGS_SEARCH_SCAN_ROWS',
    schema: int(10, 1_000_000),
    defaultValue: '5000',
    unit: 'rows',
    description:
      'Index rows one search request examines at most (messages, deliveries or attempts of its window, in ' +
      'order, before its filters choose among them); a page that reaches it ends early, possibly empty, with ' +
      'done=false and an iterator that resumes where it stopped.',
  },
  searchPayloadRows: {
    env: 'TIDINGS_SEARCH_PAYLOAD_ROWS',
    schema: int(1, 100_000),
    defaultValue: '500',
    unit: 'rows',
    description:
      'Payloads one search request decrypts at most to compare a payload field (payloads are encrypted at ' +
      'rest, so the database cannot compare them): the candidates its other filters kept, in order; a page ' +
      'that reaches it ends early with an iterator to the rest.',
  },
  searchPayloadBytes: {
    env: 'TIDINGS_SEARCH_PAYLOAD_BYTES',
    schema: int(64 * 1024, 1024 * 1024 * 1024),
    defaultValue: '8388608',
    unit: 'bytes',
    description:
      'Stored payload bytes one search request reads at most (plus one payload) to compare a payload field; ' +
      'past it the page ends early with an iterator to the rest.',
  },
  idempotencyTtlMs: {
    env: 'TIDINGS_IDEMPOTENCY_TTL',
    schema: durationMs(1000),
    defaultValue: '24h',
    unit: 'duration',
    description: 'How long an Idempotency-Key and its answer are kept.',
  },
  idempotencyWaitMs: {
    env: 'TIDINGS_IDEMPOTENCY_WAIT',
    schema: durationMs(1),
    defaultValue: '5s',
    unit: 'duration',
    description: 'How long a duplicate waits for the first request with its key before 409.',
  },
  maxSchemaBytes: {
    env: 'TIDINGS_MAX_SCHEMA_BYTES',
    schema: int(1024, 16 * 1024 * 1024),
    defaultValue: '16384',
    unit: 'bytes',
    description:
      'Largest JSON Schema of one event-type version (as JSON text); larger → 422. Compiling a schema blocks ' +
      'its process for about 1 ms per 30 bytes (ajv code generation), once per schema change and process: this ' +
      'cap bounds that stall.',
  },
  maxSchemaPatterns: {
    env: 'TIDINGS_MAX_SCHEMA_PATTERNS',
    schema: int(0, 100_000),
    defaultValue: '64',
    unit: 'patterns',
    description:
      'Most `pattern` / `patternProperties` regular expressions in one event-type schema; more → 422. Patterns ' +
      'run on a linear-time engine (RE2 syntax: no look-around, no back-references).',
  },
  maxSchemaUniqueItems: {
    env: 'TIDINGS_MAX_SCHEMA_UNIQUE_ITEMS',
    schema: int(0, 100_000),
    defaultValue: '100',
    unit: 'items',
    description:
      'An event-type schema whose `uniqueItems` applies to items not typed as strings, numbers, integers, ' +
      'booleans or null (which are compared two by two: 20,000 objects took 6.5 s) must bound them with a ' +
      '`maxItems` of at most this; otherwise → 422.',
  },
  maxEndpointsPerApp: {
    env: 'TIDINGS_MAX_ENDPOINTS_PER_APP',
    schema: int(1, 1_000_000),
    defaultValue: '100',
    unit: 'endpoints',
    description:
      'Most endpoints (not deleted) of one application, so one publish fans out to at most this many ' +
      'deliveries; one more → 409 endpoint_limit_reached.',
  },
  strictEventTypes: {
    env: 'TIDINGS_STRICT_EVENT_TYPES',
    schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
    defaultValue: 'false',
    unit: 'boolean',
    description:
      'As Svix: endpoint filterTypes / eventTypes must name registered, unarchived event types (422 ' +
      'otherwise). false: any name is accepted.',
  },
  deliverAtHorizonMs: {
    env: 'TIDINGS_DELIVER_AT_HORIZON',
    schema: durationMs(1000),
    defaultValue: '24h',
    unit: 'duration',
    description:
      "Furthest a message's deliverAt may lie in the future (Svix: 24 h); a later one is refused with 422. A " +
      'deliverAt in the past is delivered at once.',
  },
} satisfies SettingTable;
