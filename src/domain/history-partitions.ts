/** Ranges of the history partitions (docs/adr/0030-history-partitions.md): pure arithmetic, in ms since the epoch. */

/** One existing partition's range; null bounds are MINVALUE / MAXVALUE. */
export interface PartitionRange {
  readonly fromMs: number | null;
  readonly toMs: number | null;
}

/**
 * The ranges to make so that [first range holding `nowMs`, + `ahead` more) is covered: each aligned range of
 * `widthMs`, cut to what `existing` does not cover (a range that overlaps the start of one is ended at its start).
 */
export function rangesToMake(
  nowMs: number,
  widthMs: number,
  ahead: number,
  existing: readonly PartitionRange[],
): PartitionRange[] {
  const out: { fromMs: number; toMs: number }[] = [];
  const first = Math.floor(nowMs / widthMs) * widthMs;
  for (let k = 0; k <= ahead; k++) {
    let from = first + k * widthMs;
    let to = from + widthMs;
    const taken = [...existing, ...out].sort((a, b) => (a.fromMs ?? -Infinity) - (b.fromMs ?? -Infinity));
    for (const e of taken) {
      const lo = e.fromMs ?? -Infinity;
      const hi = e.toMs ?? Infinity;
      if (lo <= from && from < hi) from = Math.min(hi, to);
      if (from < lo && lo < to) to = lo;
    }
    if (from < to) out.push({ fromMs: from, toMs: to });
  }
  return out;
}

/** The name suffix of a partition starting at `fromMs`: p + its UTC instant to the second (p20261207t000000). */
export function partitionSuffix(fromMs: number): string {
  const iso = new Date(fromMs).toISOString();
  return `p${iso.slice(0, 10).replaceAll('-', '')}t${iso.slice(11, 19).replaceAll(':', '')}`;
}
