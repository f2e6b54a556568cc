import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config/config.ts';
import { freePort, startChild, waitHttpOk, type Child } from './procs.ts';

const CLI = fileURLToPath(new URL('../src/main/cli.ts', import.meta.url));
const PROBE = fileURLToPath(new URL('./pg-probe.ts', import.meta.url));

/** Which database engine a Tidings cluster runs on. */
export type Engine = 'server' | 'embedded';

/** Settings shared by every cluster of one benchmark invocation. */
export interface ClusterBase {
  /** PostgreSQL server URL (any database; the bench database replaces its path). */
  readonly serverUrl: string;
  readonly dbName: string;
  /** TIDINGS_ENCRYPTION_KEYS for every process (encryption at rest stays on, as in production). */
  readonly encryptionKeys: string;
  readonly apiToken: string;
  readonly logLevel: string;
  /** Folder of the processes' log files (and probe dumps, CPU profiles). */
  readonly logDir: string;
  /** Time statements in the Tidings processes (pg-probe.ts). */
  readonly probe: boolean;
  /** Write V8 CPU profiles of the Tidings processes into logDir. */
  readonly cpuProf: boolean;
  /** TIDINGS_* variables of the benchmark's own environment, passed on (they override the bench defaults). */
  readonly userEnv: Readonly<Record<string, string>>;
}

/** A running Tidings deployment: API process and dispatcher process(es), or one embedded `serve`. */
export interface Cluster {
  readonly engine: Engine;
  readonly apiUrl: string;
  readonly api: Child;
  /** Dispatcher-only processes (server engine); empty for the embedded engine, whose `serve` dispatches. */
  readonly dispatchers: readonly Child[];
  /** The configuration the processes run with (as loadConfig reads their environment). */
  readonly config: Config;
  /** URL of the bench database (server engine), else null. */
  readonly databaseUrl: string | null;
  /** The engine source the processes started with. */
  readonly source: ReturnType<typeof sourceVersion>;
  /** Processes that dispatch: the dispatcher-only ones, or the embedded `serve`. */
  dispatching(): readonly Child[];
  /** Starts `count` more dispatcher-only processes and waits for their readiness (server engine). */
  addDispatchers(count: number): Promise<void>;
  /**
   * Stops every process (SIGTERM, graceful), then reads the final state of the database (the server
   * database, or the embedded data folder opened with PGlite once `serve` has exited) and removes
   * temporary folders. `ackedIds` are the message ids the API answered 2xx for: each must be stored.
   */
  stop(ackedIds?: readonly string[]): Promise<StopReport>;
}

/** What {@link Cluster.stop} found. */
export interface StopReport {
  readonly probeFiles: readonly string[];
  /** Null when the database could not be read (reported, not thrown). */
  readonly final: FinalState | null;
}

/** The database after the processes stopped. */
export interface FinalState {
  /** Deliveries per state; `pending` or `leased` ones were not delivered within the bench's bounded wait. */
  readonly states: Readonly<Record<string, number>>;
  /**
   * Of the acknowledged message ids, how many were checked and how many are stored (docs/design.md#the-guarantee: all
   * of them).
   */
  readonly ackedChecked: number;
  readonly ackedStored: number;
  readonly error?: string;
}

const STATES_SQL = 'SELECT state, count(*)::int AS n FROM deliveries GROUP BY state';
const ACKED_SQL = 'SELECT count(*)::int AS n FROM messages WHERE id = ANY($1::text[])';

async function finalState(
  query: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>,
  ackedIds: readonly string[],
): Promise<FinalState> {
  const rows = await query(STATES_SQL);
  const states = Object.fromEntries(rows.map((r) => [String(r.state), Number(r.n)]));
  let stored = 0;
  for (let i = 0; i < ackedIds.length; i += 10_000) {
    const chunk = ackedIds.slice(i, i + 10_000);
    stored += Number((await query(ACKED_SQL, [chunk]))[0]?.n ?? 0);
  }
  return { states, ackedChecked: ackedIds.length, ackedStored: stored };
}

/** Reads {@link FinalState} from the server database or the embedded data folder; errors become a report. */
async function readFinalState(
  dbUrl: string | null,
  dataDir: string | null,
  ackedIds: readonly string[],
): Promise<FinalState | null> {
  try {
    if (dbUrl !== null) {
      const client = new pg.Client({ connectionString: dbUrl });
      await client.connect();
      try {
        return await finalState(
          async (sql, params) => (await client.query(sql, params)).rows as Record<string, unknown>[],
          ackedIds,
        );
      } finally {
        await client.end();
      }
    }
    if (dataDir !== null) {
      const lite = await PGlite.create(join(dataDir, 'pgdata'));
      try {
        return await finalState(
          async (sql, params) => (await lite.query<Record<string, unknown>>(sql, params)).rows,
          ackedIds,
        );
      } finally {
        await lite.close();
      }
    }
    return null;
  } catch (error) {
    return { states: {}, ackedChecked: ackedIds.length, ackedStored: 0, error: (error as Error).message };
  }
}

/** Options of one cluster. */
export interface ClusterOptions {
  readonly engine: Engine;
  /** Dispatcher-only processes to start with the API (server engine). */
  readonly dispatchers: number;
  /**
   * Server engine: one `serve` process, the HTTP API and a dispatcher in one process as `npm start` runs them,
   * instead of an `api` process beside the dispatcher processes; `dispatchers` must then be 0. Default false.
   */
  readonly oneProcess?: boolean;
  /** Settings this scenario needs (they override the user's environment). */
  readonly env: Readonly<Record<string, string>>;
  /** Tag used in log file names. */
  readonly tag: string;
}

/**
 * The engine source a cluster starts with: the last commit that touched src/ or migrations/, and whether
 * they differ from it
 * (other work may land in the checkout while a long benchmark runs).
 */
export function sourceVersion(): { readonly commit: string | null; readonly dirty: boolean | null } {
  const root = fileURLToPath(new URL('..', import.meta.url));
  try {
    const commit = execFileSync('git', ['log', '-1', '--format=%h', '--', 'src', 'migrations'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'src', 'migrations'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    return { commit, dirty: status !== '' };
  } catch {
    return { commit: null, dirty: null };
  }
}

/** URL of database `name` on the server of `serverUrl`. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops (closing its sessions) and creates database `name`. */
export async function recreateDatabase(serverUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name "${name}" must match [a-z_][a-z0-9_]*`);
  const client = new pg.Client({ connectionString: databaseUrl(serverUrl, 'postgres') });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

/** Drops database `name` if it exists. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl(serverUrl, 'postgres') });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

const BASE_VARS = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'];

/**
 * Starts Tidings as child processes, run by `process.execPath` on src/main/cli.ts: on the server engine a
 * fresh bench database, one `api` process and `dispatchers` `dispatcher` processes; on the embedded engine
 * one `serve` process on a fresh data folder. Waits until each answers its readiness route.
 * @throws Error when a process exits or is not ready within 60 s (its log file is named)
 */
export async function startCluster(base: ClusterBase, options: ClusterOptions): Promise<Cluster> {
  const dataDir = options.engine === 'embedded' ? await mkdtemp(join(tmpdir(), 'tidings-bench-')) : null;
  const dbUrl = options.engine === 'server' ? databaseUrl(base.serverUrl, base.dbName) : null;
  if (options.engine === 'server') await recreateDatabase(base.serverUrl, base.dbName);
  const probeFiles: string[] = [];
  const children: Child[] = [];
  let procIndex = 0;

  const envFor = (port: number, adminPort: number): Record<string, string> => {
    const env: Record<string, string> = {};
    for (const name of BASE_VARS) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    // The per-credential API rate and in-progress limits are policies, not engine costs: off unless the caller
    // sets them (the load generator holds up to 500 publishes in progress with one token).
    Object.assign(
      env,
      {
        TIDINGS_LOG_LEVEL: base.logLevel,
        TIDINGS_SHUTDOWN_GRACE: '3s',
        TIDINGS_API_RATE_LIMIT: '0',
        TIDINGS_API_CREDENTIAL_CONCURRENCY: '0',
      },
      base.userEnv,
      options.env,
    );
    const allow = [base.userEnv.TIDINGS_EGRESS_ALLOWLIST, options.env.TIDINGS_EGRESS_ALLOWLIST, '127.0.0.1/32'].filter(
      (v) => v !== undefined && v !== '',
    );
    Object.assign(env, {
      HOST: '127.0.0.1',
      PORT: String(port),
      TIDINGS_ADMIN_PORT: String(adminPort),
      TIDINGS_API_TOKEN: base.apiToken,
      TIDINGS_ENCRYPTION_KEYS: base.encryptionKeys,
      TIDINGS_EGRESS_ALLOWLIST: [...new Set(allow.join(',').split(','))].join(','),
    });
    if (dbUrl !== null) env.DATABASE_URL = dbUrl;
    if (dataDir !== null) env.TIDINGS_DATA_DIR = dataDir;
    return env;
  };

  const launch = async (
    role: 'api' | 'dispatcher' | 'serve',
  ): Promise<{ child: Child; env: Record<string, string>; url: string }> => {
    const n = procIndex++;
    const name = `${options.tag}-${role}${role === 'dispatcher' ? n : ''}`;
    const port = await freePort();
    const adminPort = await freePort();
    const env = envFor(port, adminPort);
    const nodeArgs: string[] = [];
    if (base.probe) {
      const out = join(base.logDir, `${name}.probe.json`);
      env.BENCH_PROBE_OUT = out;
      probeFiles.push(out);
      nodeArgs.push('--import', PROBE);
    }
    if (base.cpuProf)
      nodeArgs.push('--cpu-prof', '--cpu-prof-dir', base.logDir, '--cpu-prof-name', `${name}.cpuprofile`);
    const logFile = join(base.logDir, `${name}.log`);
    const child = startChild({ name, args: [CLI, role], nodeArgs, env, logFile });
    children.push(child);
    const url = role === 'dispatcher' ? `http://127.0.0.1:${adminPort}` : `http://127.0.0.1:${port}`;
    await waitHttpOk(`${url}/readyz`, child, 60_000, logFile);
    return { child, env, url };
  };

  const stopAll = async (ackedIds: readonly string[] = []): Promise<StopReport> => {
    // Dispatchers first (they finish or release their leases), then the API.
    await Promise.all(children.slice(1).map((c) => c.stop(15_000)));
    if (children[0] !== undefined) await children[0].stop(15_000);
    const final = children.length === 0 ? null : await readFinalState(dbUrl, dataDir, ackedIds);
    if (dataDir !== null) await rm(dataDir, { recursive: true, force: true });
    return { probeFiles, final };
  };

  try {
    const source = sourceVersion();
    if (options.oneProcess === true && options.dispatchers > 0)
      throw new Error('oneProcess runs no dispatcher-only process: dispatchers must be 0');
    const single = options.engine === 'embedded' || options.oneProcess === true;
    const first = await launch(single ? 'serve' : 'api');
    const config = loadConfig(first.env);
    const dispatchers: Child[] = [];
    const addDispatchers = async (count: number): Promise<void> => {
      if (single) throw new Error('this cluster runs one process: no extra dispatchers');
      const started = await Promise.all(Array.from({ length: count }, () => launch('dispatcher')));
      dispatchers.push(...started.map((s) => s.child));
    };
    if (options.engine === 'server' && options.dispatchers > 0) await addDispatchers(options.dispatchers);
    return {
      engine: options.engine,
      apiUrl: first.url,
      api: first.child,
      dispatchers,
      config,
      databaseUrl: dbUrl,
      source,
      dispatching: () => (single ? [first.child] : dispatchers),
      addDispatchers,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
