import type { Classification, SendResult } from '../domain/attempt-outcome.ts';
import type { NextStep } from '../domain/retry-schedule.ts';
import type { ClaimedDelivery } from './delivery-store.ts';
import type { TraceCarrier } from './trace-carrier.ts';

export type { TraceCarrier } from './trace-carrier.ts';

/**
 * The trace of one delivery, from its claim to its record (docs/reference/traces.md). Every method is
 * cheap and never throws; the no-op one ({@link NOOP_DELIVERY_TRACE}) does nothing and allocates nothing.
 */
export interface DeliveryTrace {
  /** The HTTP attempt starts: opens the attempt span (a child of the delivery span). */
  attemptStarted(): void;
  /** The HTTP attempt ended: closes the attempt span with its status code or error kind. */
  attemptEnded(result: SendResult, classification: Classification): void;
  /** The heartbeat lost this delivery's lease: an event `tidings.lease_lost`. */
  leaseLost(): void;
  /** The outcome was handed to the recorder: `recorded` false adds the event `tidings.fenced_out`. */
  recorded(next: NextStep, recorded: boolean): void;
  /** Ends the delivery span (and an attempt span still open). Called once, last. */
  end(): void;
}

/** Makes traces; the no-op one ({@link NOOP_TRACER}) is the default when tracing is off. */
export interface Tracer {
  /** True when spans are recorded and exported (OTEL_* configured); false for the no-op tracer. */
  readonly enabled: boolean;
  /** The W3C trace context of the span active now (the publish request's), or null when none records. */
  activeContext(): TraceCarrier | null;
  /**
   * Starts the span of one claimed delivery: a new trace linked to `delivery.traceContext` (the publish
   * span), with the event `tidings.reclaimed` when the claim took over an expired lease.
   */
  startDelivery(delivery: ClaimedDelivery): DeliveryTrace;
}

const nothing = (): void => undefined;

/** The trace of a delivery when tracing is off: every method does nothing. */
export const NOOP_DELIVERY_TRACE: DeliveryTrace = Object.freeze({
  attemptStarted: nothing,
  attemptEnded: nothing,
  leaseLost: nothing,
  recorded: nothing,
  end: nothing,
});

/** The tracer when tracing is off: no context, no spans, no allocation. */
export const NOOP_TRACER: Tracer = Object.freeze({
  enabled: false,
  activeContext: () => null,
  startDelivery: () => NOOP_DELIVERY_TRACE,
});
