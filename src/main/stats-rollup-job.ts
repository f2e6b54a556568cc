import type { Config } from '../config/config.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { RollupStep, StatsRollup } from '../ports/stats-store.ts';

/** Most steps of one run, so a run that starts far behind (after an upgrade, or a long stop) yields the loop. */
const MAX_STEPS_PER_RUN = 50;

/** The time-in-state roll-up timer of an API process (docs/adr/0015-time-in-state-rollups.md). */
export interface StatsRollupJob {
  /** Schedules the first run (nothing when TIDINGS_STATS_ROLLUP_INTERVAL is 0). */
  start(): void;
  /** Takes steps until caught up (at most MAX_STEPS_PER_RUN); returns the ids folded. */
  runOnce(): Promise<number>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** Dependencies of {@link createStatsRollupJob}. */
export interface StatsRollupJobDeps {
  readonly rollup: StatsRollup;
  readonly config: Pick<Config, 'statsRollupIntervalMs' | 'statsRollupBatch'>;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Makes the roll-up job: every TIDINGS_STATS_ROLLUP_INTERVAL it folds the new timeline rows into the
 * rollups, TIDINGS_STATS_ROLLUP_BATCH ids per step. A failed run is logged and retried at the next tick.
 * Several API processes share one watermark: a step that finds it held by another process does nothing.
 */
export function createStatsRollupJob(deps: StatsRollupJobDeps): StatsRollupJob {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();

  const runOnce = (): Promise<number> => {
    const work = async (): Promise<number> => {
      let folded = 0;
      let step: RollupStep | undefined;
      for (
        let i = 0;
        i < MAX_STEPS_PER_RUN && !stopped && (step === undefined || (step.ran && !step.caughtUp));
        i += 1
      ) {
        step = await deps.rollup.step(deps.clock.sqlNow(), deps.config.statsRollupBatch);
        folded += step.rolledIds;
      }
      if (folded > 0) deps.logger.debug({ folded, rolledId: step?.rolledId }, 'stats.rolled_up');
      return folded;
    };
    const next = current.then(work, work);
    current = next.catch(() => undefined);
    return next;
  };

  const schedule = (): void => {
    if (stopped || deps.config.statsRollupIntervalMs === 0) return;
    timer = setTimeout(() => {
      void runOnce()
        .catch((error: unknown) => deps.logger.error({ err: error }, 'stats roll-up failed'))
        .finally(schedule);
    }, deps.config.statsRollupIntervalMs);
    timer.unref();
  };

  return {
    start: schedule,
    runOnce,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await current;
    },
  };
}
