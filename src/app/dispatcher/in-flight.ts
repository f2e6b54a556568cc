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
 * A dispatcher's in-flight window: at most `concurrency` requests in flight, one per delivery. A flight holds
 * its slot while its request is open; once the request is answered (`sent`) the slot is free for the next
 * claim while the outcome waits to be written, so the time a record takes does not idle the window. The
 * lease stays held (and the flight listed) until the outcome is written (`finish`); open requests and
 * outcomes waiting together are at most 2 × `concurrency`, so a dispatcher holds at most that many leases.
 * The claim fills free slots only; the per-endpoint share of the window is the {@link WindowBook}
 * (window.ts), counted over open requests.
 */
export interface InFlightWindow {
  /** Takes a slot for `delivery` (replacing an older flight of the same delivery: a reclaim by this dispatcher). */
  /** Adds the attempt of `delivery`, traced by `trace`. */
  add(delivery: ClaimedDelivery, trace: DeliveryTrace): Flight;
  /**
   * The flight's request is over (answered, failed or aborted): its slot is free for the next claim, the
   * flight stays listed until {@link InFlightWindow.finish}. Returns `'soon'`: slots freed by answers are
   * refilled after {@link REFILL_DELAY_MS} or when a written batch of outcomes wakes the loop, whichever
   * comes first, so that answers arriving one by one do not each start a claim.
   */
  sent(flight: Flight): 'now' | 'soon';
  /**
   * Frees the slot of a finished flight (unless a newer lease of the same delivery holds it) and wakes the
   * waiters of {@link InFlightWindow.drained} when the window is empty. Returns `'now'` when the loop should
   * claim at once (a useful part of the window is free, or all of it), else `'soon'` (refill after
   * {@link REFILL_DELAY_MS}, so slots freed one by one are refilled in small batches).
   */
  finish(flight: Flight): 'now' | 'soon';
  get(deliveryId: string): Flight | undefined;
  flights(): Flight[];
  /** The endpoint of each open request, one entry per request. */
  endpoints(): string[];
  /** Flights listed: open requests and outcomes waiting to be written. */
  size(): number;
  /** Open requests. */
  sending(): number;
  /** Free slots: `min(concurrency − open requests, 2 × concurrency − size)` (may be ≤ 0). */
  free(): number;
  /** Resolves when no attempt is in flight. */
  drained(): Promise<void>;
}

/** Makes an {@link InFlightWindow}. `concurrency` and `claimBatch` are counts (≥ 1). */
export function createInFlightWindow(settings: { readonly concurrency: number; readonly claimBatch: number }): InFlightWindow {
  const flights = new Map<string, Flight>();
  const open = new Set<Flight>();
  let drainWaiters: (() => void)[] = [];
  const refillAt = Math.min(settings.claimBatch, Math.max(1, Math.ceil(settings.concurrency / REFILL_FRACTION)));
  const free = (): number => Math.min(settings.concurrency - open.size, 2 * settings.concurrency - flights.size);
  const refill = (): 'now' | 'soon' => (free() >= refillAt || flights.size === 0 ? 'now' : 'soon');
  return {
    add(delivery, trace) {
      const flight: Flight = { delivery, controller: new AbortController(), abandoned: false, recording: false, done: Promise.resolve(), trace };
      flights.set(delivery.deliveryId, flight);
      open.add(flight);
      return flight;
    },
    sent(flight) {
      open.delete(flight);
      return 'soon';
    },
    finish(flight) {
      open.delete(flight);
      // The entry may already belong to a newer lease of the same delivery (this dispatcher reclaimed it
      // while the stale outcome waited to be written): leave that one in place.
      if (flights.get(flight.delivery.deliveryId) === flight) flights.delete(flight.delivery.deliveryId);
      if (flights.size === 0) {
        const waiters = drainWaiters;
        drainWaiters = [];
        for (const w of waiters) w();
      }
      return refill();
    },
    get: (deliveryId) => flights.get(deliveryId),
    flights: () => [...flights.values()],
    endpoints: () => [...open].map((f) => f.delivery.endpointId),
    size: () => flights.size,
    sending: () => open.size,
    free,
    drained: () => (flights.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve))),
  };
}
