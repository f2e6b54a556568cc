import type { Tx } from './unit-of-work.ts';

/**
 * Retention and erasure (docs/guides/security.md, docs/design.md#scale). Every method is one bounded batch in one short statement
 * (its own transaction), reading hot rows with SKIP LOCKED, so it never holds delivery back; callers loop.
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
  expirePayloads(input: { readonly retentionHours: number | null; readonly defaultHours: number; readonly batch: number; readonly cursor: PayloadCursor | null; readonly now: Date | null }): Promise<{ readonly read: number; readonly expunged: number; readonly cursor: PayloadCursor | null }>;
  /**
   * Deletes up to `batch` deliveries that succeeded at least `ageMs` ago, with their attempts and timeline
   * rows (skipping rows locked by anyone else), and notes on their messages when they reached their final
   * state. Returns how many deliveries were deleted.
   */
  pruneSucceeded(input: { readonly ageMs: number; readonly batch: number; readonly now: Date | null }): Promise<number>;
  /** Deletes up to `batch` expired idempotency keys. Returns how many. */
  pruneIdempotencyKeys(input: { readonly batch: number; readonly now: Date | null }): Promise<number>;
  /** Records an erasure task (status running) for the application's messages matching `filter`. */
  insertErasure(tx: Tx, task: { readonly id: string; readonly appId: string; readonly filter: ErasureFilter }, now: Date | null): Promise<ErasureTask>;
  /**
   * Runs one batch of one running erasure task (the least recently advanced one nobody else holds), in one
   * transaction holding the task's row: reads up to `batch` of its application's messages after its cursor,
   * expunges the payloads (and response bodies) of those matching, and stores the progress; the task is
   * finished when its messages are exhausted. A task left running by a stopped process resumes from its
   * last committed batch. Returns null when no task was runnable.
   */
  stepErasure(input: { readonly batch: number; readonly now: Date | null }): Promise<ErasureTask | null>;
}

/** Position of a payload-expiry scan within one retention class. */
export interface PayloadCursor {
  readonly createdAt: Date;
  readonly id: string;
}

/** Which payloads an erasure removes: all of an application's, or those with a tag, or an event-id prefix. */
export interface ErasureFilter {
  readonly tag: string | null;
  readonly eventIdPrefix: string | null;
}

/** Background-task kind of erasures (Svix `application.purge_content`). */
export const ERASURE_TASK_KIND = 'application.purge_content';

/** An erasure task as stored in background_tasks. */
export interface ErasureTask {
  readonly id: string;
  readonly appId: string;
  readonly status: 'running' | 'finished' | 'failed';
  readonly filter: ErasureFilter;
  /** Payloads expunged so far (Svix `messagesPurged`). */
  readonly messagesPurged: number;
  readonly updatedAt: Date;
}
