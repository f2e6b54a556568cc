import type { RetryPolicy } from '../../domain/retry-schedule.ts';
import type { SignatureHeaderSet } from '../../domain/signing.ts';
import type { Clock, Random } from '../../ports/clock.ts';
import type { DeliveryStore } from '../../ports/delivery-store.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Sender } from '../../ports/sender.ts';
import type { Tracer } from '../../ports/tracer.ts';
import type { WorkSource } from '../../ports/work-source.ts';
import type { AttemptResult } from './attempt.ts';
import type { LoopTimers } from './loop-timers.ts';
import type { StoreCall } from './store-health.ts';

/*
 * The dispatcher's contract: its settings, dependencies and hooks, and what it offers (createDispatcher in
 * dispatcher.ts, which re-exports these names).
 */

/** Settings of a dispatcher. Durations in ms. */
export interface DispatcherSettings {
  readonly dispatcherId: string;
  /** Requests in flight at most; takes fill free slots, plus `claimAheadCount` waiting for one. */
  readonly concurrency: number;
  /** Most deliveries per claim statement. */
  readonly claimBatch: number;
  readonly leaseMs: number;
  readonly maxReclaims: number;
  readonly pollIntervalMs: number;
  readonly shutdownGraceMs: number;
  /**
   * Deliveries claimed ahead of free slots, a count ≥ 0 (default 0): each waits for a slot, which an answer frees and
   * the next waiting delivery takes at once (in-flight.ts; docs/adr/0016-hot-path-cost.md, decision 16). The
   * configuration's TIDINGS_CLAIM_AHEAD is a fraction of the window; the dispatcher role turns it into this count.
   */
  readonly claimAheadCount?: number;
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
   * TIDINGS_WINDOW_RESERVE's in the config schema; at least one slot when `concurrency` ≥ 2 and the fraction is
   * above 0.
   */
  readonly windowReserve?: number;
  readonly retryPolicy: RetryPolicy;
  /** Signature headers each request carries (TIDINGS_SIGNATURE_HEADERS); default `both`. */
  readonly signatureHeaders?: SignatureHeaderSet;
}

/** Hooks for metrics; every one optional. */
export interface DispatcherObserver {
  /** Deliveries leased to the dispatcher by a take, or handed to it by a source that pushes (`reclaimed` 0). */
  claimed?(count: number, reclaimed: number): void;
  deadLettered?(count: number, reason: string): void;
  attempted?(result: AttemptResult, recorded: boolean): void;
  fencedOut?(count: number): void;
  leasesLost?(count: number): void;
  storeError?(error: unknown, during: StoreCall): void;
  inFlight?(count: number): void;
}

/** The loop's state: `running` takes work; `draining` takes no more and waits for in-flight attempts; `stopped`. */
export type LoopState = 'running' | 'draining' | 'stopped';

/** Dependencies of `createDispatcher` (dispatcher.ts). */
export interface DispatcherDeps {
  /** Where leases are kept and outcomes written: heartbeat, release, record (and the default source's claim). */
  readonly store: DeliveryStore;
  /**
   * Where due work comes from (src/ports/work-source.ts): taken from in this order, connected while running.
   * Default: the claim over `store` alone, with no wake-ups (it polls).
   */
  readonly sources?: readonly WorkSource[];
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
  /** The loop's timers; default `systemTimers` (loop-timers.ts). */
  readonly timers?: LoopTimers;
  /** Delivery and attempt spans (docs/reference/traces.md); default the no-op tracer. */
  readonly tracer?: Tracer;
}

/** The dispatcher role: a thin loop over its work sources, its store and its sender (`createDispatcher`). */
export interface Dispatcher {
  /** Starts the loop: connect the sources, take into free slots, poll, wake on their wake-ups, heartbeat, back off. */
  start(): void;
  /**
   * Graceful stop: take no more; let in-flight attempts finish within the grace period; abort the rest and
   * release their leases (fenced); resolves when nothing is in flight.
   */
  stop(): Promise<void>;
  /** One take from the pulling sources into the free slots; launches the attempts and returns how many were taken. */
  tick(): Promise<number>;
  /** Renews every in-flight lease once; returns the ids whose lease was lost. */
  heartbeat(): Promise<readonly string[]>;
  /** Resolves when no attempt is in flight (test seam). */
  drained(): Promise<void>;
  /** Attempts not finished: requests open and outcomes waiting to be written. */
  inFlight(): number;
  /** False after a failed take until the next successful one (readiness). */
  healthy(): boolean;
  /** Where the loop is: running, draining (stop() under way) or stopped. */
  state(): LoopState;
}
