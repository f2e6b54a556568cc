/**
 * The stage of the fault-injection suite (test/faults, issue 4): a private PostgreSQL cluster, Tidings
 * roles as child processes, a recording receiver on 127.0.0.1, an HTTP client for the publish API, and the
 * bookkeeping of the pass criterion (every acknowledged message seen by the receiver; duplicates counted;
 * nothing stuck leased). Every wait is bounded and event-driven (log lines, exits, receiver records,
 * database rows).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { encodeSecret } from '../../src/domain/signing.ts';
import { TEST_ENCRYPTION_KEYS } from './cipher.ts';
import { startPgCluster, type PgCluster } from './pg-cluster.ts';
import { startTestReceiver, type ReceivedRequest, type TestReceiver } from './test-receiver.ts';
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
  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<{ status: number; json: unknown; headers: Headers }> {
    const res = await fetch(this.baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${FAULT_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
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
    if (res.status !== 201 && res.status !== 200) throw new Error(`create app: ${res.status} ${JSON.stringify(res.json)}`);
    return (res.json as { id: string }).id;
  }

  /** Creates an endpoint with a known secret; returns its id. */
  async createEndpoint(appId: string, url: string, secret: string): Promise<string> {
    const res = await this.request('POST', `/api/v1/app/${appId}/endpoint`, { url, secret });
    if (res.status !== 201 && res.status !== 200) throw new Error(`create endpoint: ${res.status} ${JSON.stringify(res.json)}`);
    return (res.json as { id: string }).id;
  }

  /** Publishes one message; returns the HTTP status and the message id of a 2xx answer. */
  async publish(appId: string, payload: unknown, idempotencyKey?: string, signal?: AbortSignal): Promise<{ status: number; id: string | null; replayed: boolean; json: unknown }> {
    const res = await this.request('POST', `/api/v1/app/${appId}/msg?with_content=false`, { eventType: 'fault.test', payload }, idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }, signal);
    const id = res.status >= 200 && res.status < 300 ? (res.json as { id: string }).id : null;
    return { status: res.status, id, replayed: res.headers.get('idempotent-replayed') === 'true', json: res.json };
  }
}

/** Outcome of {@link publishUntilAccepted}. */
export interface PublishOutcome {
  /** The message id once a 2xx answer arrived, else null (gave up). */
  readonly id: string | null;
  /** Every answer or error seen, in order: HTTP status or `network`. */
  readonly tries: readonly (number | 'network')[];
}

/**
 * Publishes with one Idempotency-Key, retrying on 503, 409 (key in flight) and network errors (the API
 * process may be restarting) until a 2xx answer, at most `maxTries` times and until `deadlineAtMs`. Each
 * retry waits for the next turn of `backoffMs` (pacing of a client, not synchronisation).
 */
export async function publishUntilAccepted(api: () => ApiClient | null, appId: string, payload: unknown, key: string, options: { readonly maxTries: number; readonly deadlineAtMs: number; readonly backoffMs: number }): Promise<PublishOutcome> {
  const tries: (number | 'network')[] = [];
  for (let i = 0; i < options.maxTries && Date.now() < options.deadlineAtMs; i++) {
    const client = api();
    if (client !== null) {
      try {
        const res = await client.publish(appId, payload, key, AbortSignal.timeout(10_000));
        tries.push(res.status);
        if (res.id !== null) return { id: res.id, tries };
        if (![503, 409, 500].includes(res.status)) return { id: null, tries };
      } catch {
        tries.push('network');
      }
    }
    await new Promise((resolve) => setTimeout(resolve, options.backoffMs));
  }
  return { id: null, tries };
}

/** True when the receiver took the request: it answered (no stall, no dropped connection) with a 2xx. */
export function acceptedByReceiver(r: ReceivedRequest): boolean {
  const a = r.answer;
  if (a.stall === true || a.destroy === true || a.stallAfterHeaders === true) return false;
  const status = a.status ?? 200;
  return status >= 200 && status < 300;
}

/** One publish try of a load: when it was sent and answered (test wall clock) and what came back. */
export interface Answer {
  readonly sentAtMs: number;
  readonly answeredAtMs: number;
  readonly status: number | 'network';
  readonly id: string | null;
}

/** Options of {@link startLoad}. Every load is bounded in count and in time. */
export interface LoadOptions {
  /** The API to publish to; null while it is down (the try is skipped and counted as `network`). */
  readonly api: () => ApiClient | null;
  readonly appId: string;
  /** Receiver paths each message fans out to. */
  readonly paths: readonly string[];
  readonly ledger: Ledger;
  /** Most messages to publish. */
  readonly maxMessages: number;
  /** Stop publishing after this long, ms. */
  readonly maxMs: number;
  /** Publishers running at once. */
  readonly concurrency: number;
  /** Pause of each publisher between two publishes, ms (pacing of the load, not synchronisation). */
  readonly paceMs: number;
  /**
   * With an Idempotency-Key, retry a message (same key) on 503 / 409 / network errors until it is
   * accepted or `maxTries` is reached; without, each message is tried once.
   */
  readonly retry?: { readonly maxTries: number; readonly backoffMs: number };
}

/** A running load. */
export interface Load {
  /** Every publish try so far. */
  readonly answers: readonly Answer[];
  /** Messages accepted (2xx) so far. */
  readonly accepted: number;
  /** Resolves once `predicate` holds over the answers (checked after each answer); rejects after `timeoutMs`. */
  waitFor(predicate: (answers: readonly Answer[]) => boolean, timeoutMs: number, what: string): Promise<void>;
  /** Stops starting new messages and waits for those in flight. */
  stop(): Promise<void>;
  /** Resolves when the load ended by itself (count or time) or was stopped. */
  readonly done: Promise<void>;
}

/** Starts a bounded publish load; every accepted message goes into the ledger. */
export function startLoad(options: LoadOptions): Load {
  const answers: Answer[] = [];
  const waiters = new Set<{ predicate: (a: readonly Answer[]) => boolean; resolve: () => void; reject: (error: Error) => void }>();
  let started = 0;
  let accepted = 0;
  let stopped = false;
  const endAtMs = Date.now() + options.maxMs;
  const record = (answer: Answer): void => {
    answers.push(answer);
    if (answer.id !== null) {
      accepted += 1;
      options.ledger.accept(answer.id, options.paths);
    }
    for (const w of [...waiters]) if (w.predicate(answers)) w.resolve();
  };
  const tryOnce = async (n: number, key: string | undefined): Promise<Answer> => {
    const sentAtMs = Date.now();
    const client = options.api();
    let answer: Answer;
    if (client === null) answer = { sentAtMs, answeredAtMs: sentAtMs, status: 'network', id: null };
    else {
      try {
        const res = await client.publish(options.appId, { n, at: sentAtMs }, key, AbortSignal.timeout(15_000));
        answer = { sentAtMs, answeredAtMs: Date.now(), status: res.status, id: res.id };
      } catch {
        answer = { sentAtMs, answeredAtMs: Date.now(), status: 'network', id: null };
      }
    }
    record(answer);
    return answer;
  };
  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  const publisher = async (): Promise<void> => {
    while (!stopped && started < options.maxMessages && Date.now() < endAtMs) {
      started += 1;
      const n = started;
      if (options.retry === undefined) await tryOnce(n, undefined);
      else {
        const key = `load-${n}-${randomBytes(6).toString('hex')}`;
        for (let i = 0; i < options.retry.maxTries; i++) {
          const answer = await tryOnce(n, key);
          if (answer.id !== null || (typeof answer.status === 'number' && ![409, 500, 503].includes(answer.status))) break;
          await pause(options.retry.backoffMs);
        }
      }
      await pause(options.paceMs);
    }
  };
  let ended = false;
  const done = Promise.all(Array.from({ length: options.concurrency }, () => publisher())).then(() => {
    stopped = true;
    ended = true;
    for (const w of [...waiters]) {
      if (w.predicate(answers)) w.resolve();
      else w.reject(new Error(`the load ended (${answers.length} answers, ${accepted} accepted) before the awaited condition held`));
    }
  });
  return {
    answers,
    get accepted() {
      return accepted;
    },
    waitFor(predicate, timeoutMs, what) {
      if (predicate(answers)) return Promise.resolve();
      if (ended) return Promise.reject(new Error(`load.waitFor(${what}): the load has ended (${answers.length} answers, ${accepted} accepted)`));
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: () => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve();
          },
          reject: (error: Error) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            reject(new Error(`load.waitFor(${what}): ${error.message}`));
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`load.waitFor(${what}): not met within ${timeoutMs} ms; ${answers.length} answers, ${accepted} accepted`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async stop() {
      stopped = true;
      await done;
    },
    done,
  };
}

/** The figures of one scenario's run (the pass criterion of issue 4). */
export interface Figures {
  /** Deliveries expected: acknowledged messages × the endpoints each fans out to. */
  readonly messages: number;
  /** Expected (endpoint path, webhook-id) pairs the receiver never accepted (answered 2xx). */
  readonly lost: number;
  /**
   * Accepted (2xx-answered) requests beyond the first for each (path, webhook-id): the receiver got the
   * event again after it had taken it. A request it refused (e.g. a scripted 500) is a failed attempt, not
   * a duplicate.
   */
  readonly duplicates: number;
  /** Every request the receiver recorded for these deliveries. */
  readonly requests: number;
  /** Requests whose signature standardwebhooks refused. */
  readonly invalidSignatures: number;
  /** Requests carrying an id that was never acknowledged (a publish whose answer was lost may still deliver). */
  readonly unacknowledged: number;
}

/**
 * The bookkeeping of acknowledged messages: which (path, webhook-id) pairs the receiver must see.
 */
export class Ledger {
  readonly #expected = new Map<string, Set<string>>();

  /** Records that message `id` was acknowledged (2xx) and fans out to `paths`. */
  accept(id: string, paths: readonly string[]): void {
    this.#expected.set(id, new Set(paths));
  }

  /** Acknowledged message ids. */
  get ids(): readonly string[] {
    return [...this.#expected.keys()];
  }

  /** Number of expected deliveries. */
  get deliveries(): number {
    let n = 0;
    for (const paths of this.#expected.values()) n += paths.size;
    return n;
  }

  /** True when every expected (path, id) pair is among `requests`. */
  allSeen(requests: readonly ReceivedRequest[]): boolean {
    return this.figures(requests).lost === 0;
  }

  /** Counts lost, duplicates and bad signatures over the receiver's records. */
  figures(requests: readonly ReceivedRequest[]): Figures {
    const seen = new Map<string, number>();
    let invalidSignatures = 0;
    let unacknowledged = 0;
    let counted = 0;
    for (const r of requests) {
      if (r.webhookId === null || !this.#expected.has(r.webhookId)) unacknowledged += 1;
      else counted += 1;
      if (r.signatureValid !== true) invalidSignatures += 1;
      if (!acceptedByReceiver(r)) continue;
      const key = `${r.path} ${r.webhookId ?? ''}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    let lost = 0;
    let duplicates = 0;
    for (const [id, paths] of this.#expected) {
      for (const path of paths) {
        const n = seen.get(`${path} ${id}`) ?? 0;
        if (n === 0) lost += 1;
        else duplicates += n - 1;
      }
    }
    return { messages: this.deliveries, lost, duplicates, requests: counted, invalidSignatures, unacknowledged };
  }

  /** The expected pairs not yet accepted by the receiver (for failure messages), at most `limit`. */
  missing(requests: readonly ReceivedRequest[], limit = 10): string[] {
    const seen = new Set(requests.filter(acceptedByReceiver).map((r) => `${r.path} ${r.webhookId ?? ''}`));
    const out: string[] = [];
    for (const [id, paths] of this.#expected) {
      for (const path of paths) if (!seen.has(`${path} ${id}`) && out.length < limit) out.push(`${path} ${id}`);
    }
    return out;
  }
}

/**
 * Prints the summary line of a scenario (issue 4: messages, lost, duplicates), greppable as
 * `fault-summary`, and returns it.
 */
export function printSummary(scenario: string, figures: Figures, startedAtMs: number, extra: Record<string, unknown> = {}): string {
  const seconds = ((Date.now() - startedAtMs) / 1000).toFixed(1);
  const line = `fault-summary scenario="${scenario}" messages=${figures.messages} lost=${figures.lost} duplicates=${figures.duplicates} requests=${figures.requests} invalid_signatures=${figures.invalidSignatures} time_s=${seconds}${Object.entries(extra).map(([k, v]) => ` ${k}=${typeof v === 'string' ? JSON.stringify(v) : String(v)}`).join('')}`;
  console.log(line);
  return line;
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
  /** Starts a `dispatcher` process with TIDINGS_WORKER_ID = `name`. */
  startDispatcher(name: string, extra?: Readonly<Record<string, string>>): Promise<TidingsProcess>;
  /** Creates an application with `count` endpoints on the receiver (paths `/<prefix>-<i>`), secrets known to the receiver. */
  setupApp(api: ApiClient, count: number, prefix?: string): Promise<{ readonly appId: string; readonly endpoints: readonly WorldEndpoint[] }>;
  /** Runs a query on the test's pool. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * Polls `text` every 100 ms until `predicate` holds over its rows (a database row is the event), at
   * most `timeoutMs`; database errors while polling (a restart) count as "not yet".
   */
  waitForRows<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params: readonly unknown[], predicate: (rows: R[]) => boolean, timeoutMs: number, what: string): Promise<R[]>;
  /** Kills (SIGKILL) every dispatcher still running: a failed test must not leave one to claim the next test's work. */
  killDispatchers(): Promise<void>;
  /** Deliveries leased with a lease that expired more than `graceMs` ago (database clock): must be none. */
  stuckLeases(graceMs?: number): Promise<number>;
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
  const env = (extra: Readonly<Record<string, string>> = {}): Record<string, string> => tidingsEnv({ ...FAST_SETTINGS, DATABASE_URL: databaseUrl, ...options.settings, ...extra });

  const query = async <R extends pg.QueryResultRow>(text: string, params: readonly unknown[] = []): Promise<R[]> => (await pool.query<R>(text, params as unknown[])).rows;

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
    async startDispatcher(name, extra = {}) {
      const p = await startTidingsProcess({ role: 'dispatcher', name, env: env({ TIDINGS_WORKER_ID: name, ...extra }) });
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
    async waitForRows<R extends pg.QueryResultRow>(text: string, params: readonly unknown[], predicate: (rows: R[]) => boolean, timeoutMs: number, what: string): Promise<R[]> {
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
        if (Date.now() > deadline) throw new Error(`waitForRows(${what}): not met within ${timeoutMs} ms; last: ${JSON.stringify(last).slice(0, 1500)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async killDispatchers() {
      for (const p of processes) if (p.role === 'dispatcher' && p.alive) await p.kill().catch(() => undefined);
    },
    async stuckLeases(graceMs = 0) {
      const rows = await query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE state = 'leased' AND lease_expires_at < clock_timestamp() - $1 * interval '1 millisecond'`, [graceMs]);
      return rows[0]?.n ?? 0;
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
