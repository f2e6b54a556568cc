import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { holdOut, timelineEntryOut } from '../present.ts';
import { timelineOut, timelineQuery } from '../schemas/attempt.ts';
import { commonErrors, refParam } from '../schemas/common.ts';

/** A finite instant as ISO text; null for 'infinity' (a paused endpoint's deliveries wait forever). */
const finiteIso = (d: Date): string | null => (Number.isFinite(d.valueOf()) ? d.toISOString() : null);

/**
 * Tidings: `GET /api/v1/app/{app}/msg/{msg}/endpoint/{ep}/timeline` — the delivery of a message to an
 * endpoint, its current state, and its append-only timeline (docs/design.md#delivery-lifecycle), oldest first.
 */
export function registerTimeline(app: Api, deps: Pick<HttpDeps, 'queries'>): void {
  app.get(
    '/api/v1/app/:appId/msg/:msgId/endpoint/:endpointId/timeline',
    {
      schema: {
        tags: ['Delivery'],
        summary: 'Delivery timeline (Tidings)',
        params: z.object({ appId: refParam, msgId: refParam, endpointId: refParam }),
        querystring: timelineQuery,
        response: { 200: timelineOut, ...commonErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const p = request.params;
      const principal = principalOf(request);
      const { delivery, page } = await deps.queries.timeline(principal, p.appId, p.msgId, p.endpointId, {
        limit: q.limit,
        iterator: q.iterator ?? null,
        order: q.order,
      });
      return {
        deliveryState: delivery.state,
        attemptCount: delivery.attemptCount,
        nextAttemptAt: finiteIso(delivery.nextAttemptAt),
        ...holdOut(delivery),
        deadReason: delivery.deadReason,
        data: page.data.map((e) => timelineEntryOut(e, principal.kind === 'admin')),
        iterator: page.iterator,
        prevIterator: page.prevIterator,
        done: page.done,
      };
    },
  );
}
