import type { ClaimedDelivery, ClaimWindow } from './delivery-store.ts';

/*
 * Where due work reaches a dispatcher (docs/design.md#scale, "Work sources"; docs/adr/0020-work-sources.md): one port,
 * several sources. Today three: the claim (a statement over due rows), the publish hand-off (deliveries a publish in
 * the same process inserted already leased to this dispatcher, ADR 0018) and the broker source of a broker transport
 * (ADR 0026: its messages carry delivery ids, its `take` leases those rows with a fenced claim by id, and its
 * `settled` acknowledges a message once the attempt's record committed). Another source implements this port and is
 * wired in src/main/dispatcher-role.ts. Whatever the source, a delivery ends in the same lease, fencing token
 * and record; flow control (share, reserve, caps, breaker) is decided where the lease is granted.
 */

/**
 * One take: up to `limit` due deliveries, leased to `dispatcherId` for `leaseMs`, each endpoint within the
 * dispatcher's window (`excludeEndpoints`, `window`: docs/adr/0009-window-share-within-a-claim.md). Durations in ms;
 * `now` is the time seam (null = the database clock).
 */
export interface TakeRequest {
  readonly dispatcherId: string;
  readonly limit: number;
  /** Endpoints whose share of the window is used up: nothing of theirs is taken. */
  readonly excludeEndpoints: readonly string[];
  readonly window: ClaimWindow;
  readonly leaseMs: number;
  /** A delivery reclaimed this many times without a recorded outcome is dead-lettered instead of taken. */
  readonly maxReclaims: number;
  readonly now: Date | null;
}

/** What one take leased. */
export interface Taken {
  /** Leased to the dispatcher by this take, each with its fencing token. */
  readonly deliveries: readonly ClaimedDelivery[];
  /** How many of `deliveries` were taken over from an expired lease. */
  readonly reclaimed: number;
  /** Deliveries dead-lettered as `lease_lost_repeatedly` by this take. */
  readonly deadLettered: number;
}

/**
 * Room of the dispatcher's window that a source has promised and not yet handed over (the hand-off's open offers):
 * the dispatcher counts it as held, so that its takes and the source together stay within the window and the shares.
 */
export interface Reserved {
  readonly slots: number;
  /** Per endpoint id, the deliveries promised (endpoints with none left out). */
  readonly endpoints: ReadonlyMap<string, number>;
}

/**
 * The dispatcher's window as a source sees it when it promises room in it (one reading, valid until the next event-loop
 * turn). Every count includes what every source has reserved.
 */
export interface WindowRoom {
  readonly dispatcherId: string;
  /** The lease a source grants on the dispatcher's behalf, ms. */
  readonly leaseMs: number;
  /** The instant of this reading, ms of the dispatcher's clock: a lease granted after it lasts until then + leaseMs. */
  readonly nowMs: number;
  /** Slots free for more leases (may be ≤ 0: none). */
  readonly free: number;
  /** Most deliveries one endpoint may hold in the window. */
  readonly share: number;
  /** Deliveries `endpointId` holds: in flight, waiting for a slot, or promised by a source. */
  held(endpointId: string): number;
  /** Up to `max` endpoints whose last attempt on this dispatcher got a status line, the most recent first. */
  answering(max: number): readonly string[];
}

/** The dispatcher's side of a source it is connected to (see {@link WorkSource.connect}). */
export interface WorkSink {
  /** A take from this source may find work now (a publish's NOTIFY, a broker message): the wait ends. Never throws. */
  wake(): void;
  /**
   * "These are yours already": deliveries the source leased to this dispatcher itself, their leases lasting at least
   * until `leaseUntilMs` (ms of the dispatcher's clock). A running dispatcher sends them at once; a stopping one
   * releases their leases (fenced). Never throws.
   */
  yours(deliveries: readonly ClaimedDelivery[], leaseUntilMs: number): void;
  /** The window to promise room in; null while the dispatcher takes no work (stopped, backing off, its window full). */
  room(): WindowRoom | null;
}

/**
 * A source of due work for one dispatcher. Every member but `name` is optional: a source pulls (`take`), pushes
 * (`connect`, then `WorkSink.yours`), or both.
 */
export interface WorkSource {
  /** Names the source in logs and docs: `claim`, `handoff`, later the broker's name. */
  readonly name: string;
  /**
   * Leases up to `request.limit` due deliveries to the dispatcher, in one call (the claim: one statement). The
   * dispatcher calls it when its pacing says so, into its free slots; a failure backs its takes off.
   */
  take?(request: TakeRequest): Promise<Taken>;
  /** Connects the dispatcher as it starts; the function returned disconnects it as its stop begins. */
  connect?(sink: WorkSink): () => void;
  /** The room this source has promised on the dispatcher's behalf and not yet handed over. */
  reserved?(): Reserved;
  /**
   * The record of a delivery from this source committed (`recorded`) or was fenced out (a newer lease holds it). Not
   * called for a delivery given up without a record (lease lost, released at the stop): its lease expires or was
   * released, and it is sent again. A broker source acknowledges its message here.
   */
  settled?(delivery: ClaimedDelivery, recorded: boolean): void;
  /**
   * The dispatcher gave a delivery from this source up without a record: its lease was lost, it was handed back or
   * dropped unsent, or it was released at the stop. Its row is due again (released) or held by a newer lease, and is
   * sent again from the rows. A broker source acknowledges its message here: the outbox publishes the id again.
   */
  released?(delivery: ClaimedDelivery): void;
}
