import type { KeyObject } from 'node:crypto';
import type { DeliveryState } from '../domain/delivery-state.ts';
import type { ErrorKind } from '../domain/error-kinds.ts';
import type { NextStep } from '../domain/retry-schedule.ts';
import type { RetryPolicyFields } from '../domain/retry-policy.ts';
import type { TraceCarrier } from './trace-carrier.ts';

/**
 * The store port of the delivery path (docs/design.md#the-protocol): claim → extendLease → recordAttempts, plus
 * releaseLease for graceful stop. Every write after the claim is guarded by (delivery id, fencing token, dispatcher
 * id). Instants are passed as `now: Date | null` (null = database clock); durations are in ms.
 * Delivery ids and fencing tokens are bigint values carried as decimal strings.
 */
export interface DeliveryStore {
  /**
   * Claims up to `limit` due deliveries in one statement with `FOR UPDATE SKIP LOCKED` (docs/design.md#the-protocol,
   * step 1): pending with next_attempt_at ≤ now, or leased with an expired lease (a reclaim, counted). Deliveries of
   * endpoints that are not active are not claimed. Before claiming (when `sweep` is not false), expired
   * leases already reclaimed `maxReclaims` times are dead-lettered with reason `lease_lost_repeatedly`.
   */
  claim(input: ClaimInput): Promise<ClaimResult>;
  /**
   * Renews leases in one statement (the heartbeat, docs/design.md#the-protocol, step 2), each guarded by its fencing
   * token and dispatcher id. Returns the delivery ids whose renewal matched zero rows: those leases are lost.
   */
  extendLeases(leases: readonly LeaseRef[], leaseMs: number, now: Date | null): Promise<readonly string[]>;
  /**
   * Gives leases back without charging an attempt (graceful stop): each delivery is pending again, due now.
   * Returns the ids that were fenced out (nothing written for them).
   */
  releaseLeases(leases: readonly LeaseRef[], now: Date | null): Promise<readonly string[]>;
  /**
   * Records attempts and next states in one transaction (docs/design.md#the-protocol, step 3). Rows whose fencing guard
   * no longer matches write nothing at all (no attempt, no timeline row); the others are unaffected.
   */
  recordAttempts(records: readonly AttemptRecord[], now: Date | null): Promise<RecordResult>;
}

/** Identifies one lease: the delivery, the token of the claim, and the dispatcher that holds it. */
export interface LeaseRef {
  readonly deliveryId: string;
  readonly fencingToken: string;
  readonly dispatcherId: string;
}

export interface ClaimInput {
  readonly dispatcherId: string;
  readonly limit: number;
  /**
   * Run the sweep of expired leases (lost-lease dead letters, leases of deleted/disabled/paused endpoints)
   * before claiming. Default true; a dispatcher sweeps about once per poll interval, not on every wake-up.
   */
  readonly sweep?: boolean;
  /** Endpoints this dispatcher will not take more of now (their share of its window is used up). */
  readonly excludeEndpoints?: readonly string[];
  readonly leaseMs: number;
  readonly maxReclaims: number;
  readonly now: Date | null;
  /**
   * The caller's in-flight window, so that its shares hold within this claim (ADR 0009). Absent: no bound but `limit`.
   */
  readonly window?: ClaimWindow;
}

/**
 * A dispatcher's view of its in-flight window at claim time (docs/adr/0009-window-share-within-a-claim.md).
 * The claim gives each endpoint at most `share − held` deliveries (reclaims included), and the endpoints
 * not in `answering` together at most `budget`; past the budget, an endpoint that holds nothing and is not
 * in `unresponsive` still gets one delivery (the attempt that can show it answers).
 */
export interface ClaimWindow {
  /** Most deliveries one endpoint may hold in the window (≥ 1). */
  readonly share: number;
  /** Deliveries in flight now, by endpoint id (endpoints holding none may be left out). */
  readonly held: ReadonlyMap<string, number>;
  /** Endpoints whose last attempt on this dispatcher got a status line. */
  readonly answering: readonly string[];
  /** Endpoints whose last attempt on this dispatcher ended without a status line (timeout, reset, refusal). */
  readonly unresponsive: readonly string[];
  /** Deliveries the endpoints not in `answering` may take together in this claim (≥ 0). */
  readonly budget: number;
}

export interface ClaimResult {
  readonly deliveries: readonly ClaimedDelivery[];
  /** How many of `deliveries` were taken over from an expired lease. */
  readonly reclaimed: number;
  /** Deliveries dead-lettered as `lease_lost_repeatedly` by this call. */
  readonly deadLettered: number;
}

/** Everything one attempt needs, loaded by the claim (payload decrypted, secrets as key bytes). */
export interface ClaimedDelivery extends LeaseRef {
  readonly appId: string;
  readonly messageId: string;
  readonly endpointId: string;
  readonly eventType: string;
  /** 1-based number of the attempt about to be made (recorded attempts + 1). */
  readonly attemptNumber: number;
  /** A resend (manual attempt): a failure is not retried. */
  readonly manual: boolean;
  readonly reclaimed: boolean;
  readonly url: string;
  /** Exact payload bytes as published (a raw message's body). */
  readonly payload: Uint8Array;
  /** Content type of a raw message's body; null or absent for a JSON payload (sent as application/json). */
  readonly contentType?: string | null;
  /**
   * Signing keys: the current secret first, then the previous one during a rotation grace period. Raw key
   * bytes or KeyObjects made from them (the PostgreSQL store imports each endpoint's key once).
   */
  readonly signingKeys: readonly (Uint8Array | KeyObject)[];
  /** Custom static endpoint headers (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Ids of `signingKeys`, in the same order: a fingerprint of each secret, never the secret
   * (OperatorDetail.signedWith).
   */
  readonly signingKeyIds?: readonly string[];
  /** W3C trace context stored with the message (its publish span), loaded only when tracing is on; else absent. */
  readonly traceContext?: TraceCarrier | null;
  /**
   * The retry policy the delivery was created with (its endpoint's over its event type's, src/domain/retry-policy.ts);
   * null or absent = the installation's settings for every field.
   */
  readonly retryPolicy?: RetryPolicyFields | null;
}

/** One attempt's outcome to record, fenced by its lease. */
export interface AttemptRecord extends LeaseRef {
  readonly endpointId: string;
  readonly attemptId: string;
  readonly attemptNumber: number;
  readonly trigger: 'scheduled' | 'manual';
  readonly url: string;
  readonly succeeded: boolean;
  readonly statusCode: number | null;
  readonly responseBody: string;
  readonly location: string | null;
  readonly errorKind: ErrorKind | null;
  readonly errorDetail: string | null;
  readonly durationMs: number;
  readonly next: NextStep;
  /** Throttle the whole endpoint for this long (429/503 with Retry-After), in ms; null = no throttle. */
  readonly throttleEndpointMs: number | null;
  /** Disable the endpoint with this reason (410 Gone); null = leave it. */
  readonly disableEndpointReason: string | null;
  /**
   * What only the operator sees ({@link OperatorDetail}): stored with the attempt, never in the tenant's view.
   * Absent: none.
   */
  readonly operatorDetail?: OperatorDetail | null;
}

/**
 * The operator's part of an attempt record (docs/adr/0009-window-share-within-a-claim.md). Every field is
 * optional; none holds a secret (signing secrets appear as key ids only).
 */
export interface OperatorDetail {
  /** Every address the endpoint's host name resolved to (DNS answer as checked by the SSRF guard). */
  readonly resolvedAddresses?: readonly string[];
  /** The address the request's connection was made to (`ip` or `[ip]`, then `:port`). */
  readonly connectedAddress?: string | null;
  /** The full reason of a failure, internal names and addresses included (the tenant sees a short one). */
  readonly reason?: string;
  /** The setting or limit that decided a refusal, e.g. `TIDINGS_EGRESS_ALLOWLIST`, `TIDINGS_MAX_RESPONSE_BYTES`. */
  readonly decidedBy?: string;
  /** Ids of the secrets that signed the request, current first (see `signingKeyId`). */
  readonly signedWith?: readonly string[];
  /**
   * The receiver's Retry-After, as received, and whether it set the next attempt's delay (or held the endpoint back).
   */
  readonly retryAfter?: { readonly received: string; readonly delayMs: number | null; readonly applied: boolean };
}

export interface RecordResult {
  /** Delivery ids whose outcome was written. */
  readonly recorded: readonly string[];
  /** Delivery ids fenced out (nothing written for them). */
  readonly fencedOut: readonly string[];
}

/** A delivery row as read by queries and tests. Instants are Dates from the database clock. */
export interface DeliveryRow {
  readonly id: string;
  readonly appId: string;
  readonly messageId: string;
  readonly endpointId: string;
  readonly state: DeliveryState;
  readonly nextAttemptAt: Date;
  readonly attemptCount: number;
  readonly fencingToken: string;
  readonly dispatcherId: string | null;
  readonly leaseExpiresAt: Date | null;
  readonly reclaimCount: number;
  readonly lastStatusCode: number | null;
  readonly lastErrorKind: string | null;
  readonly lastAttemptAt: Date | null;
  readonly deadReason: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}
