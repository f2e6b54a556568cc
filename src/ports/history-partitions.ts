/**
 * The time partitions of the history tables, the attempts and the timeline (docs/adr/0030-history-partitions.md).
 * Both methods are maintenance steps of the retention job: each table's work is one short transaction that holds a
 * transaction-scoped advisory lock (two processes never make or drop the same partition; the one that finds the lock
 * taken does nothing) and waits at most `lockTimeoutMs` for a table lock.
 */
export interface HistoryPartitions {
  /**
   * Makes every missing partition of the range of `widthMs` (aligned to the Unix epoch) holding `nowMs` and of the
   * `ahead` ranges after it, on both tables; a range already partly covered (the legacy partition) is cut to what
   * is not. Rows the default partition holds for a new range move into it.
   * @returns the partitions made
   */
  ensure(input: {
    readonly nowMs: number;
    readonly widthMs: number;
    readonly ahead: number;
    readonly lockTimeoutMs: number;
  }): Promise<readonly string[]>;
  /**
   * Detaches and drops every partition (never the default one) whose range ended at least `ageMs` before `nowMs`,
   * unless it holds a row of a delivery that is pending or leased (still to be delivered or retried). Before a
   * partition is dropped, its rows of deliveries that still exist and have not succeeded (dead letters, skipped and
   * canceled deliveries) are carried over into the default partition (docs/adr/0031-kept-history.md); a partition
   * a stopped run left detached is finished first.
   * @returns the partitions dropped, those kept because a live delivery has history in them, and the rows carried
   */
  dropAged(input: { readonly nowMs: number; readonly ageMs: number; readonly lockTimeoutMs: number }): Promise<{
    readonly dropped: readonly string[];
    readonly keptForLive: readonly string[];
    readonly carried: number;
  }>;
}

/** The settings of {@link HistoryPartitions} (TIDINGS_HISTORY_PARTITION_WIDTH, …_PARTITIONS_AHEAD, …_LOCK_TIMEOUT). */
export interface HistoryPartitionSettings {
  readonly widthMs: number;
  readonly ahead: number;
  readonly lockTimeoutMs: number;
}
