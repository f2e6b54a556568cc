import type { ClaimedDelivery, ClaimWindow } from './delivery-store.ts';

/*
 * The store side of a broker transport (docs/guides/transports.md): the delivery rows are the outbox. The outbox
 * publisher stamps due rows and publishes their ids (`stampDue`, then `unstamp` what the broker did not confirm); a
 * broker message's id is leased with the fenced claim restricted to given ids (`claimIds`), with every gate of the
 * claim; `sweep` is the claim's housekeeping of expired leases, which the claim source runs before its claims.
 * Ids are bigint values as decimal strings; `now` is the time seam (null = the database clock).
 */

/** Why a given id was not leased by {@link BrokerOutboxStore.claimIds}. */
export type ClaimIdRefusal =
  /** Not due (a future retry, paused, leased and live, settled) or lost too often: its message is done with. */
  | 'not_due'
  /**
   * Its endpoint takes nothing now (breaker, pause, throttle, cap, rate limit): its stamp was cleared in the same call.
   */
  | 'gated'
  /** The caller's window has no room for its endpoint now: the caller may offer it again. */
  | 'window'
  /** The row was locked by another statement and skipped: the caller may offer it again. */
  | 'busy';

export interface ClaimIdsInput {
  readonly dispatcherId: string;
  /** Delivery ids from broker messages, each at most once. */
  readonly ids: readonly string[];
  /** Endpoints whose share of the caller's window is used up. */
  readonly excludeEndpoints: readonly string[];
  readonly window: ClaimWindow;
  readonly leaseMs: number;
  readonly maxReclaims: number;
  readonly now: Date | null;
}

export interface ClaimIdsResult {
  /** Leased by this call, each with its new fencing token. */
  readonly deliveries: readonly ClaimedDelivery[];
  /** How many of `deliveries` were taken over from an expired lease. */
  readonly reclaimed: number;
  /** The given ids not leased, with why; an id that names no row is `not_due`. */
  readonly refused: ReadonlyMap<string, ClaimIdRefusal>;
}

export interface StampDueInput {
  /** Most rows stamped by one call. */
  readonly limit: number;
  /** Most ids of one endpoint published and not yet leased at once: each endpoint's first due rows only. */
  readonly endpointAhead: number;
  /** A row stamped this long ago and still due is stamped again (its message was lost): the sweep, ms. */
  readonly sweepAfterMs: number;
  readonly maxReclaims: number;
  readonly now: Date | null;
}

/** One row stamped for publishing. */
export interface StampedDelivery {
  readonly deliveryId: string;
  readonly endpointId: string;
  /** Stamped again by the sweep: it was stamped before, longer than `sweepAfterMs` ago, and is still due. */
  readonly swept: boolean;
}

export interface Stamped {
  readonly deliveries: readonly StampedDelivery[];
  /**
   * The stamp written (the statement's instant) in Unix microseconds, as text: `unstamp` clears only this stamp. Not a
   * Date: the column holds microseconds and a Date keeps milliseconds, so a Date read back never equals it.
   */
  readonly stampedAt: string | null;
}

export interface BrokerOutboxStore {
  /**
   * Leases the given ids, in one statement, with every gate of the claim (breaker, pause, throttle, in-flight cap,
   * token bucket, the caller's share and reserve; ADR 0004, ADR 0009): a duplicate or redelivered id leases nothing
   * twice. Ids refused as `gated` lose their stamp in the same statement.
   */
  claimIds(input: ClaimIdsInput): Promise<ClaimIdsResult>;
  /**
   * Stamps, in one statement, the due rows to publish now and returns them: each endpoint's first due rows not yet
   * published for their due instant, within what its gates allow less what it has published and not leased; expired
   * leases not yet published since they expired; and rows stamped longer than `sweepAfterMs` ago and still due.
   */
  stampDue(input: StampDueInput): Promise<Stamped>;
  /** Clears the stamp `stampedAt` of the ids whose publish failed: the next `stampDue` takes them again. */
  unstamp(ids: readonly string[], stampedAt: string): Promise<void>;
  /**
   * The claim's housekeeping of expired leases (lost too often: dead-lettered); returns how many were dead-lettered.
   */
  sweep(maxReclaims: number, now: Date | null): Promise<number>;
}
