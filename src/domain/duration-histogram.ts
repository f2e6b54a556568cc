/**
 * The fixed log-scale histogram of a duration that the time-in-state rollups store
 * (docs/adr/0015-time-in-state-rollups.md), and the percentile read from it.
 *
 * Buckets hold whole milliseconds. Bucket `i` holds the values `v` with `BOUNDS[i] ≤ v < BOUNDS[i + 1]`;
 * the last one holds everything from its lower bound up. The lower bounds are 0 and the distinct values of
 * ⌈2^(k/8)⌉ for k = 0…320: every whole millisecond up to 15 ms, then buckets growing by 2^(1/8) (≈ 9 %,
 * the resolution of Prometheus native histograms at schema 3) up to 2^40 ms (≈ 35 years), so a replay of a
 * month-old message stays within the bound too.
 *
 * The bounds are part of the stored format: rollup rows name buckets by index. Changing them needs a
 * migration that empties the rollups and rolls the timeline up again.
 */

/** Lower bounds of the buckets, ms, ascending; `BOUNDS[0]` is 0. */
export const BOUNDS: readonly number[] = Object.freeze(
  (() => {
    const out = [0];
    for (let k = 0; k <= 320; k += 1) {
      const b = Math.ceil(2 ** (k / 8));
      if (b > out.at(-1)!) out.push(b);
    }
    return out;
  })(),
);

/** A histogram: count per bucket index (indices without values absent). */
export type Histogram = Readonly<Record<number, number>>;

/**
 * Largest relative error of {@link percentile} against PostgreSQL's `percentile_cont` over the same values:
 * each value is taken as the middle of the whole milliseconds of its bucket, at most half a bucket away,
 * i.e. at most (BOUNDS[i+1] − 1 − BOUNDS[i]) / 2 ≤ ((2^(1/8) − 1) / 2) · BOUNDS[i]; interpolating between
 * two ranks keeps that relative bound. Values up to 15 ms are exact.
 */
export const PERCENTILE_RELATIVE_ERROR: number = (() => {
  let worst = 0;
  for (let i = 1; i + 1 < BOUNDS.length; i += 1)
    worst = Math.max(worst, (BOUNDS[i + 1]! - 1 - BOUNDS[i]!) / (2 * BOUNDS[i]!));
  return worst;
})();

/** Index of the bucket of `ms` (a negative value counts as 0). Matches SQL `width_bucket(ms, BOUNDS) − 1`. */
export function bucketOf(ms: number): number {
  const v = Math.max(0, ms);
  let lo = 0;
  let hi = BOUNDS.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (BOUNDS[mid]! <= v) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The value a bucket stands for: the middle of its whole milliseconds (its lower bound for the last bucket). */
export function representative(index: number): number {
  const lo = BOUNDS[index];
  if (lo === undefined) throw new RangeError(`bucket ${index} is not one of the ${BOUNDS.length} buckets`);
  const next = BOUNDS[index + 1];
  return next === undefined ? lo : (lo + next - 1) / 2;
}

/** Adds `b` into `into` (mutates `into`). */
export function addInto(into: Record<number, number>, b: Histogram): void {
  for (const [k, n] of Object.entries(b)) into[Number(k)] = (into[Number(k)] ?? 0) + n;
}

/** Number of values in a histogram. */
export function countOf(h: Histogram): number {
  let n = 0;
  for (const c of Object.values(h)) n += c;
  return n;
}

/**
 * Percentiles of the values a histogram counts, as PostgreSQL's `percentile_cont` defines them (linear
 * interpolation between the values at ranks ⌊p·(n−1)⌋ and ⌈p·(n−1)⌉), each value taken as its bucket's
 * {@link representative}: within {@link PERCENTILE_RELATIVE_ERROR} of the exact figure.
 * @param fractions each in [0, 1]
 * @returns one figure per fraction, ms; null for all when the histogram is empty
 */
export function percentiles(h: Histogram, fractions: readonly number[]): (number | null)[] {
  const buckets = Object.entries(h)
    .map(([k, n]) => [Number(k), n] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((s, [, n]) => s + n, 0);
  if (total === 0) return fractions.map(() => null);
  const valueAt = (rank: number): number => {
    let seen = 0;
    for (const [k, n] of buckets) {
      seen += n;
      if (rank < seen) return representative(k);
    }
    return representative(buckets.at(-1)![0]);
  };
  return fractions.map((p) => {
    const h0 = p * (total - 1);
    const lo = Math.floor(h0);
    const a = valueAt(lo);
    const b = valueAt(Math.ceil(h0));
    return a + (h0 - lo) * (b - a);
  });
}
