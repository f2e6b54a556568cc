/**
 * How far behind the primary a read replica may be, as an upper bound in ms
 * (docs/adr/0022-poolers-and-read-replicas.md).
 * Pure: the read router (read-routing.ts) feeds it what the two servers answered and when.
 */

/** The primary's WAL position (`pg_current_wal_lsn()`) and when it was read (the router's clock, ms). */
export interface LsnSample {
  readonly lsn: bigint;
  readonly atMs: number;
}

/** What one check saw. */
export interface LagInput {
  /**
   * The replica's `pg_last_wal_replay_lsn()`; null when it reports none (not a streaming replica, or a managed one
   * that hides it).
   */
  readonly replayLsn: bigint | null;
  /** The replica's `now() - pg_last_xact_replay_timestamp()` in ms; null when it has replayed no transaction yet. */
  readonly replayAgeMs: number | null;
  /** Positions of the primary read at this check and earlier ones, oldest first; the last one is this check's. */
  readonly samples: readonly LsnSample[];
  /** Now, on the clock of the samples, ms. */
  readonly nowMs: number;
}

/**
 * An upper bound of the replica's staleness now, in ms: the replica holds every commit the primary had made by
 * the time of the newest sample whose position it has replayed (`now − that sample`), and every commit up to the
 * last one it replayed (`now − its commit time`, on the two servers' clocks). The smaller bound wins. Once the
 * replica has replayed this check's own sample it is as fresh as the primary was when the check began. The
 * commit-time bound alone overstates the lag of a replica of an idle primary (its last commit is old although
 * nothing is missing); the samples alone are as coarse as the checks are apart.
 * @returns the bound, or null when neither applies (no replay position; or none of the samples replayed and no
 *   transaction replayed yet): the lag is unknown
 */
export function replicaLagMs(input: LagInput): number | null {
  if (input.replayLsn === null) return null;
  const bounds: number[] = [];
  if (input.replayAgeMs !== null) bounds.push(Math.max(0, input.replayAgeMs));
  for (let i = input.samples.length - 1; i >= 0; i--) {
    const sample = input.samples[i];
    if (sample !== undefined && sample.lsn <= input.replayLsn) {
      bounds.push(Math.max(0, input.nowMs - sample.atMs));
      break;
    }
  }
  return bounds.length === 0 ? null : Math.min(...bounds);
}

/** Parses a PostgreSQL `pg_lsn` in its text form (`16/B374D848`: two hexadecimal halves) into a number. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (match === null) throw new Error(`"${text}" is not a pg_lsn`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

/**
 * The samples worth keeping after a check: those younger than `keepMs` (an older one can only bound a lag that
 * is past the largest accepted), and never fewer than the newest one; at most `max`.
 */
export function keptSamples(samples: readonly LsnSample[], nowMs: number, keepMs: number, max = 64): LsnSample[] {
  const young = samples.filter((s) => nowMs - s.atMs <= keepMs);
  const last = samples.at(-1);
  const kept = young.length === 0 && last !== undefined ? [last] : young;
  return kept.slice(-max);
}
