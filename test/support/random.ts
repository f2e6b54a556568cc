import type { Random } from '../../src/ports/clock.ts';

/**
 * A seeded pseudo-random source: mulberry32 (Tommy Ettinger's 32-bit generator). The same seed always
 * gives the same sequence, so tests that draw jitter or id randomness are exact and repeatable.
 *
 * Not for production: 32 bits of state, not cryptographic.
 *
 * @param seed any number; only its low 32 bits are used.
 * @returns a function giving uniform values in [0, 1), each a multiple of 2^-32.
 *
 * @example
 * const random = mulberry32(42);
 * random(); // 0.6011037519201636, every time
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The {@link Random} port (src/ports/clock.ts) over {@link mulberry32}.
 * @param seed see {@link mulberry32}.
 */
export function seededRandom(seed: number): Random {
  const next = mulberry32(seed);
  return { next };
}

/**
 * A source that returns the given values in order, then throws: for tests that need one exact draw
 * (e.g. the lowest or highest jitter) and must notice an unexpected extra draw.
 * @param values each in [0, 1).
 * @throws RangeError when a value is outside [0, 1), or when called more times than there are values.
 */
export function sequenceRandom(...values: number[]): () => number {
  for (const v of values) if (!(v >= 0 && v < 1)) throw new RangeError(`random value ${v} is not in [0, 1)`);
  let i = 0;
  return () => {
    const v = values[i];
    if (v === undefined)
      throw new RangeError(`sequenceRandom: drawn ${i + 1} times, only ${values.length} values given`);
    i += 1;
    return v;
  };
}
