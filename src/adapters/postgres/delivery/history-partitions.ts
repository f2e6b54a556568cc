import { partitionSuffix, rangesToMake, type PartitionRange } from '../../../domain/history-partitions.ts';
import type { HistoryPartitions } from '../../../ports/history-partitions.ts';
import type { Db, Queryable } from '../db.ts';

/** A step that waited past lock_timeout (55P03) is left to the next run; anything else fails it. */
async function unlessLockBusy<T>(work: () => Promise<T>, busy: T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if ((error as { code?: string }).code === '55P03') return busy;
    throw error;
  }
}

/*
 * The time partitions of the attempts and of the timeline (migration 1764000015000,
 * docs/adr/0030-history-partitions.md). Every change runs in one short transaction per table that first takes
 * HISTORY_LOCK as a transaction-scoped advisory lock (works behind a transaction pooler; a process that finds it
 * taken does nothing this time) and sets lock_timeout, so that a writer never queues for long behind the table
 * lock that making or dropping a partition needs.
 */

/** The history tables and the instant each is partitioned by. */
const TABLES = [
  { name: 'attempts', key: 'created_at' },
  { name: 'delivery_events', key: 'at' },
] as const;
type Table = (typeof TABLES)[number];

/** Advisory lock key of the partition maintenance (any constant bigint no other lock uses: 'tidings-history'). */
const HISTORY_LOCK = 7_465_318_022_115_003;

/*
 * PARTITIONS — the partitions of $1 but the default one, with their bounds in ms since the epoch (NULL = MINVALUE /
 * MAXVALUE), read back from the catalog's bound expression in this session's own time zone.
 */
const PARTITIONS = `
SELECT c.relname AS name,
       extract(epoch FROM b[1]::timestamptz) * 1000 AS from_ms, extract(epoch FROM b[2]::timestamptz) * 1000 AS to_ms
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid,
     LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid),
                                  $re$FROM \\((?:'([^']*)'|MINVALUE)\\) TO \\((?:'([^']*)'|MAXVALUE)\\)$re$) AS b) r
WHERE i.inhparent = $1::regclass AND NOT pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'
ORDER BY 2 NULLS FIRST`;

/*
 * NAME_INDEXES — renames the indexes of partition $1 after their parent index with the partition's suffix $2
 * (attempts_message_p20261207t000000), so that a plan names the index it reads.
 */
const NAME_INDEXES = `
SELECT ci.relname AS child, pi.relname || '_' || $2 AS wanted
FROM pg_index x JOIN pg_class ci ON ci.oid = x.indexrelid
JOIN pg_inherits i ON i.inhrelid = ci.oid JOIN pg_class pi ON pi.oid = i.inhparent
WHERE x.indrelid = $1::regclass`;

/*
 * LIVE_HISTORY — whether partition $1 (a table name, quoted by format) holds a row of a delivery that is pending
 * or leased. Probes the partition's delivery index once per live delivery.
 */
const liveHistory = (partition: string): string => `
SELECT EXISTS (
  SELECT 1 FROM deliveries d
  WHERE d.state IN ('pending', 'leased') AND EXISTS (SELECT 1 FROM "${partition}" p WHERE p.delivery_id = d.id)
) AS live`;

interface Partition extends PartitionRange {
  readonly name: string;
}

async function partitionsOf(q: Queryable, table: Table): Promise<Partition[]> {
  const rows = (await q.query<{ name: string; from_ms: string | null; to_ms: string | null }>(PARTITIONS, [table.name]))
    .rows;
  return rows.map((r) => ({
    name: r.name,
    fromMs: r.from_ms === null ? null : Math.round(Number(r.from_ms)),
    toMs: r.to_ms === null ? null : Math.round(Number(r.to_ms)),
  }));
}

/** Begins the step: lock_timeout, then the advisory lock; false when another process holds it. */
async function lockStep(q: Queryable, lockTimeoutMs: number): Promise<boolean> {
  await q.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
  return (await q.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [HISTORY_LOCK])).rows[0]!.ok;
}

/**
 * Makes partition [from, to) of `table`: a plain table first, filled with the rows the default partition holds for
 * the range (moved, in this transaction), then attached (which builds its indexes and checks its rows and the
 * default partition's), its indexes named after their parents.
 */
async function makePartition(q: Queryable, table: Table, range: { fromMs: number; toMs: number }): Promise<string> {
  const suffix = partitionSuffix(range.fromMs);
  const name = `${table.name}_${suffix}`;
  const from = new Date(range.fromMs).toISOString();
  const to = new Date(range.toMs).toISOString();
  await q.query(`CREATE TABLE "${name}" (LIKE ${table.name} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
  await q.query(
    `WITH moved AS (DELETE FROM ${table.name}_default WHERE ${table.key} >= $1 AND ${table.key} < $2 RETURNING *)
     INSERT INTO "${name}" SELECT * FROM moved`,
    [from, to],
  );
  await q.query(`ALTER TABLE ${table.name} ATTACH PARTITION "${name}" FOR VALUES FROM ('${from}') TO ('${to}')`);
  for (const r of (await q.query<{ child: string; wanted: string }>(NAME_INDEXES, [name, suffix])).rows) {
    if (r.child !== r.wanted) await q.query(`ALTER INDEX "${r.child}" RENAME TO "${r.wanted}"`);
  }
  return name;
}

/*
 * DETACHED — the tables of $1's dated or legacy partitions that are no longer attached: a run detached them and
 * stopped before it had carried their kept rows over and dropped them.
 */
const DETACHED = `
SELECT c.relname AS name FROM pg_class c
WHERE c.relkind = 'r' AND NOT c.relispartition AND pg_table_is_visible(c.oid)
  AND c.relname ~ ('^' || $1 || '_(p[0-9]{8}t[0-9]{6}|legacy)$')
ORDER BY 1`;

/*
 * CARRY_OVER — inserts into the parent table the rows of the detached partition that belong to a delivery that
 * still exists and has not succeeded (dead, skipped, canceled, or live again after a replay): their instant has no
 * partition any more, so they land in the default one. The primary key holds the instant, so a row carried over
 * by an earlier try is not written twice.
 */
const carryOver = (table: Table, partition: string): string => `
INSERT INTO ${table.name} ${table.name === 'delivery_events' ? 'OVERRIDING SYSTEM VALUE ' : ''}
SELECT p.* FROM "${partition}" p
WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.id = p.delivery_id AND d.state <> 'succeeded')
ON CONFLICT DO NOTHING`;

/** Detaches partition `name` of `table` in one short transaction; false when it was left to the next run. */
async function detach(db: Db, table: Table, name: string, lockTimeoutMs: number): Promise<boolean> {
  return unlessLockBusy(
    () =>
      db.tx(async (q) => {
        if (!(await lockStep(q, lockTimeoutMs))) return false;
        if (!(await partitionsOf(q, table)).some((x) => x.name === name)) return false;
        await q.query(`ALTER TABLE ${table.name} DETACH PARTITION "${name}"`);
        return true;
      }),
    false,
  );
}

/**
 * Carries the kept rows of the detached partition `name` over into `table` and drops it, in one transaction: a
 * stop at any point leaves the table detached with nothing carried, for the next run. Returns the rows carried, or
 * null when the step was left to the next run.
 */
async function carryOverAndDrop(db: Db, table: Table, name: string, lockTimeoutMs: number): Promise<number | null> {
  return unlessLockBusy(
    () =>
      db.tx(async (q) => {
        if (!(await lockStep(q, lockTimeoutMs))) return null;
        if ((await q.query(DETACHED, [table.name])).rows.every((r) => r['name'] !== name)) return null;
        const rows = (await q.query(carryOver(table, name))).rowCount ?? 0;
        await q.query(`DROP TABLE "${name}"`);
        return rows;
      }),
    null,
  );
}

/** The PostgreSQL {@link HistoryPartitions}. The same statements run on the embedded engine. */
export function createPgHistoryPartitions(db: Db): HistoryPartitions {
  return {
    async ensure(input) {
      const made: string[] = [];
      for (const table of TABLES) {
        made.push(
          ...(await unlessLockBusy(
            () =>
              db.tx(async (q) => {
                if (!(await lockStep(q, input.lockTimeoutMs))) return [];
                const ranges = rangesToMake(input.nowMs, input.widthMs, input.ahead, await partitionsOf(q, table));
                const names: string[] = [];
                for (const r of ranges) names.push(await makePartition(q, table, { fromMs: r.fromMs!, toMs: r.toMs! }));
                return names;
              }),
            [],
          )),
        );
      }
      return made;
    },

    async dropAged(input) {
      const dropped: string[] = [];
      const keptForLive: string[] = [];
      let carried = 0;
      const cutoff = input.nowMs - input.ageMs;
      for (const table of TABLES) {
        // A partition a stopped run detached but did not drop: its kept rows are carried over and it is dropped.
        for (const name of (await db.query<{ name: string }>(DETACHED, [table.name])).rows.map((r) => r.name)) {
          const rows = await carryOverAndDrop(db, table, name, input.lockTimeoutMs);
          if (rows === null) continue;
          carried += rows;
          dropped.push(name);
        }
        const aged = (await partitionsOf(db, table)).filter((p) => p.toMs !== null && p.toMs <= cutoff);
        for (const p of aged) {
          // Checked before the step's transaction so that no table lock is held while it reads. A delivery made live
          // after it (a replay) still keeps its rows: the carry-over takes every delivery's but a succeeded one's.
          if ((await db.query<{ live: boolean }>(liveHistory(p.name))).rows[0]!.live) {
            keptForLive.push(p.name);
            continue;
          }
          if (!(await detach(db, table, p.name, input.lockTimeoutMs))) continue;
          const rows = await carryOverAndDrop(db, table, p.name, input.lockTimeoutMs);
          if (rows === null) continue; // left detached: the next run finishes it
          carried += rows;
          dropped.push(p.name);
        }
      }
      return { dropped, keptForLive, carried };
    },
  };
}
