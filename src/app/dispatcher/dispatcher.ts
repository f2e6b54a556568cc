import type { RetryPolicy } from '../../domain/retry-schedule.ts';
import type { Clock, Random } from '../../ports/clock.ts';
import type { ClaimedDelivery, DeliveryStore } from '../../ports/delivery-store.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Sender } from '../../ports/sender.ts';
import { NOOP_TRACER, type DeliveryTrace, type Tracer } from '../../ports/tracer.ts';
import { runAttempt, type AttemptResult } from './attempt.ts';
import type { SignatureHeaderSet } from '../../domain/signing.ts';
import { createRecorder, type Recorder } from './recorder.ts';
import { createWindowBook } from './window.ts';

/** Settings of a dispatcher. Durations in ms. */
export interface DispatcherSettings {
  readonly workerId: string;
  /** Requests in flight at most; claims fill free slots only. */
  readonly concurrency: number;
  /** Most deliveries per claim statement. */
  readonly claimBatch: number;
  readonly leaseMs: number;
  readonly maxReclaims: number;
  readonly pollIntervalMs: number;
  readonly shutdownGraceMs: number;
  /**
   * Most of this dispatcher's window one endpoint may hold, as a fraction of `concurrency` (0–1]: a slow or
   * black-holed endpoint cannot take every slot. Default 0.5.
   */
  readonly endpointWindowShare?: number;
  /**
   * Part of the window, as a fraction of `concurrency` [0–1), kept for endpoints that are answering: the
   * endpoints not known to answer (unresponsive, or not yet attempted by this dispatcher) together hold at
   * most the rest, so several black-holed endpoints cannot take the whole window (ADR 0009). Default 0.25;
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
   * Logger of the one line per attempt ({@link attemptLine}); default `logger`. It may skip redaction: that
   * line holds only ids, numbers and flags (src/app/dispatcher/attempt-line.test.ts keeps it so).
   */
  readonly attemptLogger?: Logger;
  readonly settings: DispatcherSettings;
  readonly observer?: DispatcherObserver;
  readonly onWake?: (listener: () => void) => () => void;
  /** Delivery and attempt spans (docs/reference/traces.md); default the no-op tracer. */
  readonly tracer?: Tracer;
}

/** The dispatcher role (STYLE.md "The delivery loop"). */
export interface Dispatcher {
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
  /** Attempts in flight now. */
  inFlight(): number;
  /** False after a failed claim until the next successful one (readiness). */
  healthy(): boolean;
}

/** The window is refilled at once when 1/REFILL_FRACTION of it (or a claim batch) is free. */
const REFILL_FRACTION = 32;
/** Otherwise freed slots are refilled after this delay, in ms (batches small refills into one claim). */
const REFILL_DELAY_MS = 10;
/**
 * Back-off after a failed claim, in ms: `min(CLAIM_BACKOFF_MAX_MS, CLAIM_BACKOFF_BASE_MS · 2^failures)`, each
 * delay jittered to [0.5, 1.5]× that. The cap is short so that a dispatcher resumes within seconds of the
 * database coming back, however long the outage was.
 */
export const CLAIM_BACKOFF_BASE_MS = 100;
/** Upper bound of the claim back-off before jitter, in ms (see {@link CLAIM_BACKOFF_BASE_MS}). */
export const CLAIM_BACKOFF_MAX_MS = 5_000;

interface Flight {
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

/** Makes a dispatcher (DESIGN §2, §9). */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { settings, logger, observer = {} } = deps;
  const attemptLogger = deps.attemptLogger ?? logger;
  const tracer = deps.tracer ?? NOOP_TRACER;
  const flights = new Map<string, Flight>();
  const book = createWindowBook(settings);
  let running = false;
  let healthy = true;
  let loopDone: Promise<void> = Promise.resolve();
  let signal: (() => void) | undefined;
  let drainWaiters: (() => void)[] = [];
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let refillTimer: NodeJS.Timeout | undefined;
  // Store calls of any kind (claim, record, heartbeat) failed since the last successful claim, and the claims
  // among them. A dispatcher whose window is full of outcomes waiting to be recorded does not claim during
  // an outage, so "claims resumed" is logged at the first successful claim after any store failure.
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

  const finish = (flight: Flight): void => {
    // The entry may already belong to a newer lease of the same delivery (this dispatcher reclaimed it
    // while the stale outcome waited to be written): leave that one in place.
    if (flights.get(flight.delivery.deliveryId) === flight) flights.delete(flight.delivery.deliveryId);
    observer.inFlight?.(flights.size);
    if (flights.size === 0) {
      const waiters = drainWaiters;
      drainWaiters = [];
      for (const w of waiters) w();
    }
    // Refill at once when a useful share of the window is free (or everything finished); otherwise soon,
    // so slots freed one by one (slow receivers, per-endpoint caps) are refilled in small batches.
    const free = settings.concurrency - flights.size;
    if (free >= Math.min(settings.claimBatch, Math.max(1, Math.ceil(settings.concurrency / REFILL_FRACTION))) || flights.size === 0) wakeLoop();
    else if (refillTimer === undefined) {
      refillTimer = setTimeout(() => {
        refillTimer = undefined;
        wakeLoop();
      }, REFILL_DELAY_MS);
      refillTimer.unref();
    }
  };

  const launch = (delivery: ClaimedDelivery): void => {
    const flight: Flight = { delivery, controller: new AbortController(), abandoned: false, recording: false, done: Promise.resolve(), trace: tracer.startDelivery(delivery) };
    flights.set(delivery.deliveryId, flight);
    flight.done = (async () => {
      try {
        flight.trace.attemptStarted();
        const outcome = await runAttempt({ sender: deps.sender, clock: deps.clock, random: deps.random, settings }, delivery, flight.controller.signal);
        flight.trace.attemptEnded(outcome.result, outcome.classification);
        if (flight.abandoned) return;
        book.note(delivery.endpointId, outcome.result.type === 'response');
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
        const line = attemptLine(delivery, outcome, recorded, settings.retryPolicy.delaysMs.length + 1);
        if (!recorded) attemptLogger.warn(line, 'attempt outcome fenced out: a newer lease holds this delivery');
        else attemptLogger.info(line, 'delivery.attempted');
        // The operator's log has what the tenant's record leaves out: the full reason, the addresses, the setting.
        const detail = outcome.record.operatorDetail;
        if (detail?.decidedBy !== undefined) {
          logger.warn({ deliveryId: delivery.deliveryId, endpointId: delivery.endpointId, errorKind: outcome.classification.errorKind, ...detail }, 'attempt refused or cut by a limit');
        }
      } catch (error) {
        logger.error({ err: error, deliveryId: delivery.deliveryId }, 'attempt failed unexpectedly');
      } finally {
        flight.trace.end();
        finish(flight);
      }
    })();
  };

  const tick = async (): Promise<number> => {
    const free = settings.concurrency - flights.size;
    if (free <= 0) return 0;
    const { limit, excludeEndpoints, window } = book.bounds([...flights.values()].map((f) => f.delivery.endpointId), free);
    const nowMs = deps.clock.nowMs();
    const sweep = nowMs - lastSweepMs >= settings.pollIntervalMs || nowMs < lastSweepMs;
    const result = await deps.store.claim({
      workerId: settings.workerId,
      sweep,
      excludeEndpoints,
      limit,
      window,
      leaseMs: settings.leaseMs,
      maxReclaims: settings.maxReclaims,
      now: deps.clock.sqlNow(),
    });
    healthy = true;
    if (storeFailures > 0) {
      logger.info({ failedClaims, failedStoreCalls: storeFailures }, 'claims resumed');
      storeFailures = 0;
      failedClaims = 0;
    }
    if (sweep) lastSweepMs = nowMs;
    if (result.deadLettered > 0) {
      observer.deadLettered?.(result.deadLettered, 'lease_lost_repeatedly');
      logger.warn({ count: result.deadLettered }, 'deliveries dead-lettered: lease lost repeatedly');
    }
    if (result.deliveries.length > 0) observer.claimed?.(result.deliveries.length, result.reclaimed);
    for (const delivery of result.deliveries) launch(delivery);
    observer.inFlight?.(flights.size);
    return result.deliveries.length;
  };

  const heartbeat = async (): Promise<readonly string[]> => {
    // Only attempts still in flight: an outcome handed to the recorder may already be written, and renewing
    // its (released) lease would report a lease as lost that was not.
    const live = [...flights.values()].filter((f) => !f.abandoned && !f.recording).map((f) => f.delivery);
    if (live.length === 0) return [];
    const lost = await deps.store.extendLeases(live, settings.leaseMs, deps.clock.sqlNow());
    for (const id of lost) {
      const flight = flights.get(id);
      if (flight === undefined) continue;
      flight.abandoned = true;
      flight.trace.leaseLost();
      flight.controller.abort();
    }
    if (lost.length > 0) {
      observer.leasesLost?.(lost.length);
      logger.warn({ deliveryIds: lost, workerId: settings.workerId }, 'lease lost: attempts abandoned, nothing will be written for them');
    }
    return lost;
  };

  const waitForWork = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (wakePending) {
        wakePending = false;
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        signal = undefined;
        resolve();
      }, ms);
      signal = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = async (): Promise<void> => {
    let failures = 0;
    while (running) {
      let claimed = 0;
      wakePending = false; // this claim sees everything committed before it starts
      try {
        claimed = await tick();
        failures = 0;
      } catch (error) {
        healthy = false;
        failures += 1;
        storeFailed(error, 'claim');
        const backoff = Math.min(CLAIM_BACKOFF_MAX_MS, CLAIM_BACKOFF_BASE_MS * 2 ** Math.min(failures, 16));
        const delay = Math.round(backoff * (0.5 + deps.random.next()));
        logger.warn({ err: error, retryInMs: delay }, 'claim failed; backing off');
        await waitForWork(delay);
        continue;
      }
      if (!running) break;
      // A claim that found work may have been cut by per-endpoint shares: claim again at once while slots
      // are free; an empty claim waits for a wake-up, a freed slot or the poll.
      if (claimed > 0 && flights.size < settings.concurrency) continue;
      await waitForWork(settings.pollIntervalMs);
    }
  };

  return {
    start() {
      if (running) return;
      running = true;
      unsubscribe = deps.onWake?.(wakeLoop);
      const beat = Math.max(10, Math.floor(settings.leaseMs / 3));
      heartbeatTimer = setInterval(() => {
        heartbeat().catch((error: unknown) => storeFailed(error, 'heartbeat'));
      }, beat);
      heartbeatTimer.unref();
      loopDone = loop();
    },

    async stop() {
      running = false;
      unsubscribe?.();
      wakeLoop();
      await loopDone;
      if (flights.size > 0) {
        let graceTimer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => { graceTimer = setTimeout(resolve, settings.shutdownGraceMs); });
        await Promise.race([this.drained(), grace]);
        clearTimeout(graceTimer);
      }
      const left = [...flights.values()];
      if (left.length > 0) {
        for (const f of left) {
          f.abandoned = true;
          f.controller.abort();
        }
        await Promise.all(left.map((f) => f.done));
        try {
          const fenced = await deps.store.releaseLeases(left.map((f) => f.delivery), deps.clock.sqlNow());
          logger.info({ released: left.length - fenced.length, fencedOut: fenced.length }, 'leases released at shutdown');
        } catch (error) {
          observer.storeError?.(error, 'release');
          logger.warn({ err: error }, 'could not release leases at shutdown; they will expire');
        }
      }
      if (heartbeatTimer !== undefined) clearInterval(heartbeatTimer);
      if (refillTimer !== undefined) clearTimeout(refillTimer);
      recorder.close();
    },

    tick,
    heartbeat,
    drained: () => (flights.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve))),
    inFlight: () => flights.size,
    healthy: () => healthy,
  };
}

/**
 * The fields of the one wide log line per attempt (STYLE.md), logged at info, or at warn when the outcome
 * was fenced out. Only ids, numbers, flags and closed-set words: no header, URL, body or secret, so the line
 * needs no redaction (issue 8 §4; src/app/dispatcher/attempt-line.test.ts fails if that stops being true).
 */
export function attemptLine(delivery: ClaimedDelivery, outcome: AttemptResult, recorded: boolean, maxAttempts: number): Readonly<Record<string, string | number | boolean | null | undefined>> {
  const { result, classification, next } = outcome;
  return {
    event: 'delivery.attempted',
    deliveryId: delivery.deliveryId,
    messageId: delivery.messageId,
    endpointId: delivery.endpointId,
    appId: delivery.appId,
    attempt: delivery.attemptNumber,
    maxAttempts,
    trigger: delivery.manual ? 'manual' : 'scheduled',
    outcome: classification.verdict,
    errorKind: classification.errorKind,
    status: classification.statusCode,
    durationMs: result.durationMs,
    next: next.next,
    nextDelayMs: next.next === 'retry' ? next.delayMs : undefined,
    deadReason: next.next === 'dead' ? next.reason : undefined,
    fencingToken: delivery.fencingToken,
    reclaimed: delivery.reclaimed,
    recorded,
  };
}
