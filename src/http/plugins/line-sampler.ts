import type { FastifyBaseLogger } from 'fastify';

/**
 * Caps the log lines of one noisy kind (refused requests: 401, 429, dropped connections) at `ratePerS` lines
 * per one-second window, so a flood of refusals cannot flood the log (100,000 refusals would otherwise be
 * 100,000 lines). Lines past the cap are counted, and one summary line (`{suppressed, kind}`, at warn) is
 * written at the end of each window that dropped any.
 */
export interface LineSampler {
  /** True when the caller may write its line now; false when it is counted as suppressed instead. */
  take(): boolean;
  /** Lines suppressed so far in total (for tests and figures). */
  suppressedTotal(): number;
}

/** Options of {@link createLineSampler}. `nowMs` and the timer are seams for a fake clock. */
export interface LineSamplerOptions {
  readonly ratePerS: number;
  readonly logger: Pick<FastifyBaseLogger, 'warn'>;
  /** What is sampled, named in the summary line (e.g. `refused request`). */
  readonly kind: string;
  readonly nowMs?: () => number;
  readonly setTimer?: (fn: () => void, ms: number) => void;
}

const WINDOW_MS = 1000;

/** Makes a {@link LineSampler}. `ratePerS` 0 suppresses every line (the summaries still say how many). */
export function createLineSampler(options: LineSamplerOptions): LineSampler {
  const nowMs = options.nowMs ?? Date.now;
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms).unref());
  let windowStart = Number.NEGATIVE_INFINITY;
  let written = 0;
  let dropped = 0;
  let total = 0;
  const flush = (): void => {
    if (dropped === 0) return;
    options.logger.warn(
      { suppressed: dropped, kind: options.kind, windowMs: WINDOW_MS },
      `${dropped} ${options.kind} lines not written (over TIDINGS_REFUSAL_LOG_RATE)`,
    );
    dropped = 0;
  };
  return {
    take() {
      const now = nowMs();
      if (now - windowStart >= WINDOW_MS) {
        flush();
        windowStart = now;
        written = 0;
      }
      if (written < options.ratePerS) {
        written++;
        return true;
      }
      if (dropped === 0) setTimer(flush, Math.max(0, windowStart + WINDOW_MS - now));
      dropped++;
      total++;
      return false;
    },
    suppressedTotal: () => total,
  };
}
