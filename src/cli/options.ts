import { InvalidArgumentError, type Command } from 'commander';
import { parseDurationMs } from '../config/config.ts';
import { clientOf, type ApiClient, type ApiOptions } from './api-client.ts';
import type { CliIo } from './io.ts';

/**
 * Options and argument parsers the operator commands share. A parser throws commander's InvalidArgumentError,
 * so a bad value is reported like any other usage error (exit code 2) with the option's name.
 */

/** Adds `--url`, `--token`, `--timeout` and `--json` to a command that calls the API. */
export function withApiOptions(command: Command): Command {
  return command
    .option('--url <url>', 'Tidings API base URL (default: TIDINGS_URL, else http://127.0.0.1:8071)')
    .option(
      '--token <token>',
      'Bearer token (default: TIDINGS_TOKEN; the environment keeps it out of the process list)',
    )
    .option('--timeout <duration>', 'time one API request may take (e.g. 10s; default 30s)')
    .option('--json', 'print JSON for scripts (one object, or one per line for streams)');
}

/** The client of a command from its options and the environment. @throws CliError usage */
export function apiClient(io: CliIo, options: ApiOptions): ApiClient {
  return clientOf(io, options, (text) => duration(text));
}

/** A duration: `500ms`, `5s`, `2h`, `7d`, or a bare number of ms. */
export function duration(text: string): number {
  try {
    return parseDurationMs(text);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** A whole number within [min, max]. */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER): (text: string) => number {
  return (text) => {
    if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`"${text}" is not a whole number`);
    const n = Number(text);
    if (n < min || n > max) throw new InvalidArgumentError(`must be between ${min} and ${max}`);
    return n;
  };
}

/**
 * An instant: RFC 3339 (`2026-01-02T03:04:05Z`), `now`, or a duration from now on this host's clock — `ago`
 * (`2h` = two hours before now, for windows) or `ahead` (`10m` = ten minutes from now, for schedules).
 * Returned as ISO-8601 with milliseconds, as the API takes it.
 */
export function instant(io: CliIo, relative: 'ago' | 'ahead' = 'ago'): (text: string) => string {
  return (text) => {
    if (text === 'now') return new Date(io.now()).toISOString();
    if (/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/.test(text)) {
      return new Date(io.now() + (relative === 'ago' ? -1 : 1) * parseDurationMs(text)).toISOString();
    }
    if (/^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?$/.test(text)) {
      const at = Date.parse(text);
      if (Number.isFinite(at)) return new Date(at).toISOString();
    }
    throw new InvalidArgumentError(
      `"${text}" is not an instant (RFC 3339 such as 2026-01-02T03:04:05Z, "now", or a duration such as 2h)`,
    );
  };
}

/** Collects a repeatable option's values (`--event-type a --event-type b`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
