import { checkKeyRegistry } from '../adapters/postgres/key-registry.ts';
import { rotateKeys, type RotationReport } from '../adapters/postgres/key-rotation.ts';
import { migrateOnSession, withCommandDb } from './database-setup.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../ports/logger.ts';
import { resolveCipher } from './encryption.ts';

/** Options of {@link runKeysRotate}. */
export interface KeysRotateOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** One line of progress for the operator (the CLI prints it). */
  readonly out: (line: string) => void;
  /** Stops after the current batch when it returns true (SIGINT); a rerun resumes. */
  readonly shouldStop?: () => boolean;
}

/**
 * `tidings keys rotate` (docs/guides/security.md): opens the database, checks the key ring against the key registry,
 * then re-encrypts every value not under the first key of TIDINGS_ENCRYPTION_KEYS, in batches of
 * TIDINGS_KEY_ROTATION_BATCH rows, printing progress. Safe while Tidings runs and safe to stop and rerun.
 * @returns the report and the exit code: 0 when no value is left under another key, 3 when some are
 *   (stopped early, or values written meanwhile under an old key by a process not yet restarted: rerun)
 * @throws KeyRotationError, KeyCheckError, KeyRingError, EncryptionSetupError
 */
export async function runKeysRotate(
  options: KeysRotateOptions,
): Promise<{ readonly report: RotationReport; readonly exitCode: number }> {
  const { config, logger, out } = options;
  return await withCommandDb(config, 2, async (db) => {
    await migrateOnSession(config, db, logger, { orCheck: true });
    const cipher = await resolveCipher(config, logger);
    await checkKeyRegistry(db, cipher);
    out(`re-encrypting under key "${cipher.currentKeyId}" in batches of ${config.keyRotationBatch} rows`);
    const report = await rotateKeys(db, cipher, {
      batchSize: config.keyRotationBatch,
      ...(options.shouldStop === undefined ? {} : { shouldStop: options.shouldStop }),
      onProgress: (p) =>
        out(
          `  ${p.column}: ${p.totalRewritten} rewritten (batch of ${p.read}: ${p.rewritten} rewritten, ` +
            `${p.changedMeanwhile} changed meanwhile; up to ${p.lastId})`,
        ),
    });
    for (const [column, n] of Object.entries(report.rewritten))
      out(`${column}: ${n} rewritten, ${report.remaining[column] ?? 0} left under another key`);
    const left = Object.values(report.remaining).reduce((a, b) => a + b, 0);
    if (left > 0) {
      out(
        `${left} values are still under another key (stopped early, or written meanwhile by a process still ` +
          `running with the old key ring): restart every process with the new ring, then run \`tidings keys ` +
          `rotate\` again`,
      );
      return { report, exitCode: 3 };
    }
    out(
      report.retired.length === 0
        ? 'done: every value is under the current key'
        : `done: every value is under the current key; retired ${report.retired.map((k) => `"${k}"`).join(', ')} ` +
            '(it may now be removed from TIDINGS_ENCRYPTION_KEYS)',
    );
    logger.info(
      { currentKeyId: report.currentKeyId, rewritten: report.rewritten, retired: report.retired },
      'keys rotated',
    );
    return { report, exitCode: 0 };
  });
}
