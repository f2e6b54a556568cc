import type { Tx } from './unit-of-work.ts';

/** States a bulk replay may move back to pending (docs/design.md#delivery-lifecycle: dead, skipped or succeeded). */
export type ReplayableState = 'dead' | 'skipped' | 'succeeded';

/** Selection and pace shared by the replay batches. Instants from the database clock; `now` = Clock seam. */
export interface ReplayBatchBase {
  readonly appId: string;
  /** Messages created in [since, until) (until null = unbounded). */
  readonly since: Date;
  readonly until: Date | null;
  /** Continue after this cursor (as returned by the previous batch); null = from the start. */
  readonly after: string | null;
  /** Most rows examined by this batch. */
  readonly limit: number;
  /**
   * Pace: deliveries queued for one endpoint are due at least this many ms apart, starting at the later of
   * now and that endpoint's slot in `slots` (the next free instant left by the previous batch).
   */
  readonly intervalMs: number;
  readonly slots: Readonly<Record<string, Date>>;
  /** Timeline reason of the rows this batch moves (e.g. `recover_requested`). */
  readonly reason: string;
  readonly now: Date | null;
}

/** A batch of a delivery-based replay (recover, bulk replay, dead-letter replay). */
export interface DeliveryReplayBatch extends ReplayBatchBase {
  /** One endpoint, or null = every endpoint of the application. */
  readonly endpointId: string | null;
  readonly states: readonly ReplayableState[];
  readonly eventTypes: readonly string[] | null;
  readonly channel: string | null;
  readonly tag: string | null;
  /** The class of the last attempt's HTTP status (0 = none, 100…500), or null = any. */
  readonly statusCodeClass: number | null;
}

/** A batch of replay-missing: one endpoint's skipped deliveries and the messages it has no delivery for. */
export interface MissingReplayBatch extends ReplayBatchBase {
  readonly endpointId: string;
}

/** What one batch did. */
export interface ReplayBatchResult {
  /** The cursor to continue after (the last row examined), unchanged when none was. */
  readonly cursor: string | null;
  /** Rows examined; fewer than `limit` means the selection is exhausted. */
  readonly scanned: number;
  /** Deliveries moved to pending or made (each will be sent once more). */
  readonly queued: number;
  /** Examined but already pending, leased, or already attempted (replay-missing), so not queued again. */
  readonly alreadyQueued: number;
  /** Examined but their message's content was expunged, so there is nothing to send. */
  readonly expunged: number;
  /** Examined but their endpoint is deleted or disabled. */
  readonly unavailable: number;
  /** Per endpoint that got deliveries: the next free instant for the pace. */
  readonly slots: Readonly<Record<string, Date>>;
  /** The database's now for this batch (slots before it are no longer needed). */
  readonly at: Date;
}

/**
 * The pending deliveries of one endpoint, for messages created in a window, that wait behind the endpoint
 * (its pause, breaker or a receiver's Retry-After) rather than their schedule: a replay cannot send them
 * sooner, and a recover does not select them (they are not dead letters).
 */
export interface HeldSummary {
  /** How many, in all (the sum of {@link byKind}). */
  readonly held: number;
  readonly byKind: { readonly paused: number; readonly breaker: number; readonly throttled: number };
  /** The latest end of their holds that has one (a breaker's cool-down, a throttle); null when none has. */
  readonly heldUntil: Date | null;
}

/**
 * Operator actions on deliveries (docs/design.md#delivery-lifecycle): resend (one manual attempt now) and replay (dead,
 * skipped or succeeded → pending with a fresh schedule; idempotent per delivery).
 */
export interface ReplayStore {
  /**
   * Queues one manual attempt of a message to an endpoint, due now (Svix "resend"), in `tx` (the request's
   * transaction, shared with its Idempotency-Key); dispatchers are woken after commit. A terminal delivery
   * (dead, succeeded, skipped) becomes pending with `manual` set: if that attempt fails it returns to the
   * state it had and is not retried. A pending delivery is made due now. A leased one is left alone (an
   * attempt is already in flight). With no delivery yet for the pair, one is made.
   * @returns false when the message or the endpoint does not exist in the application (or is deleted)
   * @throws AppError `conflict` when the endpoint is disabled or paused, or the message content was expunged
   */
  resend(
    tx: Tx,
    input: {
      readonly appId: string;
      readonly messageId: string;
      readonly endpointId: string;
      readonly now: Date | null;
    },
  ): Promise<boolean>;
  /**
   * Replay (docs/design.md#delivery-lifecycle), one bounded batch in `tx`: the selected deliveries in one of `states`
   * go back to pending with a fresh schedule (attempt_count 0: the retry schedule starts over; reclaim count, manual
   * flags, lease and dead reason cleared), due at the pace of {@link ReplayBatchBase.intervalMs}, each with a
   * timeline row. Idempotent per delivery: one already pending or leased is not selected (and a row that
   * changed meanwhile is re-checked by the UPDATE). The message keeps its id, so the webhook-id is the
   * original. Deliveries of expunged messages and of deleted or disabled endpoints are left alone. Wakes
   * dispatchers when `tx` commits (NOTIFY on a server, `wake` in process). Cursor: the delivery id.
   */
  replayDeliveries(tx: Tx, batch: DeliveryReplayBatch): Promise<ReplayBatchResult>;
  /**
   * Replay-missing, one bounded batch in `tx`, over the application's messages in the window (cursor: the
   * message id): a skipped delivery to the endpoint goes back to pending as in {@link replayDeliveries}; a
   * message that the endpoint's current subscription (event types, channels) matches and that has no
   * delivery to it gets one, pending. Messages already attempted, pending or leased are left alone, so each
   * message is sent once.
   */
  replayMissing(tx: Tx, batch: MissingReplayBatch): Promise<ReplayBatchResult>;
  /**
   * The held pending deliveries of endpoint `endpointId` for messages created in [since, until) (until null
   * = unbounded), judged at `now` (null = the database clock). Reads the endpoint's pending deliveries
   * (deliveries_endpoint_due).
   */
  countHeld(
    tx: Tx,
    input: {
      readonly appId: string;
      readonly endpointId: string;
      readonly since: Date;
      readonly until: Date | null;
      readonly now: Date | null;
    },
  ): Promise<HeldSummary>;
}
