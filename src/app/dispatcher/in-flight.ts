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
  /** Set while the delivery, claimed ahead, waits for a slot: its request has not started. */
  waiting: boolean;
  /**
   * When the lease ends at the latest, in ms of the dispatcher's clock (`Clock.nowMs`): the instant before
   * the claim (or the heartbeat that renewed it) plus the lease.
   */
  leaseUntilMs: number;
  done: Promise<void>;
  /** The delivery's span, from claim to record (the no-op trace when tracing is off). */
  readonly trace: DeliveryTrace;
}

/**
 * Settings of {@link createInFlightWindow}: counts (`concurrency`, `claimBatch` ≥ 1, `claimAheadCount` ≥ 0, default 0).
 */
export interface InFlightSettings {
  readonly concurrency: number;
  readonly claimBatch: number;
  readonly claimAheadCount?: number;
}

/**
 * A dispatcher's in-flight window: at most `concurrency` requests in flight, one per delivery. A flight holds
 * its slot while its request is open; once the request is answered (`sent`) the slot is free for the next
 * claim while the outcome waits to be written, so the time a record takes does not idle the window. The
 * lease stays held (and the flight listed) until the outcome is written (`finish`); open requests and
 * outcomes waiting together are at most 2 × `concurrency`, so a dispatcher holds at most that many leases,
 * plus those claimed ahead.
 *
 * Up to `claimAheadCount` deliveries are claimed ahead of free slots and wait (`waiting`) for one: a slot freed by
 * an answer opens the next waiting request at once, without waiting for a claim's round trip
 * (docs/adr/0016-hot-path-cost.md, decision 16). A waiting delivery opens its request only when `mayStart`
 * says so (the per-endpoint share and the reserve over open requests, window.ts). The per-endpoint share
 * of a claim is the {@link WindowBook} (window.ts), counted over open and waiting requests.
 */
export interface InFlightWindow {
  /**
   * Adds the attempt of `delivery`, traced by `trace`, with its lease ending at `leaseUntilMs` (replacing an
   * older flight of the same delivery: a reclaim by this dispatcher). The flight opens its request at once
   * (`waiting` false) when a slot is free and `mayStart` allows it, else it waits.
   */
  add(delivery: ClaimedDelivery, trace: DeliveryTrace, leaseUntilMs: number): Flight;
  /**
   * The flight's request is over (answered, failed or aborted): its slot is free for a waiting delivery or
   * the next claim; the flight stays listed until {@link InFlightWindow.finish}.
   */
  sent(flight: Flight): void;
  /**
   * When the loop should claim after answers freed slots (and {@link InFlightWindow.next} filled what it
   * could): `'now'` when every slot is taken, deliveries are claimed ahead and no more than half of them are
   * left waiting, so the next claim returns before they run out; else `'soon'`: slots freed by answers are refilled
   * after {@link REFILL_DELAY_MS} or when a written batch of outcomes wakes the loop, whichever comes first, so
   * that answers arriving one by one do not each start a claim.
   */
  answered(): 'now' | 'soon';
  /**
   * The next waiting flight that may open its request now (a slot is free and `mayStart` allows it), its
   * slot taken; undefined when there is none. Abandoned waiting flights are passed over (their owner
   * finishes them).
   */
  next(): Flight | undefined;
  /**
   * Frees the slot of a finished flight, or its place among the waiting ones (unless a newer lease of the same
   * delivery holds it) and wakes the waiters of {@link InFlightWindow.drained} when the window is empty.
   * Returns `'now'` when the loop should claim at once (a useful part of the window's slots is free beyond
   * the waiting deliveries, or all of it, or every slot is taken and half of what is claimed ahead is gone),
   * else `'soon'` (refill after {@link REFILL_DELAY_MS}, so slots freed one by one are refilled in small batches).
   */
  finish(flight: Flight): 'now' | 'soon';
  get(deliveryId: string): Flight | undefined;
  flights(): Flight[];
  /** The endpoint of each open or waiting request, one entry per request. */
  endpoints(): string[];
  /** Flights listed: open requests, waiting ones and outcomes waiting to be written. */
  size(): number;
  /** Open requests. */
  sending(): number;
  /**
   * What the next claim may take: `min(concurrency + claimAheadCount − open − waiting, 2 × concurrency +
   * claimAheadCount − size)` (may be ≤ 0); 0 while every slot is taken and more than half of `claimAheadCount` is
   * waiting (a claim then would be a small one, and the waiting deliveries cover the next answers).
   */
  free(): number;
  /** Resolves when no attempt is in flight. */
  drained(): Promise<void>;
}

/**
 * Makes an {@link InFlightWindow}. `mayStart(endpointId, open)` decides whether a delivery of that endpoint
 * may open a request given the open requests per endpoint; default: always.
 */
export function createInFlightWindow(
  settings: InFlightSettings,
  mayStart: (endpointId: string, open: ReadonlyMap<string, number>) => boolean = () => true,
): InFlightWindow {
  const flights = new Map<string, Flight>();
  const open = new Set<Flight>();
  const openBy = new Map<string, number>();
  const waiting: Flight[] = [];
  const ahead = settings.claimAheadCount ?? 0;
  let drainWaiters: (() => void)[] = [];
  const refillAt = Math.min(settings.claimBatch, Math.max(1, Math.ceil(settings.concurrency / REFILL_FRACTION)));
  // Claims ahead wait until no more than this many deliveries are waiting while every slot is taken.
  const lowWater = Math.floor(ahead / 2);
  const free = (): number => {
    if (ahead > 0 && open.size >= settings.concurrency && waiting.length > lowWater) return 0;
    return Math.min(
      settings.concurrency + ahead - open.size - waiting.length,
      2 * settings.concurrency + ahead - flights.size,
    );
  };
  // Every slot taken and no more than half of what is claimed ahead left waiting: claim now, before it runs out.
  const lowOnWaiting = (): boolean =>
    ahead > 0 && open.size >= settings.concurrency && waiting.length <= lowWater && free() > 0;
  // Otherwise what counts is free slots, not the room for claiming ahead: a claim per answer costs CPU.
  const refill = (): 'now' | 'soon' =>
    Math.min(settings.concurrency - open.size - waiting.length, free()) >= refillAt ||
    flights.size === 0 ||
    lowOnWaiting()
      ? 'now'
      : 'soon';
  const opened = (flight: Flight): void => {
    flight.waiting = false;
    open.add(flight);
    const id = flight.delivery.endpointId;
    openBy.set(id, (openBy.get(id) ?? 0) + 1);
  };
  const closed = (flight: Flight): void => {
    if (!open.delete(flight)) return;
    const id = flight.delivery.endpointId;
    const n = (openBy.get(id) ?? 1) - 1;
    if (n === 0) openBy.delete(id);
    else openBy.set(id, n);
  };
  const canOpen = (flight: Flight): boolean =>
    open.size < settings.concurrency && mayStart(flight.delivery.endpointId, openBy);
  return {
    add(delivery, trace, leaseUntilMs) {
      const flight: Flight = {
        delivery,
        controller: new AbortController(),
        abandoned: false,
        recording: false,
        waiting: true,
        leaseUntilMs,
        done: Promise.resolve(),
        trace,
      };
      flights.set(delivery.deliveryId, flight);
      if (canOpen(flight)) opened(flight);
      else waiting.push(flight);
      return flight;
    },
    sent(flight) {
      closed(flight);
    },
    answered: () => (lowOnWaiting() ? 'now' : 'soon'),
    next() {
      if (open.size >= settings.concurrency) return undefined;
      const i = waiting.findIndex((f) => !f.abandoned && canOpen(f));
      if (i < 0) return undefined;
      const [flight] = waiting.splice(i, 1);
      opened(flight!);
      return flight;
    },
    finish(flight) {
      closed(flight);
      if (flight.waiting) {
        const i = waiting.indexOf(flight);
        if (i >= 0) waiting.splice(i, 1);
      }
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
    endpoints: () => [...open, ...waiting].map((f) => f.delivery.endpointId),
    size: () => flights.size,
    sending: () => open.size,
    free,
    drained: () =>
      flights.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve)),
  };
}
