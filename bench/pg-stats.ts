import pg from 'pg';

/** Server settings printed with every run (read-only: the shared cluster's settings are never changed). */
export const SETTINGS_SHOWN = [
  'server_version',
  'synchronous_commit',
  'fsync',
  'wal_sync_method',
  'full_page_writes',
  'commit_delay',
  'commit_siblings',
  'shared_buffers',
  'effective_cache_size',
  'work_mem',
  'maintenance_work_mem',
  'max_connections',
  'wal_buffers',
  'max_wal_size',
  'checkpoint_timeout',
  'random_page_cost',
  'jit',
  'max_parallel_workers_per_gather',
  'shared_preload_libraries',
  'track_io_timing',
] as const;

/** Version and settings of the PostgreSQL server. */
export interface ServerInfo {
  readonly version: string;
  readonly settings: Readonly<Record<string, string>>;
}

/** Reads the server's version string and {@link SETTINGS_SHOWN}. */
export async function serverInfo(url: string): Promise<ServerInfo> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const version = (await client.query<{ v: string }>('SELECT version() AS v')).rows[0]?.v ?? '';
    const rows = (
      await client.query<{ name: string; setting: string; unit: string | null }>(
        'SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)',
        [[...SETTINGS_SHOWN]],
      )
    ).rows;
    const settings: Record<string, string> = {};
    for (const name of SETTINGS_SHOWN) {
      const row = rows.find((r) => r.name === name);
      if (row !== undefined)
        settings[name] = row.unit === null || row.unit === '' ? row.setting : `${row.setting} × ${row.unit}`;
    }
    const shown = await client.query<{ shared_buffers: string }>('SHOW shared_buffers');
    settings.shared_buffers = shown.rows[0]?.shared_buffers ?? settings.shared_buffers ?? '';
    return { version, settings };
  } finally {
    await client.end();
  }
}

/** Counters of one database (pg_stat_database) and of the cluster's WAL (pg_stat_wal: every database). */
export interface DbCounters {
  readonly xactCommit: number;
  readonly xactRollback: number;
  readonly tupInserted: number;
  readonly tupUpdated: number;
  readonly tupDeleted: number;
  readonly blksRead: number;
  readonly blksHit: number;
  readonly walRecords: number;
  readonly walBytes: number;
  readonly walSync: number;
  readonly walWrite: number;
}

/** Reads {@link DbCounters} for database `name`. */
export async function dbCounters(url: string, name: string): Promise<DbCounters> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const d =
      (
        await client.query<Record<string, string>>(
          'SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, blks_read, blks_hit FROM ' +
            'pg_stat_database WHERE datname = $1',
          [name],
        )
      ).rows[0] ?? {};
    const w =
      (
        await client.query<Record<string, string>>(
          'SELECT wal_records, wal_bytes, wal_sync, wal_write FROM pg_stat_wal',
        )
      ).rows[0] ?? {};
    const n = (v: string | undefined): number => Number(v ?? 0);
    return {
      xactCommit: n(d.xact_commit),
      xactRollback: n(d.xact_rollback),
      tupInserted: n(d.tup_inserted),
      tupUpdated: n(d.tup_updated),
      tupDeleted: n(d.tup_deleted),
      blksRead: n(d.blks_read),
      blksHit: n(d.blks_hit),
      walRecords: n(w.wal_records),
      walBytes: n(w.wal_bytes),
      walSync: n(w.wal_sync),
      walWrite: n(w.wal_write),
    };
  } finally {
    await client.end();
  }
}

/** Difference of two {@link DbCounters} readings (b − a). */
export function counterDelta(a: DbCounters, b: DbCounters): DbCounters {
  const out: Record<string, number> = {};
  for (const key of Object.keys(a) as (keyof DbCounters)[]) out[key] = b[key] - a[key];
  return out as unknown as DbCounters;
}

/**
 * Process ids of the server backends connected to database `name` (for their CPU time from /proc); `clientsOnly`:
 * client connections only, no autovacuum worker.
 */
export async function backendPids(url: string, name: string, clientsOnly = false): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const sql =
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> ' +
      `pg_backend_pid()${clientsOnly ? ` AND backend_type = 'client backend'` : ''}`;
    const rows = (await client.query<{ pid: number }>(sql, [name])).rows;
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

/** Deliveries per state in the bench database (the no-loss check of the server engine). */
export async function deliveryStates(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = (
      await client.query<{ state: string; n: number }>(
        'SELECT state, count(*)::int AS n FROM deliveries GROUP BY state',
      )
    ).rows;
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  } finally {
    await client.end();
  }
}
