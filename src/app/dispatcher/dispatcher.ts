import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import { NOOP_TRACER } from '../../ports/tracer.ts';
import type { Reserved, TakeRequest, Taken, WindowRoom, WorkSink, WorkSource } from '../../ports/work-source.ts';
import { createClaimPacer, type ClaimPacer } from './claim-pacer.ts';
import { createClaimSource } from './claim-source.ts';
import type { Dispatcher, DispatcherDeps, DispatcherObserver, LoopState } from './dispatcher-types.ts';
import { FlightRunner } from './flight-runner.ts';
import { createInFlightWindow, type InFlightWindow } from './in-flight.ts';
import { systemTimers, type LoopTimers } from './loop-timers.ts';
import { createRecorder, type Recorder } from './recorder.ts';
import { createStoreHealth, type StoreHealth } from './store-health.ts';
import { createWindowBook, type WindowBook } from './window.ts';

export { CLAIM_BACKOFF_BASE_MS, CLAIM_BACKOFF_MAX_MS, HANDOFF_REFILL_DELAY_MS } from './claim-pacer.ts';
export type {
  Dispatcher,
  DispatcherDeps,
  DispatcherObserver,
  DispatcherSettings,
  LoopState,
} from './dispatcher-types.ts';

/**
 * Makes a dispatcher (docs/design.md#the-protocol, docs/adr/0009-window-share-within-a-claim.md,
 * docs/adr/0020-work-sources.md).
 *
 *   stopped ──start()──▶ running ──stop()──▶ draining ──in-flight attempts done, or grace over──▶ stopped
 *
 * - running: the sources are connected. The loop takes from the pulling sources (the claim) into the free slots of
 *   the in-flight window (in-flight.ts), each endpoint within its share (window.ts), when the claim pacer says so
 *   (claim-pacer.ts); a pushing source (the publish hand-off, handoff-source.ts) hands it leases at any time, within
 *   the room it reserved. Every delivery, taken or pushed, becomes one flight (flight-runner.ts): attempt, record.
 * - draining: the sources are disconnected and nothing more is taken; leases pushed meanwhile are released; in-flight
 *   attempts finish and are recorded within `shutdownGraceMs`; the rest are aborted and their leases released (fenced).
 * - stopped: nothing in flight, no timer armed.
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  return new LoopDispatcher(deps);
}

class LoopDispatcher implements Dispatcher {
  readonly #deps: DispatcherDeps;
  readonly #observer: DispatcherObserver;
  readonly #sources: readonly WorkSource[];
  readonly #timers: LoopTimers;
  readonly #book: WindowBook;
  readonly #window: InFlightWindow;
  readonly #pacer: ClaimPacer;
  readonly #health: StoreHealth;
  readonly #recorder: Recorder;
  readonly #runner: FlightRunner;
  #state: LoopState = 'stopped';
  #loopDone: Promise<void> = Promise.resolve();
  /** What start() did that stop() undoes: the sources it connected, the heartbeat it armed. */
  #disconnects: (() => void)[] = [];
  #stopHeartbeat: (() => void) | undefined;

  constructor(deps: DispatcherDeps) {
    const { settings, clock } = deps;
    this.#deps = deps;
    this.#observer = deps.observer ?? {};
    this.#timers = deps.timers ?? systemTimers;
    this.#sources = deps.sources ?? [createClaimSource(deps.store, { clock, sweepEveryMs: settings.pollIntervalMs })];
    this.#book = createWindowBook(settings);
    this.#window = createInFlightWindow(settings, (endpointId, open) => this.#book.mayStart(endpointId, open));
    this.#pacer = createClaimPacer({ timers: this.#timers, clock, random: deps.random });
    this.#health = createStoreHealth({
      logger: deps.logger,
      onError: (error, during) => this.#observer.storeError?.(error, during),
      // The database answers again: outcomes held back by a failed record are written now, not after the rest of the
      // recorder's back-off, so their leases do not run out while the takes go on.
      onResumed: () => this.#recorder.retryNow(),
    });
    this.#recorder = createRecorder(deps.store, {
      maxBatch: 500,
      retryDelayMs: 100,
      maxRetryDelayMs: 5_000,
      now: () => clock.sqlNow(),
      onError: (error) => this.#health.failed(error, 'record'),
    });
    this.#runner = new FlightRunner({
      ...deps,
      timers: this.#timers,
      window: this.#window,
      book: this.#book,
      recorder: this.#recorder,
      pacer: this.#pacer,
      tracer: deps.tracer ?? NOOP_TRACER,
      observer: this.#observer,
      loggers: { logger: deps.logger, attemptLogger: deps.attemptLogger ?? deps.logger },
      storeFailed: (error, during) => this.#health.failed(error, during),
    });
  }

  start(): void {
    if (this.#state === 'running') return;
    this.#state = 'running';
    this.#pacer.owe();
    this.#disconnects = this.#sources.map((source) => source.connect?.(this.#sinkFor(source)) ?? (() => undefined));
    const beatMs = Math.max(10, Math.floor(this.#deps.settings.leaseMs / 3));
    this.#stopHeartbeat = this.#timers.every(beatMs, () => {
      this.#runner.renewLeases().catch((error: unknown) => this.#health.failed(error, 'heartbeat'));
    });
    this.#loopDone = this.#loop();
  }

  async stop(): Promise<void> {
    this.#state = 'draining';
    for (const disconnect of this.#disconnects.splice(0)) disconnect();
    this.#pacer.interrupt();
    await this.#loopDone;
    await this.#runner.drain(this.#deps.settings.shutdownGraceMs);
    this.#stopHeartbeat?.();
    this.#pacer.stop();
    this.#recorder.close();
    if (this.#state === 'draining') this.#state = 'stopped';
  }

  async tick(): Promise<number> {
    const { settings, clock } = this.#deps;
    const reserved = this.#reserved();
    const free = this.#window.free() - reserved.slots;
    if (free <= 0) return 0;
    const bounds = this.#book.bounds(this.#heldEndpoints(reserved), free);
    const leaseUntilMs = clock.nowMs() + settings.leaseMs;
    const ticket = this.#pacer.taking();
    const request: TakeRequest = {
      dispatcherId: settings.dispatcherId,
      limit: bounds.limit,
      excludeEndpoints: bounds.excludeEndpoints,
      window: bounds.window,
      leaseMs: settings.leaseMs,
      maxReclaims: settings.maxReclaims,
      now: clock.sqlNow(),
    };
    let found = 0;
    for (const source of this.#sources) {
      if (source.take === undefined) continue;
      const taken = await source.take({ ...request, limit: bounds.limit - found });
      this.#health.tookWork();
      found += taken.deliveries.length;
      this.#accept(source, taken, leaseUntilMs);
      if (found >= bounds.limit) break;
    }
    // Only an empty take, cut by no share nor reserve, shows it took all it found: one that returned rows may have
    // been cut by the claim's own fair part per endpoint (claim.sql). What an empty one leaves is gated, or comes due
    // with time.
    const uncut = bounds.excludeEndpoints.length === 0 && bounds.window.budget >= bounds.limit;
    this.#pacer.taken(ticket, found === 0 && uncut);
    return found;
  }

  heartbeat = (): Promise<readonly string[]> => this.#runner.renewLeases();
  drained = (): Promise<void> => this.#window.drained();
  inFlight = (): number => this.#window.size();
  healthy = (): boolean => this.#health.healthy();
  state = (): LoopState => this.#state;

  async #loop(): Promise<void> {
    const pollMs = this.#deps.settings.pollIntervalMs;
    while (this.#state === 'running') {
      let found = 0;
      this.#pacer.clearWoken(); // this take sees everything committed before it starts
      try {
        found = await this.tick();
        this.#pacer.succeeded();
      } catch (error) {
        const retryInMs = this.#pacer.failed();
        // The failure itself is the health's `onError` line (once per outage for the database's faults); the
        // back-off is detail.
        this.#health.failed(error, 'claim');
        this.#deps.logger.debug({ err: error, retryInMs }, 'claim failed; backing off');
        if (this.#state !== 'running') break; // stopped during the failed take: no back-off to wait out
        await this.#pacer.backOff(retryInMs);
        continue;
      }
      if (this.#state !== 'running') break;
      // A take that found work may have been cut by per-endpoint shares: take again at once while slots are free; an
      // empty take waits for a wake-up, a freed slot or the poll.
      if (found > 0 && this.#window.free() > 0) continue;
      await this.#pacer.wait(pollMs);
    }
  }

  /** Launches what a take leased (dead letters and counts to the observer). */
  #accept(source: WorkSource, taken: Taken, leaseUntilMs: number): void {
    if (taken.deadLettered > 0) {
      this.#observer.deadLettered?.(taken.deadLettered, 'lease_lost_repeatedly');
      this.#deps.logger.warn({ count: taken.deadLettered }, 'deliveries dead-lettered: lease lost repeatedly');
    }
    if (taken.deliveries.length > 0) this.#observer.claimed?.(taken.deliveries.length, taken.reclaimed);
    for (const delivery of taken.deliveries) this.#runner.launch(delivery, leaseUntilMs, { source, pushed: false });
    this.#observer.inFlight?.(this.#window.sending());
  }

  /** "These are yours already" from `source`: sent at once while running, else their leases released (fenced). */
  #adopt(source: WorkSource, deliveries: readonly ClaimedDelivery[], leaseUntilMs: number): void {
    if (deliveries.length === 0) return;
    if (this.#state !== 'running') {
      // Stopping: the leases go back, and another dispatcher claims the deliveries at once.
      this.#deps.store
        .releaseLeases(deliveries, this.#deps.clock.sqlNow())
        .catch((error: unknown) => this.#health.failed(error, 'release'));
      return;
    }
    this.#observer.claimed?.(deliveries.length, 0);
    for (const delivery of deliveries) this.#runner.launch(delivery, leaseUntilMs, { source, pushed: true });
    this.#observer.inFlight?.(this.#window.sending());
  }

  #sinkFor(source: WorkSource): WorkSink {
    return {
      wake: () => this.#pacer.woken(),
      yours: (deliveries, leaseUntilMs) => this.#adopt(source, deliveries, leaseUntilMs),
      room: () => this.#room(),
    };
  }

  /** The window as a source may promise room in it: null unless running, healthy, not backing off, with a slot free. */
  #room(): WindowRoom | null {
    if (this.#state !== 'running' || this.#pacer.backingOff() || !this.#health.healthy()) return null;
    const reserved = this.#reserved();
    const free = this.#window.free() - reserved.slots;
    if (free <= 0) return null;
    const held = new Map(reserved.endpoints);
    for (const id of this.#window.endpoints()) held.set(id, (held.get(id) ?? 0) + 1);
    const { settings, clock } = this.#deps;
    return {
      dispatcherId: settings.dispatcherId,
      leaseMs: settings.leaseMs,
      nowMs: clock.nowMs(),
      free,
      share: this.#book.share,
      held: (id) => held.get(id) ?? 0,
      answering: (max) => this.#book.answering(max),
    };
  }

  /** The room every source has promised and not yet handed over. */
  #reserved(): Reserved {
    let slots = 0;
    const endpoints = new Map<string, number>();
    for (const source of this.#sources) {
      const r = source.reserved?.();
      if (r === undefined) continue;
      slots += r.slots;
      for (const [id, n] of r.endpoints) endpoints.set(id, (endpoints.get(id) ?? 0) + n);
    }
    return { slots, endpoints };
  }

  /** The endpoints of the attempts in flight, one entry per attempt, and of the reserved room, one per slot. */
  #heldEndpoints(reserved: Reserved): string[] {
    const held = this.#window.endpoints();
    for (const [id, n] of reserved.endpoints) for (let i = 0; i < n; i += 1) held.push(id);
    return held;
  }
}
