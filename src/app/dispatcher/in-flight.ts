import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import type { DeliveryTrace } from '../../ports/tracer.ts';

/** The window is refilled at once when 1/REFILL_FRACTION of it (or a claim batch) is free. */
const REFILL_FRACTION = 32;
/** Otherwise freed slots are refilled after this delay, in ms (batches small refills into one claim). */
export const REFILL_DELAY_MS = 10;

/** One attempt in flight: its lease, the way to abort it, and where its outcome stands. */
export interface Flight {
  readonly delivery: ClaimedDelivery;
  readonly controller: AbortController;
  /** Set when the lease was lost or handed back: the outcome must not be written. */
  abandoned: boolean;
  /** Set once the outcome is handed to the recorder: the heartbeat no longer renews it (it may already be written). */
  recording: boolean;
  done: Promise<void>;
  /** The delivery's span, from claim to record (the no-op trace when tracing is off). */
  readonly trace: DeliveryTrace;
}

/**
 * A dispatcher's in-flight window: at most `concurrency` attempts, one per delivery. The claim fills free
 * slots only; the per-endpoint share of the window is the {@link WindowBook} (window.ts).
 */
export interface InFlightWindow {
  /** Takes a slot for `delivery` (replacing an older flight of the same delivery: a reclaim by this dispatcher). */
  /** Adds the attempt of `delivery`, traced by `trace`. */
  add(delivery: ClaimedDelivery, trace: DeliveryTrace): Flight;
  /**
   * Frees the slot of a finished flight (unless a newer lease of the same delivery holds it) and wakes the
   * waiters of {@link InFlightWindow.drained} when the window is empty. Returns `'now'` when the loop should
   * claim at once (a useful part of the window is free, or all of it), else `'soon'` (refill after
   * {@link REFILL_DELAY_MS}, so slots freed one by one are refilled in small batches).
   */
  finish(flight: Flight): 'now' | 'soon';
  get(deliveryId: string): Flight | undefined;
  flights(): Flight[];
  /** The endpoint of each attempt in flight, one entry per attempt. */
  endpoints(): string[];
  size(): number;
  /** Free slots (`concurrency − size`, may be ≤ 0). */
  free(): number;
  /** Resolves when no attempt is in flight. */
  drained(): Promise<void>;
}

/** Makes an {@link InFlightWindow}. `concurrency` and `claimBatch` are counts (≥ 1). */
export function createInFlightWindow(settings: { readonly concurrency: number; readonly claimBatch: number }): InFlightWindow {
  const flights = new Map<string, Flight>();
  let drainWaiters: (() => void)[] = [];
  const refillAt = Math.min(settings.claimBatch, Math.max(1, Math.ceil(settings.concurrency / REFILL_FRACTION)));
  return {
    add(delivery, trace) {
      const flight: Flight = { delivery, controller: new AbortController(), abandoned: false, recording: false, done: Promise.resolve(), trace };
      flights.set(delivery.deliveryId, flight);
      return flight;
    },
    finish(flight) {
      // The entry may already belong to a newer lease of the same delivery (this dispatcher reclaimed it
      // while the stale outcome waited to be written): leave that one in place.
      if (flights.get(flight.delivery.deliveryId) === flight) flights.delete(flight.delivery.deliveryId);
      if (flights.size === 0) {
        const waiters = drainWaiters;
        drainWaiters = [];
        for (const w of waiters) w();
      }
      return settings.concurrency - flights.size >= refillAt || flights.size === 0 ? 'now' : 'soon';
    },
    get: (deliveryId) => flights.get(deliveryId),
    flights: () => [...flights.values()],
    endpoints: () => [...flights.values()].map((f) => f.delivery.endpointId),
    size: () => flights.size,
    free: () => settings.concurrency - flights.size,
    drained: () => (flights.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve))),
  };
}
