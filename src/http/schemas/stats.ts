import { z } from 'zod';
import { STATS_WINDOWS } from '../../app/stats.ts';
import { refParam } from './common.ts';

/** Query of `GET /api/v1/stats/overview`: an application (id or uid) to narrow to. */
export const overviewQuery = z.object({
  app_id: refParam
    .optional()
    .describe("Application id or uid; absent = the whole installation (operators) or the credential's application"),
});

/** Query of `GET /api/v1/stats/time-in-state`. */
export const timeInStateQuery = z.object({
  window: z
    .enum(Object.keys(STATS_WINDOWS) as [keyof typeof STATS_WINDOWS, ...(keyof typeof STATS_WINDOWS)[]])
    .default('1h')
    .describe('5m (10 s buckets), 1h (1 min buckets), 24h (15 min buckets) or 7d (2 h buckets)'),
  app_id: refParam.optional().describe('Application id or uid'),
  endpoint_id: refParam
    .optional()
    .describe("Endpoint id or uid (with app_id, unless the credential is an application's)"),
});

const count = z.number().int().min(0);

/** Overview of the installation or one application. */
export const overviewOut = z.object({
  appId: z.string().nullable().describe('The application covered; null = the whole installation'),
  deliveries: z
    .object({ pending: count, leased: count, succeeded: count, dead: count, skipped: count, canceled: count })
    .describe('Deliveries by state'),
  backlog: z.object({
    dueNow: count.describe(
      'Pending deliveries whose due time has come and that no hold of their endpoint keeps back (they go ' +
        'as soon as a dispatcher has room)',
    ),
    oldestDueAgeMs: z
      .number()
      .int()
      .min(0)
      .nullable()
      .describe('now − due time of the oldest of dueNow, ms; null when none is due'),
    leasedInFlight: count.describe('Leased deliveries whose lease is live (attempts in flight)'),
    scheduledLater: count.describe('Pending deliveries due later (retries in back-off)'),
    held: count.describe(
      'Pending deliveries held back by their endpoint: every one of a paused endpoint, and those due now ' +
        "whose endpoint's breaker is open or half-open or that a receiver's Retry-After throttles (the sum of heldBy)",
    ),
    heldBy: z
      .object({
        paused: count.describe('Deliveries of paused endpoints'),
        breaker: count.describe(
          'Due deliveries of endpoints whose breaker is open or half-open (at most one of each such ' +
            'endpoint goes, as its probe, once the cool-down ends)',
        ),
        throttled: count.describe("Due deliveries of endpoints held back by a receiver's Retry-After"),
      })
      .describe('held, by what holds them'),
  }),
  deadLettersLast24h: count.describe('Transitions into dead during the last 24 h'),
  openBreakers: z
    .object({ count, endpointIds: z.array(z.string()).describe('At most 20, oldest breaker change first') })
    .describe('Endpoints whose breaker is open or half-open'),
  runningTasks: count.describe('Background tasks still running'),
});

const percentiles = z
  .object({ p50: z.number().nullable(), p90: z.number().nullable(), p99: z.number().nullable(), count })
  .describe(
    'p50/p90/p99 in ms (null without samples) and the exact number of samples. The percentiles are estimated ' +
      'from a fixed log-scale histogram (whole milliseconds up to 15 ms, then buckets 2^(1/8) ≈ 9 % wide): each ' +
      'is within 4.6 % (half a bucket) of the exact linear-interpolation percentile of the same samples, and ' +
      'exact up to 15 ms (docs/adr/0015-time-in-state-rollups.md)',
  );

/**
 * Time-in-state figures over a window, derived from the delivery timeline through its rollups: counts and
 * the series are exact, percentiles within 4.6 % (docs/adr/0015-time-in-state-rollups.md).
 */
export const timeInStateOut = z.object({
  window: z.string(),
  since: z.string().describe('Start of the window (exclusive), ISO-8601'),
  until: z.string().describe('End of the window (inclusive), ISO-8601'),
  bucketMs: z.number().int().describe('Width of one series bucket, ms'),
  appId: z.string().nullable(),
  endpointId: z.string().nullable(),
  queueWaitMs: percentiles.describe('Claim instant − due time of each claim of a due delivery, ms'),
  attemptLatencyMs: percentiles.describe('Duration of each recorded attempt, ms'),
  timeToDeliveredMs: percentiles.describe('Publish → success of each delivery that succeeded in the window, ms'),
  attempts: count,
  succeeded: count,
  retriesScheduled: count.describe('Attempts whose outcome was a scheduled retry'),
  retryRate: z.number().nullable().describe('retriesScheduled / attempts; null without attempts'),
  deadLetterInflow: count.describe('Transitions into dead'),
  reclaims: count.describe('Claims of an expired lease'),
  series: z
    .array(
      z.object({ at: z.string().describe('Bucket start, ISO-8601'), attempts: count, succeeded: count, failed: count }),
    )
    .describe('Attempts per bucket, oldest first, zero-filled'),
});
