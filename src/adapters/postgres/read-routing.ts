import type pg from 'pg';
import type { Db, Prepared, Queryable } from './db.ts';
import { keptSamples, parseLsn, replicaLagMs, type LsnSample } from './replica-lag.ts';
import { isDatabaseUnavailable, sqlState } from './sqlstate.ts';

/**
 * Why a read meant for the replica ran on the primary: `unavailable` (the replica did not answer, or cancelled the
 * read for a conflict with recovery), `lagging` (its lag, as last measured plus the time since, is past the largest
 * accepted), `lag_unknown` (the lag could not be measured: the primary did not answer the check, or the replica
 * reports no replay position).
 */
export type FallbackReason = 'unavailable' | 'lagging' | 'lag_unknown';

/** The router's view of the replica, from its last check. */
export interface ReplicaReading {
  /** Whether the last check reached the replica. */
  readonly up: boolean;
  /** The bound on its staleness at that check, ms; null = unknown. */
  readonly lagMs: number | null;
  /** When that check ended, on the router's clock, ms. */
  readonly atMs: number;
}

/** Options of {@link createReadRouter}. */
export interface ReadRouterOptions {
  /** The primary: where every read goes when the replica may not serve it, and whose WAL position is sampled. */
  readonly primary: Db;
  /** The replica's pool (TIDINGS_READ_DATABASE_URL). */
  readonly replica: Db;
  /** TIDINGS_READ_MAX_LAG: the largest staleness a read routed to the replica may have, ms. */
  readonly maxLagMs: number;
  /** TIDINGS_READ_LAG_CHECK: time between checks of the lag, ms. */
  readonly checkMs: number;
  /** Monotonic clock, ms (tests steer it). */
  readonly nowMs: () => number;
  /** Called for each read that ran on the primary instead, with why. */
  readonly onFallback?: (reason: FallbackReason) => void;
  /** Called when the replica's state changes: up ↔ down, within ↔ beyond the largest lag (for one log line each). */
  readonly onChange?: (state: 'serving' | FallbackReason, reading: ReplicaReading, error?: unknown) => void;
}

/** The reader handle of the query stores, and its checks. */
export interface ReadRouter {
  /**
   * Where the heavy reads go: a {@link Db} that runs each read on the replica while it may serve it, else on the
   * primary.
   */
  readonly reader: Db;
  /** The last check's reading. */
  reading(): ReplicaReading;
  /** The staleness bound now (the last check's plus the time since), ms; null = unknown or the replica is down. */
  lagNowMs(): number | null;
  /** Checks the lag now (one check at a time: a call during a check waits for it). Never throws. */
  check(): Promise<void>;
  /** Checks now, then every `checkMs`, until {@link stop}. */
  start(): Promise<void>;
  /** Stops the checks and closes the replica's pool. */
  stop(): Promise<void>;
}

/* PRIMARY_POSITION — the primary's WAL write position (text form of a pg_lsn). No parameters; one row. */
const PRIMARY_POSITION = 'SELECT pg_current_wal_lsn()::text AS lsn';

/*
 * REPLICA_POSITION — whether the replica is one (in recovery), the WAL position it has replayed, and how long ago
 * the last transaction it replayed committed (ms, on the replica's clock against the primary's commit stamp).
 * No parameters; one row. On a server that is not in recovery both positions are null and `recovery` false.
 */
const REPLICA_POSITION = `SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS lsn,
  (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS age_ms`;

/** SQLSTATEs of a read a hot standby cancelled for a conflict with the WAL it replays (PostgreSQL "Hot Standby"). */
const RECOVERY_CONFLICT_STATES = new Set(['40001', '40P01']);

/** Whether a read that failed on the replica should run again on the primary. */
function replicaFailed(error: unknown): boolean {
  return isDatabaseUnavailable(error) || RECOVERY_CONFLICT_STATES.has(sqlState(error) ?? '');
}

/**
 * Routes the heavy reads (lists, statistics) to a read replica while its staleness is within `maxLagMs`, and to the
 * primary otherwise (docs/adr/0022-poolers-and-read-replicas.md). The lag is checked every `checkMs` by
 * {@link replicaLagMs}; between checks it is taken to grow with the time since the last one, so no read routed to
 * the replica is staler than the bound even when a check is slow or its replica hangs. A read that fails on the
 * replica because it is down (or cancelled by recovery) runs again on the primary at once; until the next check
 * reaches it, the replica is taken as down. Reads routed here must be plain reads that may run twice: a statement
 * refused by the replica for being a write (25006) is a fault and is not retried.
 */
export function createReadRouter(options: ReadRouterOptions): ReadRouter {
  const { primary, replica, maxLagMs, checkMs, nowMs } = options;
  let reading: ReplicaReading = { up: false, lagMs: null, atMs: nowMs() };
  let samples: LsnSample[] = [];
  let checking: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let state: 'serving' | FallbackReason | null = null;

  const lagNowMs = (): number | null =>
    reading.up && reading.lagMs !== null ? reading.lagMs + (nowMs() - reading.atMs) : null;
  const route = (): 'serving' | FallbackReason => {
    if (!reading.up) return 'unavailable';
    const lag = lagNowMs();
    if (lag === null) return 'lag_unknown';
    return lag > maxLagMs ? 'lagging' : 'serving';
  };
  /** Routes as {@link route} does, telling `onChange` when the answer changed (a check, a failed read, or time). */
  const settle = (error?: unknown): 'serving' | FallbackReason => {
    const next = route();
    if (next !== state) {
      state = next;
      options.onChange?.(next, reading, error);
    }
    return next;
  };

  const measure = async (): Promise<void> => {
    let primaryAt: number;
    try {
      primaryAt = nowMs();
      const lsn = (await primary.query<{ lsn: string }>(PRIMARY_POSITION)).rows[0]?.lsn;
      if (lsn === undefined) throw new Error('the primary reported no WAL position');
      samples.push({ lsn: parseLsn(lsn), atMs: primaryAt });
    } catch (error) {
      // Without the primary's position the lag has no bound: reads go to the primary (which may be down too).
      reading = { up: reading.up, lagMs: null, atMs: nowMs() };
      settle(error);
      return;
    }
    try {
      type Position = { recovery: boolean; lsn: string | null; age_ms: number | null };
      const row = (await replica.query<Position>(REPLICA_POSITION)).rows[0];
      const at = nowMs();
      // A server that is not in recovery answers as the primary does: it holds every commit (the same server,
      // or one in front of it). A promoted former replica is a second primary: point the URL elsewhere.
      const lagMs =
        row?.recovery === false
          ? 0
          : replicaLagMs({
              replayLsn: row?.lsn == null ? null : parseLsn(row.lsn),
              replayAgeMs: row?.age_ms ?? null,
              samples,
              nowMs: at,
            });
      samples = keptSamples(samples, at, maxLagMs + checkMs);
      reading = { up: true, lagMs, atMs: at };
      settle();
    } catch (error) {
      reading = { up: false, lagMs: null, atMs: nowMs() };
      settle(error);
    }
  };
  const check = (): Promise<void> => {
    checking ??= measure().finally(() => {
      checking = null;
    });
    return checking;
  };

  const markDown = (error: unknown): void => {
    reading = { up: false, lagMs: null, atMs: nowMs() };
    settle(error);
  };
  /** Runs `read` on the replica when it may serve, else (or when it fails there for being down) on the primary. */
  const routed = async <T>(read: (db: Db) => Promise<T>): Promise<T> => {
    const where = settle();
    if (where === 'serving') {
      try {
        return await read(replica);
      } catch (error) {
        if (!replicaFailed(error)) throw error;
        if (isDatabaseUnavailable(error)) markDown(error);
        options.onFallback?.('unavailable');
        return read(primary);
      }
    }
    options.onFallback?.(where);
    return read(primary);
  };

  // Statements go out unnamed, whichever side runs them: the replica may sit behind a pooler of any mode.
  const unnamed = (text: string | Prepared): string => (typeof text === 'string' ? text : text.text);
  const reader: Db = {
    engine: primary.engine,
    transactionPooled: true,
    query: <R extends pg.QueryResultRow>(text: string | Prepared, params?: readonly unknown[]) =>
      routed((db) => db.query<R>(unnamed(text), params)),
    tx: <T>(fn: (q: Queryable) => Promise<T>) =>
      routed((db) => db.tx((q) => fn({ query: (text, params) => q.query(unnamed(text), params) }))),
    listenClient: async () => null,
    close: async () => undefined,
  };

  return {
    reader,
    reading: () => reading,
    lagNowMs,
    check,
    async start() {
      await check();
      if (stopped) return;
      timer = setInterval(() => {
        void check();
      }, checkMs);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      await checking;
      await replica.close();
    },
  };
}
