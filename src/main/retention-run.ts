import { migrateOnSession, withCommandDb } from './database-setup.ts';
import { cryptoRandom, systemClock } from '../adapters/system/system-clock.ts';
import type { RetentionReport } from '../app/retention.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../ports/logger.ts';
import { createRetentionJob, pgRetentionDeps } from './retention-job.ts';

/**
 * `tidings retention run`: runs the retention job once against the configured database (safe while Tidings
 * runs: the same bounded, SKIP LOCKED batches as the periodic job) and returns what it did.
 */
export async function runRetentionOnce(config: Config, logger: Logger): Promise<RetentionReport> {
  return await withCommandDb(config, 2, async (db) => {
    await migrateOnSession(config, db, logger, { orCheck: true });
    return await createRetentionJob({
      stores: pgRetentionDeps(db),
      config,
      clock: systemClock,
      random: cryptoRandom,
      logger,
    }).runOnce();
  });
}
