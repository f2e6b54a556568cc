import { encodeTime, TIME_LEN } from 'ulid';
import { AppError, type ValidationIssue } from './errors.ts';
import type { IdPrefix } from './ids.ts';

/**
 * The rule that keeps a search of the delivery log bounded (docs/reference/api.md, "Search"): every search reads
 * one window of time, `after` (required) to `before` (default now), at most TIDINGS_SEARCH_MAX_WINDOW wide, and
 * the window becomes a range of ids. Ids are time-sortable (ids.ts: the ULID's first 10 characters are the
 * creation instant in ms), so a window of creation times is a range of an index whose key is the id — as Svix
 * bounds its lists (svix-server `MessageId::start_id` / `end_id`). The instant is the one the id was made at
 * (the API process's clock at publish; the dispatcher's at an attempt), which the API shows as `timestamp`
 * within clock skew of the database's `created_at`.
 */

/** ULID characters after the time part (ids.ts: 26 in all). */
const RANDOM_LEN = 16;

/** A window of the log: instants strictly after `after` and strictly before `before`, both in ms precision. */
export interface SearchWindow {
  readonly after: Date;
  readonly before: Date;
}

/** The ids of a window: every id strictly above `above` and strictly below `below` (byte order). */
export interface IdRange {
  readonly above: string;
  readonly below: string;
}

/** The bounds a search is held to. */
export interface WindowLimits {
  /** TIDINGS_SEARCH_MAX_WINDOW: the widest window, ms. */
  readonly maxWindowMs: number;
  /** The setting's name and value as a person reads them, for the refusal (`TIDINGS_SEARCH_MAX_WINDOW (7d)`). */
  readonly maxWindowText: string;
}

const issue = (field: string, msg: string, type: string): ValidationIssue => ({ loc: ['query', field], msg, type });

/** A duration as a person reads it: in the largest unit it reaches (d, h, m, s, ms), to three decimals. */
export function durationText(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size) return `${Number((ms / size).toFixed(3))}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * The window of a search: `after` to `before` (null = up to `now`, included).
 * @throws AppError `search_unbounded` (422) naming `after` when it is missing or the window is wider than
 *   `limits.maxWindowMs`; `validation` (422) naming `before` when it is not later than `after`.
 */
export function searchWindow(after: Date | null, before: Date | null, now: Date, limits: WindowLimits): SearchWindow {
  if (after === null) {
    throw new AppError('search_unbounded', [
      issue(
        'after',
        'a search reads one window of the delivery log: add after (an RFC 3339 instant; before defaults to now), ' +
          `at most ${limits.maxWindowText} before before`,
        'search_unbounded.no_window',
      ),
    ]);
  }
  // Without a before, the window ends with now, now included (the ids of this very millisecond).
  const end = before ?? new Date(now.valueOf() + 1);
  if (end.valueOf() <= after.valueOf()) {
    const msg =
      before === null ? 'after must lie in the past (before defaults to now)' : 'before must be later than after';
    throw new AppError('validation', [issue('before', msg, 'value_error')]);
  }
  const widthMs = end.valueOf() - after.valueOf();
  if (widthMs > limits.maxWindowMs) {
    throw new AppError('search_unbounded', [
      issue(
        'after',
        `the window from after to before is ${durationText(widthMs)}, wider than ${limits.maxWindowText}: ` +
          'move after later or before earlier, and search the rest as further windows',
        'search_unbounded.window_too_wide',
      ),
    ]);
  }
  return { after, before: end };
}

/**
 * The ids with `prefix` made strictly inside `window` (at ms precision): above the highest id of the `after`
 * millisecond, below the lowest id of the `before` millisecond.
 */
export function idRange(prefix: IdPrefix, window: SearchWindow): IdRange {
  return {
    above: `${prefix}_${encodeTime(idTime(window.after), TIME_LEN)}${'Z'.repeat(RANDOM_LEN)}`,
    below: `${prefix}_${encodeTime(idTime(window.before), TIME_LEN)}${'0'.repeat(RANDOM_LEN)}`,
  };
}

/** The latest instant a ULID encodes, ms (2^48 − 1). */
const ID_TIME_MAX = 2 ** 48 - 1;

/** An instant as an id's time: clamped to what a ULID encodes (an id is never made before 1970). */
const idTime = (at: Date): number => Math.min(Math.max(at.valueOf(), 0), ID_TIME_MAX);
