import type { ClaimedDelivery, DeliveryStore } from '../../../ports/delivery-store.ts';
import type { TraceCarrier } from '../../../ports/tracer.ts';
import { prepared, type Queryable } from '../db.ts';

/*
 * TRACE_CONTEXTS — the stored W3C trace context (migrations/1764000009000_trace-context.sql) of the
 * messages of one claim. $1 message ids. Returns (id, trace_context) of those that have one. Index:
 * messages_pkey. Run only when tracing is on, once per non-empty claim.
 */
const TRACE_CONTEXTS = prepared(
  'tidings_trace_contexts',
  'SELECT id, trace_context FROM messages WHERE id = ANY ($1::text[]) AND trace_context IS NOT NULL',
);

/** A stored carrier, or null when the column holds something else. */
function carrierOf(value: unknown): TraceCarrier | null {
  if (typeof value !== 'object' || value === null) return null;
  const { traceparent, tracestate } = value as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string') return null;
  return typeof tracestate === 'string' && tracestate !== '' ? { traceparent, tracestate } : { traceparent };
}

/**
 * The delivery store whose claimed deliveries carry the trace context of their message
 * (`ClaimedDelivery.traceContext`), read by one primary-key lookup after each claim that returned
 * deliveries — the claim statement itself is unchanged. Wired only when tracing is on (docs/adr/0014-traces.md).
 * A failed lookup never fails the claim (its leases are taken): the deliveries go out without a link, and
 * `onError` is told.
 */
export function withTraceContexts(
  store: DeliveryStore,
  db: Queryable,
  onError: (error: unknown) => void,
): DeliveryStore {
  return {
    ...store,
    async claim(input) {
      const result = await store.claim(input);
      if (result.deliveries.length === 0) return result;
      const ids = [...new Set(result.deliveries.map((d) => d.messageId))];
      let rows: { id: string; trace_context: unknown }[];
      try {
        rows = (await db.query<{ id: string; trace_context: unknown }>(TRACE_CONTEXTS, [ids])).rows;
      } catch (error) {
        onError(error);
        return result;
      }
      if (rows.length === 0) return result;
      const byMessage = new Map(rows.map((r) => [r.id, carrierOf(r.trace_context)]));
      const deliveries = result.deliveries.map((d): ClaimedDelivery =>
        byMessage.has(d.messageId) ? { ...d, traceContext: byMessage.get(d.messageId) ?? null } : d,
      );
      return { ...result, deliveries };
    },
  };
}
