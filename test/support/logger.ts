import type { Logger } from '../../src/ports/logger.ts';

/** A logger that drops everything (tests that do not assert on logs). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

/** A logger that keeps every line, for tests that assert on what was logged. */
export function recordingLogger(): Logger & {
  readonly lines: { level: string; obj: object; msg: string | undefined }[];
} {
  const lines: { level: string; obj: object; msg: string | undefined }[] = [];
  const make = (bindings: Record<string, unknown>): Logger => ({
    debug: (obj, msg) => lines.push({ level: 'debug', obj: { ...bindings, ...obj }, msg }),
    info: (obj, msg) => lines.push({ level: 'info', obj: { ...bindings, ...obj }, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj: { ...bindings, ...obj }, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj: { ...bindings, ...obj }, msg }),
    child: (more) => make({ ...bindings, ...more }),
  });
  return Object.assign(make({}), { lines });
}
