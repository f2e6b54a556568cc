import type { Logger as PinoLogger, LogFn } from 'pino';

/**
 * Expected transient faults — the database restarting or unreachable for a while (SQLSTATE 57P01 "terminating
 * connection due to administrator command", connection refused, "Connection terminated") — are not errors of
 * Tidings: every caller already retries (the dispatcher backs off, the jobs run again, an API request is answered
 * 503). Logged one line per failure, a restart wrote an error line a second from each job and a warning per request.
 * Instead, a warn line marks each change of state: the first such fault (`event: "database.unavailable"`, with the
 * fault and where it happened), then, while it lasts, at most one line per {@link REPEAT_MS} with the count so far,
 * and, when a new database connection succeeds, `event: "database.available"` with how many faults were counted
 * and for how long. Every other warn or error line is written as it comes. The dispatcher's failed store calls
 * go through this hook too (its back-offs are debug lines), and it writes "claims resumed" with their counts at
 * the first successful claim (src/app/dispatcher/store-health.ts).
 */

/** While the database stays unavailable, the longest time between two lines about it, ms (the count goes on). */
export const REPEAT_MS = 60_000;

/** Marks a line this module writes itself, so that its own hook lets it through. */
const OWN = Symbol('transient-fault line');

/** Options of {@link createTransientFaults}. `nowMs` is a seam for tests. */
export interface TransientFaultsOptions {
  /** True for a fault that is expected and passes (the database adapter's `isDatabaseUnavailable`). */
  readonly isTransient: (error: unknown) => boolean;
  readonly nowMs?: () => number;
}

/** The state of the database as the log tells it, and the pino hook that applies it. */
export interface TransientFaults {
  /** pino's `hooks.logMethod`: routes warn and error lines whose `err` is transient through the state. */
  readonly logMethod: (this: PinoLogger, args: Parameters<LogFn>, method: LogFn, level: number) => void;
  /** The logger the recovery line is written to (the process logger, set by createLogger). */
  attach(logger: Pick<PinoLogger, 'warn'>): void;
  /** A database connection was made: ends an unavailable spell with one line (nothing when there is none). */
  recovered(): void;
  /** Faults counted in the current spell (0 when the database is available), for tests. */
  failures(): number;
}

interface Spell {
  readonly since: number;
  failures: number;
  lastLineAt: number;
}

/** Makes the {@link TransientFaults} state of one process. */
export function createTransientFaults(options: TransientFaultsOptions): TransientFaults {
  const nowMs = options.nowMs ?? Date.now;
  let spell: Spell | null = null;
  let target: Pick<PinoLogger, 'warn'> | null = null;
  return {
    logMethod(args, method, level) {
      const fields = args[0] as unknown;
      const err = typeof fields === 'object' && fields !== null ? (fields as { err?: unknown }).err : undefined;
      if (level < 40 || err === undefined || (fields as { [OWN]?: true })[OWN] === true || !options.isTransient(err)) {
        method.apply(this, args);
        return;
      }
      const now = nowMs();
      const during = typeof args[1] === 'string' ? args[1] : '';
      if (spell === null) {
        spell = { since: now, failures: 1, lastLineAt: now };
        this.warn(
          { ...(fields as object), [OWN]: true, event: 'database.unavailable', during, failures: 1 },
          'database unavailable: a transient fault; further ones are counted, not logged, until a connection succeeds',
        );
        return;
      }
      spell.failures += 1;
      if (now - spell.lastLineAt < REPEAT_MS) return;
      spell.lastLineAt = now;
      const unavailableMs = now - spell.since;
      this.warn(
        {
          ...(fields as object),
          [OWN]: true,
          event: 'database.unavailable',
          during,
          failures: spell.failures,
          unavailableMs,
        },
        'database still unavailable',
      );
    },
    attach(logger) {
      target = logger;
    },
    recovered() {
      if (spell === null) return;
      const { failures, since } = spell;
      spell = null;
      target?.warn(
        { event: 'database.available', failures, unavailableMs: nowMs() - since },
        `database available again after ${failures} transient fault(s)`,
      );
    },
    failures: () => spell?.failures ?? 0,
  };
}
