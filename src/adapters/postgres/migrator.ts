import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type pg from 'pg';
import type { Db } from './db.ts';
import type { Logger } from '../../ports/logger.ts';

/** The folder of the numbered SQL migrations (forward-only once 0.1.0 is tagged). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

/**
 * Applies every pending migration with node-pg-migrate, under its advisory lock, so concurrent starts are
 * safe (DESIGN §8). Same files on a PostgreSQL server and on the embedded engine.
 * @returns the names of the migrations applied by this call
 */
export async function migrate(db: Db, logger: Logger): Promise<string[]> {
  // One connection from the pool for the whole run: the advisory lock is per session.
  const applied = await db.tx(async (client) => {
    await client.query('COMMIT'); // node-pg-migrate manages its own transactions on this session
    try {
      const result = await runner({
        dbClient: client as unknown as pg.ClientBase,
        dir: MIGRATIONS_DIR,
        direction: 'up',
        migrationsTable: 'pgmigrations',
        count: Number.POSITIVE_INFINITY,
        checkOrder: true,
        // Processes that start together wait for the one migrating (the default, 'fail', made every other
        // start-up exit with "Another migration is already running").
        advisoryLockMode: 'wait',
        logger: { debug: () => undefined, info: (msg: string) => logger.debug({ msg }, 'migrate'), warn: (msg: string) => logger.warn({ msg }, 'migrate'), error: (msg: string) => logger.error({ msg }, 'migrate') },
      });
      return result.map((m) => m.name);
    } finally {
      await client.query('BEGIN'); // tx() ends with COMMIT
    }
  });
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  return applied;
}
