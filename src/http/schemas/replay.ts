import { z } from 'zod';
import {
  channelName,
  eventTypeName,
  idIterator,
  listQuery,
  listResponse,
  refParam,
  rfc3339Instant,
  tagName,
  WIRE_LIMITS,
} from './common.ts';

/** An RFC 3339 instant in a request body, as a Date. */
const instant = rfc3339Instant;

/** A window on message creation: [since, until); until absent = unbounded. */
const window = {
  since: instant.describe('Messages created at or after this instant'),
  until: instant.nullish().describe('Messages created before this instant (absent = no upper bound)'),
};

/** Svix `RecoverIn`. */
export const recoverIn = z.strictObject(window).meta({ id: 'RecoverIn' });

/** Svix `ReplayIn` (replay-missing). */
export const replayIn = z.strictObject(window).meta({ id: 'ReplayIn' });

/** Svix `StatusCodeClass`: 0 (no response), 100, 200, 300, 400, 500. */
const statusCodeClass = z
  .number()
  .int()
  .refine((n) => [0, 100, 200, 300, 400, 500].includes(n), 'must be 0, 100, 200, 300, 400 or 500');

/**
 * Svix `BulkReplayIn`. `status`: 0 success → succeeded deliveries, 2 fail → dead ones, 4 canceled → skipped
 * ones, absent → dead and succeeded (Svix: "both successful and failed"); 1 and 3 (pending, sending) select
 * nothing to replay. `statusCodeClass` filters on the last attempt's status.
 */
export const bulkReplayIn = z
  .strictObject({
    ...window,
    eventTypes: z.array(eventTypeName).max(WIRE_LIMITS.eventTypesMax).nullish(),
    channel: channelName.nullish(),
    tag: tagName.nullish(),
    status: z.number().int().min(0).max(4).nullish(),
    statusCodeClass: statusCodeClass.nullish(),
  })
  .meta({ id: 'BulkReplayIn' });

/** Tidings: `POST /app/{app}/dead-letter/replay` — dead letters by endpoint, event types and window, paced. */
export const deadLetterReplayIn = z
  .strictObject({
    ...window,
    endpointId: refParam.nullish().describe('One endpoint (id or uid); absent = every endpoint of the application'),
    eventTypes: z.array(eventTypeName).max(WIRE_LIMITS.eventTypesMax).nullish(),
  })
  .meta({ id: 'DeadLetterReplayIn' });

/** Svix `BackgroundTaskStatus`. */
const taskStatus = z.enum(['running', 'finished', 'failed']);

const taskData = z
  .record(z.string(), z.unknown())
  .describe(
    'Progress of a replay task: messagesSent (queued to be sent again), scanned, alreadyQueued, expunged, ' +
      'unavailable ' +
      '(endpoint deleted or disabled), error (why it failed); for a task of one endpoint, held (its pending ' +
      'deliveries in the ' +
      'window that wait behind the endpoint rather than their schedule: a recover selects dead letters only, ' +
      'so it neither ' +
      'sends these again nor counts them as queued; counted when the task starts and again when it finishes), heldBy ' +
      '({paused, breaker, throttled}: held by what holds them) and heldUntil (ISO-8601, the latest end of ' +
      'those holds that has ' +
      'one; null when none has) — null for a task over a whole application',
  );

/**
 * Svix `RecoverOut` / `ReplayOut`: the task that was started (202), plus Tidings' `data` (as the background task's).
 */
export const taskStartedOut = z
  .object({
    id: z.string(),
    status: taskStatus,
    task: z.string().describe('endpoint.recover, endpoint.replay, endpoint.bulk-replay, dead-letter.replay (Tidings)'),
    updatedAt: z.string(),
    data: taskData,
  })
  .meta({ id: 'RecoverOut' });

/** Svix `BackgroundTaskOut`; `data` as in {@link taskStartedOut}. */
export const backgroundTaskOut = z
  .object({
    id: z.string(),
    status: taskStatus,
    task: z.string(),
    data: taskData,
    updatedAt: z.string(),
  })
  .meta({ id: 'BackgroundTaskOut' });

export const backgroundTaskList = listResponse(backgroundTaskOut).meta({ id: 'ListResponseBackgroundTaskOut' });

/** `GET /api/v1/background-task` query (Svix): status, task, and paging by id. */
export const backgroundTaskListQuery = listQuery(idIterator('qtask'), 'descending').extend({
  status: taskStatus.optional(),
  task: z.string().min(1).max(WIRE_LIMITS.nameMaxLength).optional(),
});
