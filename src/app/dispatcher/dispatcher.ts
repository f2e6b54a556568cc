import type { RetryPolicy } from '../../domain/retry-schedule.ts';
import type { Clock, Random } from '../../ports/clock.ts';
import type { ClaimedDelivery, DeliveryStore } from '../../ports/delivery-store.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Sender } from '../../ports/sender.ts';
import { NOOP_TRACER, type Tracer } from '../../ports/tracer.ts';
import { runAttempt, type AttemptResult } from './attempt.ts';
import type { SignatureHeaderSet } from '../../domain/signing.ts';
import { logAttempt } from './attempt-line.ts';
import { systemTimers, type LoopTimers } from './loop-timers.ts';
import { createInFlightWindow, REFILL_DELAY_MS, type Flight } from './in-flight.ts';
import { createRecorder, type Recorder } from './recorder.ts';
import { createWindowBook } from './window.ts';
import type { Handoff, HandoffOffer } from '../../ports/handoff.ts';

/**
 * Most endpoints one hand-off offer lists (the most recently answering first): the publish statement receives them as
 * an array parameter, so the list stays short; deliveries to the others are claimed.
 */
export const HANDOFF_MAX_ENDPOINTS = 64;

/**
 * Delay, in ms, of the claim that refills slots freed by deliveries a publish handed off (ADR 0018), while no claim is
 * owed: the last claim found nothing, was cut by no endpoint's share nor by the reserve, and no publish wake-up,
 * hand-back or failed claim came since it started. Such a claim can only find what time made claimable (a retry come
 * due, a rate limit's tokens, a throttle or breaker ended), so it comes at most this often instead of after every
 * answer (REFILL_DELAY_MS); a claim that is owed comes as before (docs/adr/0016-hot-path-cost.md, decision 22).
 */
export const HANDOFF_REFILL_DELAY_MS = 100;

/** Settings of a dispatcher. Durations in ms. */
export interface DispatcherSettings {
  readonly dispatcherId: string;
  /** Requests in flight at most; claims fill free slots, plus `claimAhead` waiting for one. */
  readonly concurrency: number;
  /** Most deliveries per claim statement. */
  readonly claimBatch: number;
  readonly leaseMs: number;
  readonly maxReclaims: number;
  readonly pollIntervalMs: number;
  readonly shutdownGraceMs: number;
  /**
   * Deliveries claimed ahead of free slots (a count ≥ 0; default 0): each waits for a slot, which an answer
   * frees and the next waiting delivery takes at once (in-flight.ts; docs/adr/0016-hot-path-cost.md,
   * decision 16). From TIDINGS_CLAIM_AHEAD.
   */
  readonly claimAhead?: number;
  /**
   * The attempt deadline (TIDINGS_ATTEMPT_DEADLINE), ms: a delivery claimed ahead opens its request only while
   * its lease has at least this plus 1 s left (the start-up rule of TIDINGS_LEASE), else its lease is handed
   * back. Default `leaseMs − 1000`, the largest deadline that rule allows.
   */
  readonly attemptDeadlineMs?: number;
  /**
   * Most of this dispatcher's window one endpoint may hold, as a fraction of `concurrency` (0–1]: a slow or
   * black-holed endpoint cannot take every slot. Default: TIDINGS_ENDPOINT_WINDOW_SHARE's in the config schema.
   */
  readonly endpointWindowShare?: number;
  /**
   * Part of the window, as a fraction of `concurrency` [0–1), kept for endpoints that are answering: the
   * endpoints not known to answer (unresponsive, or not yet attempted by this dispatcher) together hold at
   * most the rest, so several black-holed endpoints cannot take the whole window (ADR 0009). Default:
   * TIDINGS_WINDOW_RESERVE's in the config schema;
   * at least one slot when `concurrency` ≥ 2 and the fraction is above 0.
   */
  readonly windowReserve?: number;
  readonly retryPolicy: RetryPolicy;
  /** Signature headers each request carries (TIDINGS_SIGNATURE_HEADERS); default `both`. */
  readonly signatureHeaders?: SignatureHeaderSet;
}

/** Hooks for metrics; every one optional. */
export interface DispatcherObserver {
  claimed?(count: number, reclaimed: number): void;
  deadLettered?(count: number, reason: string): void;
  attempted?(result: AttemptResult, recorded: boolean): void;
  fencedOut?(count: number): void;
  leasesLost?(count: number): void;
  storeError?(error: unknown, during: 'claim' | 'record' | 'heartbeat' | 'release'): void;
  inFlight?(count: number): void;
}

/** Dependencies of {@link createDispatcher}. `onWake` subscribes to publish wake-ups (NOTIFY or in-process). */
export interface DispatcherDeps {
  readonly store: DeliveryStore;
  readonly sender: Sender;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  /**
   * Logger of the one line per attempt (`attemptLine`, attempt-line.ts); default `logger`. It may skip redaction: that
   * line holds only ids, numbers and flags (src/app/dispatcher/attempt-line.test.ts keeps it so).
   */
  readonly attemptLogger?: Logger;
  readonly settings: DispatcherSettings;
  readonly observer?: DispatcherObserver;
  readonly onWake?: (listener: () => void) => () => void;
  /** The loop's timers; default {@link systemTimers}. */
  readonly timers?: LoopTimers;
  /** Delivery and attempt spans (docs/reference/traces.md); default the no-op tracer. */
  readonly tracer?: Tracer;
}

/**
 * The dispatcher role: a thin loop over the store and sender ports (see {@link createDispatcher}). As a {@link Handoff}
 * it offers room in its window to the publishes of its own process and runs the deliveries they lease to it
 * (docs/adr/0018-publish-hands-off-leases.md).
 */
export interface Dispatcher extends Handoff {
  /** Starts the loop: claim into free slots, poll, wake on NOTIFY, heartbeat, back off on store errors. */
  start(): void;
  /**
   * Graceful stop: stop claiming; let in-flight attempts finish within the grace period; abort the rest and
   * release their leases (fenced); resolves when nothing is in flight.
   */
  stop(): Promise<void>;
  /** One claim into the free slots; launches the attempts and returns how many were claimed. */
  tick(): Promise<number>;
  /** Renews every in-flight lease once; returns the ids whose lease was lost. */
  heartbeat(): Promise<readonly string[]>;
  /** Resolves when no attempt is in flight (test seam). */
  drained(): Promise<void>;
  /** Attempts not finished: requests open and outcomes waiting to be written. */
  inFlight(): number;
  /** False after a failed claim until the next successful one (readiness). */
  healthy(): boolean;
  /** Where the loop is: running, draining (stop() under way) or stopped. */
  state(): LoopState;
}

/**
 * Back-off after a failed claim, in ms: `min(CLAIM_BACKOFF_MAX_MS, CLAIM_BACKOFF_BASE_MS · 2^failures)`, each
 * delay jittered to [0.5, 1.5]× that. The cap is short so that a dispatcher resumes within seconds of the
 * database coming back, however long the outage was.
 */
export const CLAIM_BACKOFF_BASE_MS = 100;
/** Upper bound of the claim back-off before jitter, in ms (see {@link CLAIM_BACKOFF_BASE_MS}). */
export const CLAIM_BACKOFF_MAX_MS = 5_000;

/** The loop's state: `running` claims; `draining` claims no more and waits for in-flight attempts; `stopped`. */
export type LoopState = 'running' | 'draining' | 'stopped';

/**
 * Makes a dispatcher (docs/design.md#the-protocol, docs/adr/0009-window-share-within-a-claim.md).
 *
 * The loop, in one picture:
 *
 *   stopped ──start()──▶ running ──stop()──▶ draining ──in-flight attempts done, or grace over──▶ stopped
 *
 * - running: claim into the free slots of the in-flight window (in-flight.ts), each endpoint within its
 *   share (window.ts); launch one attempt per claimed delivery (attempt.ts); hand each outcome to the
 *   batching recorder (recorder.ts); log one line per attempt (attempt-line.ts). A claim that found work
 *   and left slots free claims again at once; otherwise the loop waits for the first of its timers.
 * - draining: no more claims; in-flight attempts finish and are recorded within `shutdownGraceMs`; the rest
 *   are aborted and their leases released (fenced).
 * - stopped: nothing in flight, no timer armed.
 *
 * Timers: **refill** (a few slots freed: claim after REFILL_DELAY_MS, batching small refills; slots freed by
 * deliveries a publish handed off: after HANDOFF_REFILL_DELAY_MS while no claim is owed); **heartbeat**
 * (every leaseMs/3: renew the leases of attempts in flight, abandon those lost); **wake** (a publish
 * notification, or a finished attempt that freed a useful part of the window, ends the wait at once);
 * **poll** (`pollIntervalMs` after an empty claim; also the pace of the sweep), and after a failed claim
 * the **back-off** (CLAIM_BACKOFF_BASE_MS doubling to CLAIM_BACKOFF_MAX_MS, jittered).
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { settings, logger, observer = {} } = deps;
  const timers = deps.timers ?? systemTimers;
  const loggers = { logger, attemptLogger: deps.attemptLogger ?? logger };
  const maxAttempts = settings.retryPolicy.delaysMs.length + 1;
  const book = createWindowBook(settings);
  const window = createInFlightWindow(settings, (endpointId, open) => book.mayStart(endpointId, open));
  const tracer = deps.tracer ?? NOOP_TRACER;
  const startMarginMs = (settings.attemptDeadlineMs ?? settings.leaseMs - 1000) + 1000;
  let state: LoopState = 'stopped';
  let healthy = true;
  let loopDone: Promise<void> = Promise.resolve();
  let signal: (() => void) | undefined;
  let stopHeartbeat: (() => void) | undefined;
  let unsubscribe: (() => void) | undefined;
  let cancelRefill: (() => void) | undefined;
  // When the armed refill timer fires, in ms of the clock (Infinity: none armed).
  let refillAtMs = Number.POSITIVE_INFINITY;
  // Whether a claim may find work that the claims since have not looked for (HANDOFF_REFILL_DELAY_MS); `owedSignals`
  // counts what makes one owed (publish wake-ups, hand-backs, failed claims), so that one arriving during a claim
  // keeps it owed.
  let claimOwed = true;
  let owedSignals = 0;
  const oweClaim = (): void => {
    claimOwed = true;
    owedSignals += 1;
  };
  // Flights of deliveries a publish handed off (adopt), not claimed.
  const handedOff = new WeakSet<Flight>();
  // Store calls of any kind (claim, record, heartbeat) failed since the last successful claim, and the claims
  // among them. A dispatcher holding its most leases (in-flight.ts: open requests and outcomes waiting to be
  // recorded) does not claim during an outage, so "claims resumed" is logged at the first successful claim
  // after any store failure.
  let storeFailures = 0;
  let failedClaims = 0;
  const storeFailed = (error: unknown, during: 'claim' | 'record' | 'heartbeat' | 'release'): void => {
    storeFailures += 1;
    if (during === 'claim') failedClaims += 1;
    observer.storeError?.(error, during);
  };
  const recorder: Recorder = createRecorder(deps.store, {
    maxBatch: 500,
    retryDelayMs: 100,
    maxRetryDelayMs: 5_000,
    now: () => deps.clock.sqlNow(),
    onError: (error) => storeFailed(error, 'record'),
  });

  // A wake-up that arrives while the loop is busy (claiming) is remembered, so the loop's next wait
  // returns at once instead of sleeping through work that was published meanwhile.
  let wakePending = false;
  let lastSweepMs = Number.NEGATIVE_INFINITY;
  const wakeLoop = (): void => {
    const s = signal;
    signal = undefined;
    if (s === undefined) wakePending = true;
    else s();
  };

  // Set while the loop waits out a claim back-off: freed slots do not end it (answers arriving during an
  // outage would otherwise turn the back-off into a claim every REFILL_DELAY_MS).
  let backingOff = false;
  /**
   * A publish wake-up: ends the loop's wait, but not a back-off (publishes during an outage would turn it into
   * a claim per publish); the claim after the back-off runs anyway and sees everything committed before it.
   * A stop still ends a back-off (it calls wakeLoop).
   */
  const wakeOnPublish = (): void => {
    oweClaim();
    if (!backingOff) wakeLoop();
  };
  /**
   * Wakes the loop at once or after `delayMs` (default REFILL_DELAY_MS), as `refill` says (in-flight.ts); not during a
   * back-off. A refill timer already armed to fire sooner stays; one armed later is brought forward.
   */
  const refilled = (refill: 'now' | 'soon', delayMs = REFILL_DELAY_MS): void => {
    observer.inFlight?.(window.sending());
    if (backingOff) return;
    if (refill === 'now') {
      wakeLoop();
      return;
    }
    const atMs = deps.clock.nowMs() + delayMs;
    if (cancelRefill !== undefined && refillAtMs <= atMs) return;
    cancelRefill?.();
    refillAtMs = atMs;
    cancelRefill = timers.after(delayMs, () => {
      cancelRefill = undefined;
      refillAtMs = Number.POSITIVE_INFINITY;
      wakeLoop();
    }, true);
  };
  /** {@link refilled} for the slot of `flight`: a handed-off delivery's slot waits for HANDOFF_REFILL_DELAY_MS unless a claim is owed. */
  const freed = (flight: Flight, refill: 'now' | 'soon'): void => {
    if (handedOff.has(flight) && !claimOwed) refilled('soon', HANDOFF_REFILL_DELAY_MS);
    else refilled(refill);
  };

  /** Adds a claimed delivery to the window: its request opens now, or when a slot is free for it. Returns its flight. */
  const launch = (delivery: ClaimedDelivery, leaseUntilMs: number): Flight => {
    // An older lease of the same delivery still waiting here has expired (this claim reclaimed it): it never
    // opened, and the newer lease takes its place.
    const older = window.get(delivery.deliveryId);
    if (older !== undefined && older.waiting) dropWaiting(older);
    const flight = window.add(delivery, tracer.startDelivery(delivery), leaseUntilMs);
    if (!flight.waiting) run(flight);
    return flight;
  };

  /** Takes a waiting delivery out of the window unsent (its request never opened, nothing is written for it). */
  const dropWaiting = (flight: Flight): 'now' | 'soon' => {
    flight.abandoned = true;
    flight.trace.end();
    return window.finish(flight);
  };

  /** Opens the requests of waiting deliveries while slots are free for them. */
  const openWaiting = (): void => {
    for (let flight = window.next(); flight !== undefined; flight = window.next()) {
      if (flight.leaseUntilMs - deps.clock.nowMs() >= startMarginMs) {
        run(flight);
        continue;
      }
      // Too little of its lease is left for a whole attempt (the heartbeat could not renew it): the lease is
      // handed back (fenced) rather than risk a second request after it expires mid-attempt.
      flight.abandoned = true;
      window.sent(flight);
      handBack(flight);
    }
  };

  const handBack = (flight: Flight): void => {
    oweClaim(); // the delivery is pending again once its lease is released
    flight.done = (async () => {
      try {
        const fenced = await deps.store.releaseLeases([flight.delivery], deps.clock.sqlNow());
        logger.warn({ deliveryId: flight.delivery.deliveryId, fencedOut: fenced.length }, 'claimed-ahead delivery handed back: too little of its lease was left for an attempt');
      } catch (error) {
        storeFailed(error, 'release');
      } finally {
        flight.trace.end();
        refilled(window.finish(flight));
      }
    })();
  };

  const run = (flight: Flight): void => {
    const { delivery } = flight;
    flight.done = (async () => {
      try {
        flight.trace.attemptStarted();
        const outcome = await runAttempt({ sender: deps.sender, clock: deps.clock, random: deps.random, settings }, delivery, flight.controller.signal);
        // The request is over: its slot takes a waiting delivery, or the next claim, while the outcome is written.
        window.sent(flight);
        // The verdict first: an endpoint that answered may open its waiting deliveries past the reserve now.
        if (!flight.abandoned) book.note(delivery.endpointId, outcome.result.type === 'response');
        openWaiting();
        freed(flight, window.answered());
        flight.trace.attemptEnded(outcome.result, outcome.classification);
        if (flight.abandoned) return;
        flight.recording = true;
        let recorded: boolean;
        try {
          recorded = await recorder.record(outcome.record);
        } catch {
          return; // recorder closed during stop: the lease expires and the delivery is sent again
        }
        flight.trace.recorded(outcome.next, recorded);
        if (!recorded) observer.fencedOut?.(1);
        observer.attempted?.(outcome, recorded);
        logAttempt(loggers, delivery, outcome, recorded, maxAttempts);
      } catch (error) {
        logger.error({ err: error, deliveryId: delivery.deliveryId }, 'attempt failed unexpectedly');
      } finally {
        flight.trace.end();
        freed(flight, window.finish(flight));
        openWaiting();
      }
    })();
  };

  // Room offered to publish statements of this process that have not ended yet (hand-off): slots, and per endpoint.
  let offeredSlots = 0;
  const offeredTo = new Map<string, number>();
  /** The endpoints of the attempts in flight, one entry per attempt, and of the room offered, one per offered slot. */
  const heldEndpoints = (): string[] => {
    const held = window.endpoints();
    for (const [id, n] of offeredTo) for (let i = 0; i < n; i += 1) held.push(id);
    return held;
  };

  const offer = (messages: number): HandoffOffer | null => {
    if (state !== 'running' || backingOff || !healthy || messages <= 0) return null;
    const free = window.free() - offeredSlots;
    if (free <= 0) return null;
    const held = new Map<string, number>();
    for (const id of window.endpoints()) held.set(id, (held.get(id) ?? 0) + 1);
    const endpointIds: string[] = [];
    const room: number[] = [];
    for (const id of book.answering(HANDOFF_MAX_ENDPOINTS)) {
      const n = Math.min(messages, book.share - (held.get(id) ?? 0) - (offeredTo.get(id) ?? 0));
      if (n <= 0) continue;
      endpointIds.push(id);
      room.push(n);
    }
    if (endpointIds.length === 0) return null;
    const slots = Math.min(free, room.reduce((sum, n) => sum + n, 0));
    offeredSlots += slots;
    for (const [i, id] of endpointIds.entries()) offeredTo.set(id, (offeredTo.get(id) ?? 0) + room[i]!);
    return { dispatcherId: settings.dispatcherId, leaseMs: settings.leaseMs, slots, endpointIds, room, leaseFromMs: deps.clock.nowMs() };
  };

  const adopt = (made: HandoffOffer, deliveries: readonly ClaimedDelivery[]): void => {
    offeredSlots -= made.slots;
    for (const [i, id] of made.endpointIds.entries()) {
      const left = (offeredTo.get(id) ?? 0) - made.room[i]!;
      if (left > 0) offeredTo.set(id, left);
      else offeredTo.delete(id);
    }
    if (deliveries.length === 0) return;
    if (state !== 'running') {
      // Stopping: the leases go back (fenced), and another dispatcher claims the deliveries at once.
      deps.store.releaseLeases(deliveries, deps.clock.sqlNow()).catch((error: unknown) => storeFailed(error, 'release'));
      return;
    }
    observer.claimed?.(deliveries.length, 0);
    for (const delivery of deliveries) handedOff.add(launch(delivery, made.leaseFromMs + settings.leaseMs));
    observer.inFlight?.(window.sending());
  };

  const tick = async (): Promise<number> => {
    const free = window.free() - offeredSlots;
    if (free <= 0) return 0;
    const { limit, excludeEndpoints, window: claimWindow } = book.bounds(heldEndpoints(), free);
    const nowMs = deps.clock.nowMs();
    const leaseUntilMs = nowMs + settings.leaseMs;
    const sweep = nowMs - lastSweepMs >= settings.pollIntervalMs || nowMs < lastSweepMs;
    const signalsBefore = owedSignals;
    const result = await deps.store.claim({
      dispatcherId: settings.dispatcherId,
      sweep,
      excludeEndpoints,
      limit,
      window: claimWindow,
      leaseMs: settings.leaseMs,
      maxReclaims: settings.maxReclaims,
      now: deps.clock.sqlNow(),
    });
    healthy = true;
    // Only an empty claim, cut by no share nor reserve, shows it took all it found: one that returned rows may have been
    // cut by the claim's own fair part per endpoint (claim.sql). What an empty one leaves is gated, or comes due with time.
    const tookAll = result.deliveries.length === 0 && excludeEndpoints.length === 0 && claimWindow.budget >= limit;
    if (!tookAll) claimOwed = true;
    else if (owedSignals === signalsBefore) claimOwed = false;
    if (storeFailures > 0) {
      logger.info({ failedClaims, failedStoreCalls: storeFailures }, 'claims resumed');
      // The database answers again: outcomes held back by a failed record are written now, not after the
      // rest of the recorder's back-off, so their leases do not run out while the claims go on.
      recorder.retryNow();
      storeFailures = 0;
      failedClaims = 0;
    }
    if (sweep) lastSweepMs = nowMs;
    if (result.deadLettered > 0) {
      observer.deadLettered?.(result.deadLettered, 'lease_lost_repeatedly');
      logger.warn({ count: result.deadLettered }, 'deliveries dead-lettered: lease lost repeatedly');
    }
    if (result.deliveries.length > 0) observer.claimed?.(result.deliveries.length, result.reclaimed);
    for (const delivery of result.deliveries) launch(delivery, leaseUntilMs);
    observer.inFlight?.(window.sending());
    return result.deliveries.length;
  };

  const heartbeat = async (): Promise<readonly string[]> => {
    // Only attempts still in flight: an outcome handed to the recorder may already be written, and renewing
    // its (released) lease would report a lease as lost that was not.
    const live = window.flights().filter((f) => !f.abandoned && !f.recording).map((f) => f.delivery);
    if (live.length === 0) return [];
    const beatMs = deps.clock.nowMs();
    const lost = await deps.store.extendLeases(live, settings.leaseMs, deps.clock.sqlNow());
    const lostIds = new Set(lost);
    for (const delivery of live) {
      // Only the flights of the leases this heartbeat sent: while it was out, a delivery may have been handed
      // back and claimed again by this dispatcher, and its newer lease is neither renewed nor lost by it.
      const flight = window.get(delivery.deliveryId);
      if (flight === undefined || flight.delivery !== delivery) continue;
      if (!lostIds.has(delivery.deliveryId)) {
        flight.leaseUntilMs = beatMs + settings.leaseMs;
        continue;
      }
      flight.trace.leaseLost();
      if (flight.waiting) refilled(dropWaiting(flight));
      else {
        flight.abandoned = true;
        flight.controller.abort();
      }
    }
    if (lost.length > 0) {
      observer.leasesLost?.(lost.length);
      logger.warn({ deliveryIds: lost, dispatcherId: settings.dispatcherId }, 'lease lost: attempts abandoned, nothing will be written for them');
    }
    return lost;
  };

  /** Waits for a wake-up or `ms` (the poll, or the back-off), whichever comes first. */
  const waitForWork = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (wakePending) {
        wakePending = false;
        resolve();
        return;
      }
      const cancel = timers.after(ms, () => {
        signal = undefined;
        resolve();
      });
      signal = () => {
        cancel();
        resolve();
      };
    });

  const loop = async (): Promise<void> => {
    let failures = 0;
    while (state === 'running') {
      let claimed = 0;
      wakePending = false; // this claim sees everything committed before it starts
      try {
        claimed = await tick();
        failures = 0;
      } catch (error) {
        healthy = false;
        failures += 1;
        oweClaim();
        storeFailed(error, 'claim');
        const backoff = Math.min(CLAIM_BACKOFF_MAX_MS, CLAIM_BACKOFF_BASE_MS * 2 ** Math.min(failures, 16));
        const delay = Math.round(backoff * (0.5 + deps.random.next()));
        logger.warn({ err: error, retryInMs: delay }, 'claim failed; backing off');
        if (state !== 'running') break; // stopped during the failed claim: no back-off to wait out
        backingOff = true;
        wakePending = false; // a publish wake-up during the failed claim does not end its back-off either
        try {
          await waitForWork(delay);
        } finally {
          backingOff = false;
        }
        continue;
      }
      if (state !== 'running') break;
      // A claim that found work may have been cut by per-endpoint shares: claim again at once while slots
      // are free; an empty claim waits for a wake-up, a freed slot or the poll.
      if (claimed > 0 && window.free() > 0) continue;
      await waitForWork(settings.pollIntervalMs);
    }
  };

  return {
    start() {
      if (state === 'running') return;
      state = 'running';
      oweClaim();
      unsubscribe = deps.onWake?.(wakeOnPublish);
      const beat = Math.max(10, Math.floor(settings.leaseMs / 3));
      stopHeartbeat = timers.every(beat, () => {
        heartbeat().catch((error: unknown) => storeFailed(error, 'heartbeat'));
      });
      loopDone = loop();
    },

    async stop() {
      state = 'draining';
      unsubscribe?.();
      wakeLoop();
      await loopDone;
      if (window.size() > 0) {
        let cancelGrace: (() => void) | undefined;
        const grace = new Promise<void>((resolve) => { cancelGrace = timers.after(settings.shutdownGraceMs, resolve); });
        await Promise.race([window.drained(), grace]);
        cancelGrace?.();
      }
      const left = window.flights();
      if (left.length > 0) {
        for (const f of left) {
          f.abandoned = true;
          f.controller.abort();
        }
        // Deliveries still waiting for a slot never opened a request: their leases are released with the rest.
        for (const f of left) if (f.waiting) dropWaiting(f);
        // Outcomes whose write fails from now on are given up, or their flights would hold the stop for as
        // long as the outage lasts: their leases are released below or expire, and the deliveries are sent
        // again (at-least-once, docs/design.md#the-protocol). Outcomes the database takes are still written.
        recorder.giveUpOnFailure();
        await Promise.all(left.map((f) => f.done));
        try {
          const fenced = await deps.store.releaseLeases(left.map((f) => f.delivery), deps.clock.sqlNow());
          logger.info({ released: left.length - fenced.length, fencedOut: fenced.length }, 'leases released at shutdown');
        } catch (error) {
          observer.storeError?.(error, 'release');
          logger.warn({ err: error }, 'could not release leases at shutdown; they will expire');
        }
      }
      stopHeartbeat?.();
      cancelRefill?.();
      cancelRefill = undefined;
      refillAtMs = Number.POSITIVE_INFINITY;
      recorder.close();
      if (state === 'draining') state = 'stopped';
    },

    offer,
    adopt,
    tick,
    heartbeat,
    drained: () => window.drained(),
    inFlight: () => window.size(),
    healthy: () => healthy,
    state: () => state,
  };
}
