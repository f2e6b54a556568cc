import type { Tx } from './unit-of-work.ts';

/**
 * Retention and erasure (docs/guides/security.md, docs/design.md#scale). Every method is one bounded batch in one short
 * statement (its own transaction), reading hot rows with SKIP LOCKED, so it never holds delivery back; callers loop.
 * `now: Date | null` follows the Clock seam (null = the database clock).
 */
export interface RetentionStore {
  /**
   * The retention classes of messages whose payload is still held: their `retention_hours`, or null for
   * those that follow the deployment default.
   */
  payloadRetentionClasses(): Promise<readonly (number | null)[]>;
  /**
   * Expunges, among up to `batch` messages of one retention class old enough to expire (read after
   * `cursor`), the payloads whose retention has passed since the last final transition of all the message's
   * deliveries (including deliveries already pruned), and that have no delivery pending or leased (a
   * delivery locked by someone else counts as live). Their attempts' stored response bodies go too. The
   * message, its deliveries, attempts and timeline stay.
   * @returns how many were read (fewer than `batch` = the class is done), expunged, and the next cursor
   */
  expirePayloads(input: {
    readonly retentionHours: number | null;
    readonly defaultHours: number;
    readonly batch: number;
    readonly cursor: PayloadCursor | null;
    readonly now: Date | null;
  }): Promise<{ readonly read: number; readonly expunged: number; readonly cursor: PayloadCursor | null }>;
  /**
   * Deletes up to `batch` deliveries that succeeded at least `ageMs` ago, with their attempts and timeline
   * rows outside dated history partitions, which go with their partition (docs/adr/0030-history-partitions.md)
   * (skipping rows locked by anyone else), and notes on their messages when they reached their final
   * state. Returns how many deliveries were deleted.
   */
  pruneSucceeded(input: { readonly ageMs: number; readonly batch: number; readonly now: Date | null }): Promise<number>;
  /** The id of the application's newest message in `tx` (where an erasure begun now stops); null when it has none. */
  newestMessageId(tx: Tx, appId: string): Promise<string | null>;
  /**
   * One batch of an erasure, in `tx` (the task runner's step): reads up to `batch` of the application's
   * messages with ids after `afterId` up to `untilId`, in id order, and expunges the held payloads (and
   * attempt response bodies) of those matching `filter`.
   * @returns the messages read (fewer than `batch` = the erasure is done), the payloads expunged, and the
   *   last id read (null when none was)
   */
  eraseBatch(
    tx: Tx,
    input: {
      readonly appId: string;
      readonly afterId: string;
      readonly untilId: string;
      readonly filter: ErasureFilter;
      readonly batch: number;
      readonly now: Date | null;
    },
  ): Promise<{ readonly read: number; readonly expunged: number; readonly lastId: string | null }>;
}

/** Position of a payload-expiry scan within one retention class. */
export interface PayloadCursor {
  /** The created_at of the last message read, in Unix microseconds (exact: the column holds microseconds). */
  readonly createdAtUs: string;
  readonly id: string;
}

/** Which payloads an erasure removes: all of an application's, or those with a tag, or an event-id prefix. */
export interface ErasureFilter {
  readonly tag: string | null;
  readonly eventIdPrefix: string | null;
}

/** An erasure task, as its background task (kind `application.purge_content`) holds it. */
export interface ErasureTask {
  readonly id: string;
  readonly appId: string;
  readonly status: 'running' | 'finished' | 'failed';
  readonly filter: ErasureFilter;
  /** Payloads expunged so far (Svix `messagesPurged`). */
  readonly messagesPurged: number;
  readonly updatedAt: Date;
}
