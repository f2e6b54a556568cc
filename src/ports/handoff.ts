import type { ClaimedDelivery } from './delivery-store.ts';

/**
 * Room that a dispatcher in the publishing process offers one publish statement: the statement may insert up to
 * `slots` of its new deliveries already leased to `dispatcherId` (docs/adr/0018-publish-hands-off-leases.md),
 * each endpoint at most its `room`. Only endpoints listed here are taken, and only deliveries due at once to an
 * active endpoint with no in-flight cap, no rate limit, a closed breaker and no throttle; every other delivery is
 * inserted pending and claimed as before.
 */
export interface HandoffOffer {
  readonly dispatcherId: string;
  /** Lease length, ms: the statement writes lease_expires_at = its instant + leaseMs. */
  readonly leaseMs: number;
  /** Most deliveries the statement may lease (≥ 1). */
  readonly slots: number;
  /** Endpoints the statement may lease for (parallel to `room`). */
  readonly endpointIds: readonly string[];
  /** Most deliveries of each endpoint of `endpointIds` (≥ 1 each). */
  readonly room: readonly number[];
  /** Epoch ms by the dispatcher's clock before the statement started: its leases last at least until then + leaseMs. */
  readonly leaseFromMs: number;
}

/**
 * The publish side of the hand-off (docs/adr/0018-publish-hands-off-leases.md): what the message store sees of the
 * hand-off source of its process (src/app/dispatcher/handoff-source.ts), one of the dispatcher's work sources
 * (./work-source.ts). The store asks for an `offer` as a publish statement outside a caller's transaction starts and,
 * once that statement (or the transaction around it) has ended, calls `adopt` exactly once with the deliveries it
 * committed leased — none after a failure, which gives the room back. The store never reaches the dispatcher: the
 * source books the room and hands the leases on.
 */
export interface Handoff {
  /** Room for a statement of `messages` messages, or null (the dispatcher is not claiming, or its window is full). */
  offer(messages: number): HandoffOffer | null;
  /**
   * The statement of `offer` ended; `deliveries` are committed and leased to the offer's dispatcher (fencing token 1).
   * Never throws.
   */
  adopt(offer: HandoffOffer, deliveries: readonly ClaimedDelivery[]): void;
}
