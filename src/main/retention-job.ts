import { createPgHistoryPartitions } from '../adapters/postgres/delivery/history-partitions.ts';
import { createPgIdempotencyPruning } from '../adapters/postgres/idempotency/idempotency-store.ts';
import { createPgRetentionStore } from '../adapters/postgres/message/retention-store.ts';
import { createPgTaskStore } from '../adapters/postgres/tasks/task-store.ts';
import type { Db } from '../adapters/postgres/db.ts';
import {
  runErasures,
  runRetention,
  type RetentionDeps,
  type RetentionReport,
  type RetentionSettings,
} from '../app/retention.ts';
import type { Config } from '../config/config.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';

/** The PostgreSQL stores of the retention job. */
export function pgRetentionDeps(db: Db): RetentionDeps {
  return {
    retention: createPgRetentionStore(db),
    idempotency: createPgIdempotencyPruning(db),
    tasks: createPgTaskStore(db),
    history: createPgHistoryPartitions(db),
  };
}

/** The settings the retention job reads. */
type RetentionConfig = Pick<
  Config,
  | 'payloadRetentionMs'
  | 'retentionSucceededAgeMs'
  | 'retentionBatch'
  | 'historyPartitionWidthMs'
  | 'historyPartitionsAhead'
  | 'historyPartitionLockTimeoutMs'
>;

/** The retention settings of `config`. */
export function retentionSettings(config: RetentionConfig): RetentionSettings {
  return {
    payloadRetentionMs: config.payloadRetentionMs,
    succeededAgeMs: config.retentionSucceededAgeMs,
    batch: config.retentionBatch,
    partitions: {
      widthMs: config.historyPartitionWidthMs,
      ahead: config.historyPartitionsAhead,
      lockTimeoutMs: config.historyPartitionLockTimeoutMs,
    },
  };
}

/**
 * Delay until the next run: `intervalMs` jittered uniformly within ±`jitter` (a fraction), so API processes
 * started together do not run in step.
 */
export function nextRunDelayMs(intervalMs: number, jitter: number, random: Random): number {
  return Math.max(1, Math.round(intervalMs * (1 + jitter * (2 * random.next() - 1))));
}

/** The retention timer of an API process. */
export interface RetentionJob {
  /** Schedules the first run (nothing when TIDINGS_RETENTION_INTERVAL is 0). */
  start(): void;
  /** Runs erasure tasks now (one was requested); runs at most one pass at a time. */
  kick(): void;
  /** Runs the whole job once now (also what `tidings retention run` does). */
  runOnce(): Promise<RetentionReport>;
  /** Stops the timer and waits for a run in progress to finish its current batch. */
  stop(): Promise<void>;
}

/** Dependencies of {@link createRetentionJob}. */
export interface RetentionJobDeps {
  readonly stores: RetentionDeps;
  readonly config: RetentionConfig & Pick<Config, 'retentionIntervalMs' | 'retentionJitter'>;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
}

/**
 * Makes the retention job (docs/guides/security.md): every TIDINGS_RETENTION_INTERVAL (jittered by
 * TIDINGS_RETENTION_JITTER) it runs {@link runRetention}; erasure requests kick the erasure runner at once.
 * A failed run is logged and retried at the next tick. One pass at a time per process; several processes
 * share the work through SKIP LOCKED.
 */
export function createRetentionJob(deps: RetentionJobDeps): RetentionJob {
  const settings = retentionSettings(deps.config);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  const shouldStop = (): boolean => stopped;

  const serialize = <T>(work: () => Promise<T>): Promise<T> => {
    const next = current.then(work, work);
    current = next.catch(() => undefined);
    return next;
  };

  const runOnce = (): Promise<RetentionReport> =>
    serialize(async () => {
      const report = await runRetention(deps.stores, settings, deps.clock, shouldStop);
      const did =
        report.payloadsExpunged +
        report.deliveriesPruned +
        report.idempotencyKeysPruned +
        report.erasureBatches +
        report.partitionsMade +
        report.partitionsDropped;
      deps.logger[did > 0 ? 'info' : 'debug']({ ...report }, 'retention.ran');
      return report;
    });

  const schedule = (): void => {
    if (stopped || deps.config.retentionIntervalMs === 0) return;
    timer = setTimeout(
      () => {
        void runOnce()
          .catch((error: unknown) => deps.logger.error({ err: error }, 'retention run failed'))
          .finally(schedule);
      },
      nextRunDelayMs(deps.config.retentionIntervalMs, deps.config.retentionJitter, deps.random),
    );
    timer.unref();
  };

  return {
    start: schedule,
    kick() {
      void serialize(() => runErasures(deps.stores, settings.batch, deps.clock, shouldStop)).catch((error: unknown) =>
        deps.logger.error({ err: error }, 'erasure run failed'),
      );
    },
    runOnce,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await current;
    },
  };
}
