import { encodeTime, TIME_LEN, ulid } from 'ulid';

/**
 * Prefixed, time-sortable ids: `<prefix>_<ULID>`; the ULID's first 10 characters encode the
 * creation time in ms, so ids sort by creation time.
 */
export const IdPrefix = Object.freeze({
  application: 'app',
  endpoint: 'ep',
  message: 'msg',
  attempt: 'atmpt',
  apiKey: 'key',
  task: 'qtask',
} as const);
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];

/**
 * Makes a new id.
 * @param atMs creation instant, Unix ms (finite, ≥ 0)
 * @param random uniform source in [0, 1) (a cryptographic one in production)
 * @throws ULIDError when `atMs` is not a valid ULID time (negative, NaN, beyond year 10889)
 */
export function newId<P extends IdPrefix>(prefix: P, atMs: number, random: () => number): `${P}_${string}` {
  // The time part is encoded here: ulid() itself replaces a seed time of 0 with the wall clock.
  return `${prefix}_${encodeTime(atMs, TIME_LEN)}${ulid(1, random).slice(TIME_LEN)}`;
}

/** True when `value` looks like an id with this prefix (not a caller-chosen uid). */
export function hasPrefix(value: string, prefix: IdPrefix): boolean {
  return value.startsWith(`${prefix}_`) && value.length === prefix.length + 27;
}
