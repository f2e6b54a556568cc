import type { Clock, Random } from '../../ports/clock.ts';
import type { ClaimedDelivery, DeliveryStore } from '../../ports/delivery-store.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Sender } from '../../ports/sender.ts';
import type { Tracer } from '../../ports/tracer.ts';
import type { WorkSource } from '../../ports/work-source.ts';
import { logAttempt } from './attempt-line.ts';
import { deliveryPolicy, runAttempt } from './attempt.ts';
import { LEASE_MARGIN_MS } from '../../domain/retry-policy.ts';
import type { ClaimPacer, Refill } from './claim-pacer.ts';
import type { DispatcherObserver, DispatcherSettings } from './dispatcher-types.ts';
import type { Flight, InFlightWindow } from './in-flight.ts';
import type { LoopTimers } from './loop-timers.ts';
import type { Recorder } from './recorder.ts';
import type { StoreCall } from './store-health.ts';
import type { WindowBook } from './window.ts';

/** Where a flight's delivery came from: its source, and whether that source pushed it (leased it itself). */
export interface Origin {
  readonly source: WorkSource;
  readonly pushed: boolean;
}

/** Dependencies of {@link createFlightRunner}: the dispatcher's ports and the helpers it shares with its loop. */
export interface FlightRunnerDeps {
  readonly store: Pick<DeliveryStore, 'extendLeases' | 'releaseLeases'>;
  readonly sender: Sender;
  readonly clock: Clock;
  readonly random: Random;
  readonly settings: DispatcherSettings;
  readonly timers: LoopTimers;
  readonly window: InFlightWindow;
  readonly book: WindowBook;
  readonly recorder: Recorder;
  readonly pacer: Pick<ClaimPacer, 'freed' | 'owe'>;
  readonly tracer: Tracer;
  readonly observer: DispatcherObserver;
  readonly loggers: { readonly logger: Logger; readonly attemptLogger: Logger };
  readonly storeFailed: (error: unknown, during: StoreCall) => void;
}

/**
 * The flights of one dispatcher from launch to record (docs/design.md#the-protocol, steps 2 and 3): one attempt per
 * leased delivery (attempt.ts), its outcome to the batching recorder (recorder.ts), one log line (attempt-line.ts);
 * the heartbeat that keeps their leases; and, at the stop, the end of what is left. Where a flight stands is in the
 * flight itself (in-flight.ts: waiting, open, recording, abandoned); the runner keeps only where it came from.
 */
export class FlightRunner {
  readonly #deps: FlightRunnerDeps;
  readonly #attemptDeps: Parameters<typeof runAttempt>[0];
  /**
   * A waiting delivery opens its request only with this much of its lease left, ms: its attempt deadline (its retry
   * policy's attemptTimeout, else the installation's) plus 1 s.
   */
  readonly #startMarginMs: number;
  readonly #origins = new WeakMap<Flight, Origin>();
  /** Flights whose source was told how they ended (settled or released). */
  readonly #ended = new WeakSet<Flight>();

  constructor(deps: FlightRunnerDeps) {
    const { settings } = deps;
    this.#deps = deps;
    this.#attemptDeps = { sender: deps.sender, clock: deps.clock, random: deps.random, settings };
    this.#startMarginMs = (settings.attemptDeadlineMs ?? settings.leaseMs - 1000) + 1000;
  }

  /**
   * Adds a delivery leased until `leaseUntilMs` (ms of the clock) to the window: its request opens now, or it waits for
   * a slot (claimed ahead). An older lease of the same delivery still waiting here (this dispatcher reclaimed it) is
   * dropped unsent: the newer lease takes its place.
   */
  launch(delivery: ClaimedDelivery, leaseUntilMs: number, origin: Origin): Flight {
    const { window } = this.#deps;
    const older = window.get(delivery.deliveryId);
    if (older !== undefined && older.waiting) this.#dropWaiting(older);
    const flight = window.add(delivery, this.#deps.tracer.startDelivery(delivery), leaseUntilMs);
    this.#origins.set(flight, origin);
    if (!flight.waiting) this.#run(flight);
    return flight;
  }

  /** Renews every in-flight lease once; abandons the attempts whose lease was lost and returns their delivery ids. */
  async renewLeases(): Promise<readonly string[]> {
    const { window, clock, settings, observer } = this.#deps;
    // Only attempts still in flight: an outcome handed to the recorder may already be written, and renewing
    // its (released) lease would report a lease as lost that was not.
    const live = window
      .flights()
      .filter((f) => !f.abandoned && !f.recording)
      .map((f) => f.delivery);
    if (live.length === 0) return [];
    const beatMs = clock.nowMs();
    const lost = await this.#deps.store.extendLeases(live, settings.leaseMs, clock.sqlNow());
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
      if (flight.waiting) this.#freed(this.#dropWaiting(flight));
      else {
        flight.abandoned = true;
        flight.controller.abort();
      }
    }
    if (lost.length > 0) {
      observer.leasesLost?.(lost.length);
      this.#deps.loggers.logger.warn(
        { deliveryIds: lost, dispatcherId: settings.dispatcherId },
        'lease lost: attempts abandoned, nothing will be written for them',
      );
    }
    return lost;
  }

  /**
   * The end of a stop: waits up to `graceMs` for the flights to finish; then aborts the rest, gives up outcomes that
   * cannot be written, and releases their leases (fenced). Resolves when nothing is in flight.
   */
  async drain(graceMs: number): Promise<void> {
    const { window, clock, observer, recorder } = this.#deps;
    const { logger } = this.#deps.loggers;
    if (window.size() > 0) {
      let cancelGrace: (() => void) | undefined;
      const grace = new Promise<void>((resolve) => {
        cancelGrace = this.#deps.timers.after(graceMs, resolve);
      });
      await Promise.race([window.drained(), grace]);
      cancelGrace?.();
    }
    const left = window.flights();
    if (left.length === 0) return;
    for (const f of left) {
      f.abandoned = true;
      f.controller.abort();
    }
    // Deliveries still waiting for a slot never opened a request: their leases are released with the rest.
    for (const f of left) if (f.waiting) this.#dropWaiting(f);
    // Outcomes whose write fails from now on are given up, or their flights would hold the stop for as long as the
    // outage lasts: their leases are released below or expire, and the deliveries are sent again (at-least-once,
    // docs/design.md#the-protocol). Outcomes the database takes are still written.
    recorder.giveUpOnFailure();
    await Promise.all(left.map((f) => f.done));
    try {
      const fenced = await this.#deps.store.releaseLeases(
        left.map((f) => f.delivery),
        clock.sqlNow(),
      );
      logger.info({ released: left.length - fenced.length, fencedOut: fenced.length }, 'leases released at shutdown');
    } catch (error) {
      observer.storeError?.(error, 'release');
      logger.warn({ err: error }, 'could not release leases at shutdown; they will expire');
    }
  }

  /** The attempt of `flight`, then its record: send (never throws) → classify → decide → the fenced write. */
  #run(flight: Flight): void {
    const { window, book, recorder, observer } = this.#deps;
    const { delivery } = flight;
    flight.done = (async () => {
      try {
        flight.trace.attemptStarted();
        const outcome = await runAttempt(this.#attemptDeps, delivery, flight.controller.signal);
        // The request is over: its slot takes a waiting delivery, or the next take, while the outcome is written.
        window.sent(flight);
        // The verdict first: an endpoint that answered may open its waiting deliveries past the reserve now.
        if (!flight.abandoned) book.note(delivery.endpointId, outcome.result.type === 'response');
        this.#openWaiting();
        this.#freed(window.answered(), flight);
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
        const { maxAttempts } = deliveryPolicy(this.#deps.settings, delivery);
        logAttempt(this.#deps.loggers, delivery, outcome, recorded, maxAttempts);
        this.#ended.add(flight);
        this.#origins.get(flight)?.source.settled?.(delivery, recorded);
      } catch (error) {
        this.#deps.loggers.logger.error({ err: error, deliveryId: delivery.deliveryId }, 'attempt failed unexpectedly');
      } finally {
        flight.trace.end();
        this.#freed(window.finish(flight), flight);
        this.#givenUp(flight);
        this.#openWaiting();
      }
    })();
  }

  /** Opens the requests of waiting deliveries while slots are free for them. */
  #openWaiting(): void {
    const { window, clock } = this.#deps;
    for (let flight = window.next(); flight !== undefined; flight = window.next()) {
      const ownDeadlineMs = deliveryPolicy(this.#deps.settings, flight.delivery).deadlineMs;
      const marginMs = ownDeadlineMs === undefined ? this.#startMarginMs : ownDeadlineMs + LEASE_MARGIN_MS;
      if (flight.leaseUntilMs - clock.nowMs() >= marginMs) {
        this.#run(flight);
        continue;
      }
      // Too little of its lease is left for a whole attempt (the heartbeat could not renew it): the lease is
      // handed back (fenced) rather than risk a second request after it expires mid-attempt.
      flight.abandoned = true;
      window.sent(flight);
      this.#handBack(flight);
    }
  }

  /** Releases the lease of a waiting delivery that cannot be sent in time; a take is owed (it is pending again). */
  #handBack(flight: Flight): void {
    const { window, clock } = this.#deps;
    this.#deps.pacer.owe();
    flight.done = (async () => {
      try {
        const fenced = await this.#deps.store.releaseLeases([flight.delivery], clock.sqlNow());
        this.#deps.loggers.logger.warn(
          { deliveryId: flight.delivery.deliveryId, fencedOut: fenced.length },
          'claimed-ahead delivery handed back: too little of its lease was left for an attempt',
        );
      } catch (error) {
        this.#deps.storeFailed(error, 'release');
      } finally {
        flight.trace.end();
        this.#freed(window.finish(flight));
        this.#givenUp(flight);
      }
    })();
  }

  /** Takes a waiting delivery out of the window unsent (its request never opened, nothing is written for it). */
  #dropWaiting(flight: Flight): Refill {
    flight.abandoned = true;
    flight.trace.end();
    const refill = this.#deps.window.finish(flight);
    this.#givenUp(flight);
    return refill;
  }

  /** Tells the source of a flight that ended without its record settling that it was given up (once). */
  #givenUp(flight: Flight): void {
    if (this.#ended.has(flight)) return;
    this.#ended.add(flight);
    this.#origins.get(flight)?.source.released?.(flight.delivery);
  }

  /** Slots were freed: the pacer decides when the next take runs (a pushed delivery's slot may wait longer). */
  #freed(refill: Refill, flight?: Flight): void {
    this.#deps.observer.inFlight?.(this.#deps.window.sending());
    this.#deps.pacer.freed(refill, flight !== undefined && this.#origins.get(flight)?.pushed === true);
  }
}
