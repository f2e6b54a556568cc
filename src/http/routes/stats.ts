import type { z } from 'zod';
import type { TimeInStateResult } from '../../app/stats.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors } from '../schemas/common.ts';
import { overviewOut, overviewQuery, timeInStateOut, timeInStateQuery } from '../schemas/stats.ts';

function presentTimeInState(r: TimeInStateResult): z.infer<typeof timeInStateOut> {
  return {
    window: r.window,
    since: r.since.toISOString(),
    until: r.until.toISOString(),
    bucketMs: r.bucketMs,
    appId: r.appId,
    endpointId: r.endpointId,
    queueWaitMs: r.queueWaitMs,
    attemptLatencyMs: r.attemptLatencyMs,
    timeToDeliveredMs: r.timeToDeliveredMs,
    attempts: r.attempts,
    succeeded: r.succeeded,
    retriesScheduled: r.retriesScheduled,
    retryRate: r.attempts === 0 ? null : r.retriesScheduled / r.attempts,
    deadLetterInflow: r.deadLetterInflow,
    reclaims: r.reclaims,
    series: r.series.map((p) => ({
      at: p.at.toISOString(),
      attempts: p.attempts,
      succeeded: p.succeeded,
      failed: p.failed,
    })),
  };
}

/**
 * Tidings statistics (docs/adr/0013-observability.md), for the console and for operators:
 * `GET /api/v1/stats/overview` (deliveries by state, backlog, dead letters of the last 24 h, open
 * breakers, running tasks) and `GET /api/v1/stats/time-in-state` (percentiles of queue wait, attempt
 * latency and time to delivered, retry rate, dead-letter inflow, reclaims and an attempts series over
 * 5 min / 1 h / 24 h / 7 d, from the rollups of the delivery timeline: docs/adr/0015-time-in-state-rollups.md).
 * Operators see the installation or, with `app_id`, one application; an application credential sees only its own
 * application.
 */
export function registerStats(app: Api, deps: Pick<HttpDeps, 'stats'>): void {
  app.get(
    '/api/v1/stats/overview',
    {
      schema: {
        tags: ['Stats'],
        summary: 'Delivery overview (Tidings)',
        querystring: overviewQuery,
        response: { 200: overviewOut, ...commonErrors },
      },
    },
    async (request) => {
      const o = await deps.stats.overview(principalOf(request), { appRef: request.query.app_id ?? null });
      return { ...o, openBreakers: { count: o.openBreakers.count, endpointIds: [...o.openBreakers.endpointIds] } };
    },
  );

  app.get(
    '/api/v1/stats/time-in-state',
    {
      schema: {
        tags: ['Stats'],
        summary: 'Time-in-state over a window (Tidings)',
        description:
          'Read from per-second to per-15-minute rollups of the delivery timeline plus the raw rows not rolled ' +
          'up yet, so it answers in milliseconds at a million timeline rows. Counts, retry rate and the series ' +
          'are exact; p50/p90/p99 are estimated from fixed log-scale histograms, within 4.6 % of the exact ' +
          "figures (exact up to 15 ms). A 7d window starts at the 15-minute roll-up's boundary at or before " +
          "`until` − 7 days, so it may cover up to 15 minutes more than asked: the answer's `since` (excluded) " +
          'is 1 ms before that boundary; the shorter windows start exactly `until` − window.',
        querystring: timeInStateQuery,
        response: { 200: timeInStateOut, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      return presentTimeInState(
        await deps.stats.timeInState(principalOf(request), q.window, {
          appRef: q.app_id ?? null,
          endpointRef: q.endpoint_id ?? null,
        }),
      );
    },
  );
}
