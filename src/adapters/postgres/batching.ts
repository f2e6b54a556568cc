import DataLoader from 'dataloader';
import { settingDefault } from '../../config/config.ts';

/** Limits of a {@link statementBatcher}. */
export interface BatchLimits {
  /** Most calls folded into one statement. */
  readonly maxBatch: number;
  /** Most statements of this batcher running at once; further calls wait and join the next batch. */
  readonly maxInFlight: number;
}

/** The defaults of TIDINGS_DB_BATCH and TIDINGS_DB_BATCHES_IN_FLIGHT, read from the config schema. */
export const DEFAULT_BATCH_LIMITS: BatchLimits = Object.freeze({
  maxBatch: settingDefault('dbBatch'),
  maxInFlight: settingDefault('dbBatchesInFlight'),
});

/**
 * Group commit for independent calls (docs/guides/benchmark.md, ADR 0007): calls made while the event loop handles one
 * round of I/O (every request whose bytes arrived together) are folded into one statement, run through
 * `runBatch`. When `maxInFlight` statements of this batcher already run, new calls wait and are folded into
 * the statement that starts when one of those ends, so a busy database gets fewer, larger statements rather
 * than a queue of small ones. A lone call waits only for the end of the current event-loop turn
 * (`setImmediate`), never for a timer.
 *
 * Built on `dataloader` without its cache: every call reaches the database; nothing is remembered between
 * batches. `runBatch` gets the calls' keys in call order and must return one result per key, in the same
 * order: a value, or an Error that rejects that call alone. A thrown error rejects every call of the batch.
 * @returns `load(key)`: resolves with that key's result
 */
export function statementBatcher<K, V>(
  limits: BatchLimits,
  runBatch: (keys: readonly K[]) => Promise<readonly (V | Error)[]>,
): (key: K) => Promise<V> {
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const loader = new DataLoader<K, V>(
    async (keys) => {
      inFlight += 1;
      try {
        return await runBatch(keys);
      } finally {
        inFlight -= 1;
        waiting.shift()?.();
      }
    },
    {
      cache: false,
      maxBatchSize: limits.maxBatch,
      batchScheduleFn: (dispatch) => {
        setImmediate(() => {
          if (inFlight < limits.maxInFlight) dispatch();
          else waiting.push(dispatch);
        });
      },
    },
  );
  return (key) => loader.load(key);
}
