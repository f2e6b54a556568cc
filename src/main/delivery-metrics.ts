import type { DeliveryStoreObserver } from '../adapters/postgres/delivery/delivery-store.ts';
import type { Metrics } from '../observability/metrics.ts';

/**
 * The delivery store's hooks that feed the flow counters and time histograms (docs/reference/metrics.md):
 * each outcome a record statement wrote is observed once, after its commit, so a fenced-out write counts
 * nothing. Times are the database clock's: record instant − publish / − due time, less the attempt's own
 * duration where the start of the attempt is meant.
 */
export function deliveryStoreMetrics(metrics: Metrics): DeliveryStoreObserver {
  return {
    recorded(written, statementRows) {
      metrics.recordBatchSize.observe(statementRows);
      for (const o of written) {
        const started = (ms: number): number => Math.max(0, ms - o.record.durationMs) / 1000;
        if (o.record.trigger === 'scheduled') metrics.queueWait.observe(started(o.sinceDueMs));
        if (o.record.attemptNumber === 1) metrics.publishToFirstAttempt.observe(started(o.sincePublishMs));
        if (o.state === 'succeeded') metrics.publishToDelivered.observe(o.sincePublishMs / 1000);
      }
    },
    endpointEvents(events) {
      for (const e of events) {
        if (e.type === 'endpoint.breaker_opened') metrics.breakerTransitions.inc({ to: 'open' });
        else if (e.type === 'endpoint.recovered') metrics.breakerTransitions.inc({ to: 'closed' });
        else if (e.type === 'endpoint.disabled')
          metrics.endpointsDisabled.inc({ trigger: String((e.data as { trigger?: unknown }).trigger ?? 'automatic') });
      }
    },
  };
}
