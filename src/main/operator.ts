import { join } from 'node:path';
import { runOperatorCommand } from '../cli/program.ts';
import type { Config } from '../config/config.ts';
import { KEY_FILE } from './encryption.ts';

/** Test seams of the operator commands: this host's clock (doctor's clock-skew check reads it). */
export interface OperatorSeams {
  readonly hostNow?: () => number;
}

/** The embedded engine's key file for a configuration (src/main/encryption.ts). */
export const keyFileOf = (config: Config): string => join(config.dataDir, KEY_FILE);

/**
 * Runs an operator command (src/cli/) on this process's streams; the first SIGINT / SIGTERM asks the command
 * to stop (listen, a task being followed), a second one ends the process. The database adapters are loaded only
 * for `doctor`, so the API clients start fast.
 * @returns the exit code (docs/guides/cli.md#exit-codes)
 */
export async function operatorCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  seams: OperatorSeams = {},
): Promise<number> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const io = {
      stdout: process.stdout,
      stderr: process.stderr,
      stdin: process.stdin,
      env,
      now: seams.hostNow ?? Date.now,
      signal: stop.signal,
    };
    return await runOperatorCommand(argv, io, {
      gatherDoctorFacts: async (values, hostNow) =>
        (await import('./doctor-probe.ts')).gatherDoctorFacts(values, hostNow),
      keyFileOf,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
