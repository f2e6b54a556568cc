import type { RetryPolicy } from '../../domain/retry-schedule.ts';
import type { SignatureHeaderSet } from '../../domain/signing.ts';
import type { AttemptResult } from './attempt.ts';
import type { StoreCall } from './store-health.ts';

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
   * TIDINGS_WINDOW_RESERVE's in the config schema; at least one slot when `concurrency` ≥ 2 and the fraction is above 0.
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
