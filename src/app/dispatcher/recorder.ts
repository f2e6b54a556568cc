import type { AttemptRecord, DeliveryStore, RecordResult } from '../../ports/delivery-store.ts';

/** Settings of {@link createRecorder}. Durations in ms. */
export interface RecorderOptions {
  /** Most outcomes written by one statement. */
  readonly maxBatch: number;
  /** First retry delay after a failed write; doubles up to `maxRetryDelayMs`. */
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
  readonly now: () => Date | null;
  /** Called when a batch write fails (it is retried, never dropped). */
  readonly onError: (error: unknown) => void;
}

/** Writes attempt outcomes in batches. */
export interface Recorder {
  /**
   * Queues one outcome. Resolves once it is written — `true` when recorded, `false` when fenced out. While
   * a batch is being written, further outcomes gather and go together in the next statement (the batch
   * grows with load, with no timer). A failed write is retried with back-off until it succeeds or the
   * recorder is closed; then the promise rejects and the lease simply expires (a redelivery, never a loss).
   */
  record(record: AttemptRecord): Promise<boolean>;
  /**
   * Ends a back-off wait after a failed write at once, so the batch is tried again now: the dispatcher calls
   * it when another store call (a claim) succeeded again, so that outcomes held during an outage are
   * written as soon as claims resume rather than after the rest of a back-off of up to `maxRetryDelayMs`
   * (their leases keep running meanwhile). Nothing happens when no write is waiting.
   */
  retryNow(): void;
  /**
   * From now on a failed write is not retried: that batch and every queued outcome reject at once (the
   * back-off under way, if any, ends now). Writes that succeed go on as before. For a stop whose grace is
   * over: outcomes the database takes are written, the others do not hold the stop.
   */
  giveUpOnFailure(): void;
  /** Stops retrying; queued outcomes not yet written reject. */
  close(): void;
}

interface Pending {
  readonly record: AttemptRecord;
  resolve(recorded: boolean): void;
  reject(error: unknown): void;
}

/**
 * Makes a batching recorder over `store.recordAttempts` (docs/adr/0002-schema-and-claim.md: one fenced statement per
 * batch).
 */
export function createRecorder(store: Pick<DeliveryStore, 'recordAttempts'>, options: RecorderOptions): Recorder {
  let queue: Pending[] = [];
  let writing = false;
  let closed = false;
  let givingUp = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let endWait: (() => void) | undefined;

  const flush = async (): Promise<void> => {
    if (writing || queue.length === 0 || closed) return;
    writing = true;
    // One outcome per delivery a statement: a dispatcher may hold a stale outcome of a delivery (its lease
    // expired while the write waited) beside the outcome of its newer lease; they go in separate statements,
    // so the store tells each one apart as recorded or fenced out.
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const inBatch = new Set<string>();
    for (const p of queue) {
      if (batch.length < options.maxBatch && !inBatch.has(p.record.deliveryId)) {
        batch.push(p);
        inBatch.add(p.record.deliveryId);
      } else rest.push(p);
    }
    queue = rest;
    let delay = options.retryDelayMs;
    for (;;) {
      let result: RecordResult;
      try {
        result = await store.recordAttempts(
          batch.map((p) => p.record),
          options.now(),
        );
      } catch (error) {
        options.onError(error);
        if (!closed && !givingUp) {
          await new Promise<void>((resolve) => {
            endWait = resolve;
            retryTimer = setTimeout(resolve, delay);
            retryTimer.unref(); // the dispatcher's own timers keep the process alive; this one alone must not
          });
          endWait = undefined;
          retryTimer = undefined;
        }
        if (closed || givingUp) {
          for (const p of batch) p.reject(error);
          writing = false;
          if (givingUp) rejectQueued(error);
          return;
        }
        delay = Math.min(delay * 2, options.maxRetryDelayMs);
        continue;
      }
      const recorded = new Set(result.recorded);
      for (const p of batch) p.resolve(recorded.has(p.record.deliveryId));
      break;
    }
    writing = false;
    void flush();
  };

  /** Ends a back-off wait after a failed write at once (nothing when none is under way). */
  const endBackOff = (): void => {
    if (retryTimer !== undefined) clearTimeout(retryTimer);
    endWait?.();
  };

  const rejectQueued = (error: unknown): void => {
    const rejected = queue;
    queue = [];
    for (const p of rejected) p.reject(error);
  };

  return {
    record(record) {
      if (closed) return Promise.reject(new Error('recorder closed'));
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ record, resolve, reject });
        void flush();
      });
    },
    retryNow: endBackOff,
    giveUpOnFailure() {
      givingUp = true;
      endBackOff();
    },
    close() {
      closed = true;
      endBackOff();
      rejectQueued(new Error('recorder closed'));
    },
  };
}
