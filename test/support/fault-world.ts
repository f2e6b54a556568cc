/**
 * The stage of the fault-injection suite (test/faults): a private PostgreSQL cluster, Tidings
 * roles as child processes, a recording receiver on 127.0.0.1 and an HTTP client for the publish API. The
 * load and the bookkeeping of the pass criterion are in fault-load.ts. Every wait is bounded and
 * event-driven (log lines, exits, receiver records, database rows).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { encodeSecret } from '../../src/domain/signing.ts';
import { TEST_ENCRYPTION_KEYS } from './cipher.ts';
import { startPgCluster, type PgCluster } from './pg-cluster.ts';
import { startTestReceiver, type TestReceiver } from './test-receiver.ts';
import { startTidingsProcess, tidingsEnv, type TidingsProcess } from './tidings-process.ts';

/** The admin token of every Tidings process of the suite. */
export const FAULT_ADMIN_TOKEN = 'tidings_fault_suite_admin_token_0123456789';

/**
 * Settings for fast fault scenarios: a 3 s lease over a 2 s attempt deadline (the start-up check wants
 * lease ≥ deadline + 1 s), a millisecond retry schedule with eight attempts, a short poll, small pools.
 */
export const FAST_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
  TIDINGS_API_TOKEN: FAULT_ADMIN_TOKEN,
  TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
  HOST: '127.0.0.1',
  PORT: '0',
  TIDINGS_ADMIN_PORT: '0',
  TIDINGS_LOG_LEVEL: 'info',
  TIDINGS_LEASE: '3s',
  TIDINGS_ATTEMPT_DEADLINE: '2s',
  TIDINGS_CONNECT_TIMEOUT: '1s',
  TIDINGS_HEADERS_TIMEOUT: '2s',
  TIDINGS_BODY_TIMEOUT: '2s',
  TIDINGS_POLL_INTERVAL: '250ms',
  TIDINGS_SHUTDOWN_GRACE: '5s',
  TIDINGS_RETRY_SCHEDULE: '100ms,200ms,400ms,800ms,1s,1s,1s',
  TIDINGS_DB_POOL_SIZE: '5',
  TIDINGS_CONCURRENCY: '32',
  TIDINGS_IDEMPOTENCY_WAIT: '2s',
});

/**
 * The error kinds of an attempt whose receiver answered too slowly. The scenarios' receivers answer within
 * 200 ms, well inside the 2 s deadline, but on a machine whose cores are saturated a process may not run for
 * seconds: such an attempt really was made and failed, and is charged like any other.
 */
export const RECEIVER_TIMEOUT_KINDS: readonly string[] = Object.freeze(['timeout_headers', 'timeout_body', 'deadline']);
/**
 * The shortest such attempt, in ms: the 2 s headers, body and attempt timeouts of {@link FAST_SETTINGS}, less timer
 * slack.
 */
export const RECEIVER_TIMEOUT_MIN_MS = 1_900;

/**
 * How a scenario's deliveries were charged (docs/adr/0002-schema-and-claim.md: a claim never charges an
 * attempt; only a recorded outcome does, fenced by the lease).
 */
export interface AttemptAccounting {
  /**
   * Deliveries whose `attempt_count` differs from their attempt rows: charged without a recorded attempt. Must be 0.
   */
  readonly unrecorded: number;
  /** Deliveries without exactly one succeeded attempt (a stale outcome written beside the newer one, or none). */
  readonly notSucceededOnce: number;
  /** Failed attempts recorded, of any kind. */
  readonly failed: number;
  /**
   * Failed attempts that are not a receiver timeout ({@link RECEIVER_TIMEOUT_KINDS}, lasting at least
   * {@link RECEIVER_TIMEOUT_MIN_MS}): a fault's doing. Must be 0.
   */
  readonly failedOtherThanTimeout: number;
  readonly failedKinds: readonly string[];
}

/** One endpoint of the scenario's application, with the receiver path it points at. */
export interface WorldEndpoint {
  readonly id: string;
  readonly path: string;
  readonly secret: string;
}

/** A small client of the publish API (Svix shapes), with the admin token. */
export class ApiClient {
  readonly baseUrl: string;
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  /** A raw request; the body is JSON text. Network errors propagate (the caller decides what they mean). */
  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<{ status: number; json: unknown; headers: Headers }> {
    const res = await fetch(this.baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${FAULT_ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal === undefined ? {} : { signal }),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text === '' ? null : JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, json, headers: res.headers };
  }

  /** Creates an application; returns its id. */
  async createApp(name: string): Promise<string> {
    const res = await this.request('POST', '/api/v1/app', { name });
    if (res.status !== 201 && res.status !== 200)
      throw new Error(`create app: ${res.status} ${JSON.stringify(res.json)}`);
    return (res.json as { id: string }).id;
  }

  /** Creates an endpoint with a known secret; returns its id. */
  async createEndpoint(appId: string, url: string, secret: string): Promise<string> {
    const res = await this.request('POST', `/api/v1/app/${appId}/endpoint`, { url, secret });
    if (res.status !== 201 && res.status !== 200)
      throw new Error(`create endpoint: ${res.status} ${JSON.stringify(res.json)}`);
    return (res.json as { id: string }).id;
  }

  /** Publishes one message; returns the HTTP status and the message id of a 2xx answer. */
  async publish(
    appId: string,
    payload: unknown,
    idempotencyKey?: string,
    signal?: AbortSignal,
  ): Promise<{ status: number; id: string | null; replayed: boolean; json: unknown }> {
    const res = await this.request(
      'POST',
      `/api/v1/app/${appId}/msg?with_content=false`,
      { eventType: 'fault.test', payload },
      idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
      signal,
    );
    const id = res.status >= 200 && res.status < 300 ? (res.json as { id: string }).id : null;
    return { status: res.status, id, replayed: res.headers.get('idempotent-replayed') === 'true', json: res.json };
  }
}

/** Options of {@link createWorld}. */
export interface WorldOptions {
  /** Settings over {@link FAST_SETTINGS} for every process. */
  readonly settings?: Readonly<Record<string, string>>;
}

/** One scenario's stage. {@link FaultWorld.close} stops everything it started. */
export interface FaultWorld {
  readonly cluster: PgCluster;
  /** DATABASE_URL of the scenario's database on the private cluster. */
  readonly databaseUrl: string;
  /** The test's own connections (checks on rows, database clock). */
  readonly pool: pg.Pool;
  readonly receiver: TestReceiver;
  /** Every Tidings process started, in order. */
  readonly processes: readonly TidingsProcess[];
  /** The environment of a Tidings process: {@link FAST_SETTINGS}, the world's settings, then `extra`. */
  env(extra?: Readonly<Record<string, string>>): Record<string, string>;
  /** Starts an `api` process. */
  startApi(name?: string, extra?: Readonly<Record<string, string>>): Promise<TidingsProcess>;
  /** Starts a `dispatcher` process with TIDINGS_DISPATCHER_ID = `name`. */
  startDispatcher(name: string, extra?: Readonly<Record<string, string>>): Promise<TidingsProcess>;
  /**
   * Starts a `serve` process (the API and a dispatcher, as `npm start` runs them) with TIDINGS_DISPATCHER_ID = `name`.
   */
  startServe(name: string, extra?: Readonly<Record<string, string>>): Promise<TidingsProcess>;
  /**
   * Creates an application with `count` endpoints on the receiver (paths `/<prefix>-<i>`), secrets known to the
   * receiver.
   */
  setupApp(
    api: ApiClient,
    count: number,
    prefix?: string,
  ): Promise<{ readonly appId: string; readonly endpoints: readonly WorldEndpoint[] }>;
  /** Runs a query on the test's pool. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * Polls `text` every 100 ms until `predicate` holds over its rows (a database row is the event), at
   * most `timeoutMs`; database errors while polling (a restart) count as "not yet".
   */
  waitForRows<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    params: readonly unknown[],
    predicate: (rows: R[]) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<R[]>;
  /** Kills (SIGKILL) every dispatcher still running: a failed test must not leave one to claim the next test's work. */
  killDispatchers(): Promise<void>;
  /** Deliveries leased with a lease that expired more than `graceMs` ago (database clock): must be none. */
  stuckLeases(graceMs?: number): Promise<number>;
  /** How the application's deliveries were charged: see {@link AttemptAccounting}. */
  attemptAccounting(appId: string): Promise<AttemptAccounting>;
  /**
   * Runs a scenario's body; when it throws, every process's log lines and stderr are written to a fresh
   * temporary folder first, and the error names it (a failure on a shared machine can then be read).
   */
  keepLogsOnFailure<T>(body: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Creates a world: a private cluster with a fresh database, a test pool and a receiver. Tidings processes
 * migrate the database themselves at start-up.
 */
export async function createWorld(options: WorldOptions = {}): Promise<FaultWorld> {
  const cluster = await startPgCluster();
  const databaseUrl = await cluster.createDatabase('tidings');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined);
  const receiver = await startTestReceiver();
  const processes: TidingsProcess[] = [];
  const env = (extra: Readonly<Record<string, string>> = {}): Record<string, string> =>
    tidingsEnv({ ...FAST_SETTINGS, DATABASE_URL: databaseUrl, ...options.settings, ...extra });

  const query = async <R extends pg.QueryResultRow>(text: string, params: readonly unknown[] = []): Promise<R[]> =>
    (await pool.query<R>(text, params as unknown[])).rows;

  const world: FaultWorld = {
    cluster,
    databaseUrl,
    pool,
    receiver,
    processes,
    env,
    async startApi(name = 'api', extra = {}) {
      const p = await startTidingsProcess({ role: 'api', name, env: env(extra) });
      processes.push(p);
      return p;
    },
    async startServe(name, extra = {}) {
      const p = await startTidingsProcess({ role: 'serve', name, env: env({ TIDINGS_DISPATCHER_ID: name, ...extra }) });
      processes.push(p);
      return p;
    },
    async startDispatcher(name, extra = {}) {
      const p = await startTidingsProcess({
        role: 'dispatcher',
        name,
        env: env({ TIDINGS_DISPATCHER_ID: name, ...extra }),
      });
      processes.push(p);
      return p;
    },
    async setupApp(api, count, prefix = 'ep') {
      const appId = await api.createApp(`fault ${prefix}`);
      const endpoints: WorldEndpoint[] = [];
      for (let i = 0; i < count; i++) {
        const path = `/${prefix}-${i}`;
        const secret = encodeSecret(randomBytes(24));
        await receiver.setSecret(path, secret);
        const id = await api.createEndpoint(appId, receiver.url(path), secret);
        endpoints.push({ id, path, secret });
      }
      return { appId, endpoints };
    },
    query,
    async waitForRows<R extends pg.QueryResultRow>(
      text: string,
      params: readonly unknown[],
      predicate: (rows: R[]) => boolean,
      timeoutMs: number,
      what: string,
    ): Promise<R[]> {
      const deadline = Date.now() + timeoutMs;
      let last: R[] | string = 'no answer yet';
      for (;;) {
        try {
          const rows = await query<R>(text, params);
          if (predicate(rows)) return rows;
          last = rows;
        } catch (error) {
          last = (error as Error).message;
        }
        if (Date.now() > deadline)
          throw new Error(
            `waitForRows(${what}): not met within ${timeoutMs} ms; last: ${JSON.stringify(last).slice(0, 1500)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async killDispatchers() {
      for (const p of processes)
        if ((p.role === 'dispatcher' || p.role === 'serve') && p.alive) await p.kill().catch(() => undefined);
    },
    async stuckLeases(graceMs = 0) {
      const rows = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM deliveries WHERE state = 'leased' AND lease_expires_at < ` +
          `clock_timestamp() - $1 * interval '1 millisecond'`,
        [graceMs],
      );
      return rows[0]?.n ?? 0;
    },
    async attemptAccounting(appId) {
      const [row] = await query<{
        unrecorded: number;
        not_once: number;
        failed: number;
        failed_other: number;
        kinds: string[] | null;
      }>(
        `
        WITH per AS (
          SELECT d.id, d.attempt_count, count(a.id)::int AS rows, count(a.id) FILTER (WHERE a.succeeded)::int AS ok
          FROM deliveries d LEFT JOIN attempts a ON a.delivery_id = d.id WHERE d.app_id = $1 GROUP BY d.id)
        SELECT (SELECT count(*)::int FROM per WHERE attempt_count <> rows) AS unrecorded,
               (SELECT count(*)::int FROM per WHERE ok <> 1) AS not_once,
               (SELECT count(*)::int FROM attempts WHERE app_id = $1 AND NOT succeeded) AS failed,
               (SELECT count(*)::int FROM attempts WHERE app_id = $1 AND NOT succeeded
                 AND (error_kind IS NULL OR NOT (error_kind = ANY ($2)) OR duration_ms < $3)) AS failed_other,
               (SELECT array_agg(DISTINCT coalesce(error_kind, 'none')) FROM attempts WHERE app_id = $1
                 AND NOT succeeded) AS kinds`,
        [appId, RECEIVER_TIMEOUT_KINDS, RECEIVER_TIMEOUT_MIN_MS],
      );
      return {
        unrecorded: row?.unrecorded ?? 0,
        notSucceededOnce: row?.not_once ?? 0,
        failed: row?.failed ?? 0,
        failedOtherThanTimeout: row?.failed_other ?? 0,
        failedKinds: row?.kinds ?? [],
      };
    },
    async keepLogsOnFailure(body) {
      try {
        return await body();
      } catch (error) {
        const dir = mkdtempSync(join(tmpdir(), 'tidings-fault-logs-'));
        for (const [i, p] of processes.entries()) {
          writeFileSync(join(dir, `${i}-${p.name}.jsonl`), p.lines.map((l) => JSON.stringify(l)).join('\n'));
          if (p.stderr !== '') writeFileSync(join(dir, `${i}-${p.name}.stderr`), p.stderr);
        }
        throw new Error(`${(error as Error).message} (process logs: ${dir})`, { cause: error });
      }
    },
    async close() {
      for (const p of processes) await p.kill().catch(() => undefined);
      await receiver.stop().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await cluster.destroy();
    },
  };
  return world;
}

/** Reads one counter (sum over its labels) from a Prometheus text page. */
export function metricValue(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+([0-9.eE+-]+)$/.exec(line.trim());
    if (match !== null && match[1] === name) sum += Number(match[3]);
  }
  return sum;
}

/** Fetches `/metrics` of a process (admin URL of a dispatcher, API URL otherwise) and reads `name`. */
export async function readMetric(baseUrl: string, name: string): Promise<number> {
  const res = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return metricValue(await res.text(), name);
}
