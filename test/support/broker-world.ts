/**
 * A stage for end-to-end and fault tests of a transport (docs/guides/transports.md): a fresh database on the
 * PostgreSQL server, a receiver, real Tidings processes (an API, dispatchers) with TIDINGS_TRANSPORT=rabbitmq on the
 * machine's RabbitMQ (or the transport of `settings`, transports.ts) under a prefix of the stage's own, deleted at the
 * end. Short settings: a 100 ms publish interval, a 3 s sweep, a 3 s lease, millisecond retries.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { encodeSecret } from '../../src/domain/signing.ts';
import { freshServerDatabase, type TestDatabase } from './db.ts';
import { ApiClient, FAST_SETTINGS, metricValue } from './fault-world.ts';
import { deleteTopology, RABBITMQ_URL, testPrefix } from './rabbitmq.ts';
import { startTestReceiver, type TestReceiver } from './test-receiver.ts';
import { startTidingsProcess, tidingsEnv, type TidingsProcess } from './tidings-process.ts';

export const BROKER_SHARDS = 4;

export interface BrokerWorld {
  readonly database: TestDatabase;
  readonly receiver: TestReceiver;
  readonly prefix: string;
  readonly processes: TidingsProcess[];
  /** The settings of a Tidings process of this world, then `extra`. */
  env(extra?: Readonly<Record<string, string>>): Record<string, string>;
  startApi(): Promise<ApiClient>;
  startDispatcher(name: string, extra?: Readonly<Record<string, string>>): Promise<TidingsProcess>;
  /** An application with `count` endpoints on the receiver at `/<prefix>-<i>`; returns their ids and paths. */
  setupApp(
    api: ApiClient,
    count: number,
    prefix: string,
  ): Promise<{ appId: string; endpoints: { id: string; path: string }[] }>;
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * Polls `text` every 100 ms until `predicate` holds over its rows (a committed row is the event), at most
   * `timeoutMs`.
   */
  waitForRows<R extends pg.QueryResultRow>(
    text: string,
    params: readonly unknown[],
    predicate: (rows: R[]) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<R[]>;
  /** The value of a metric (summed over its labels when `labels` is absent) on a dispatcher's admin server. */
  metric(process: TidingsProcess, name: string): Promise<number>;
  close(): Promise<void>;
}

/** A stage; `cleanup` deletes the broker's names of the prefix at the end (default: RabbitMQ's). */
export async function createBrokerWorld(
  settings: Readonly<Record<string, string>> = {},
  cleanup: (prefix: string) => Promise<void> = (prefix) => deleteTopology(prefix, BROKER_SHARDS),
): Promise<BrokerWorld> {
  const database = await freshServerDatabase();
  const receiver = await startTestReceiver();
  const prefix = testPrefix();
  const processes: TidingsProcess[] = [];
  const env = (extra: Readonly<Record<string, string>> = {}): Record<string, string> =>
    tidingsEnv({
      ...FAST_SETTINGS,
      DATABASE_URL: database.url!,
      TIDINGS_TRANSPORT: 'rabbitmq',
      TIDINGS_RABBITMQ_URL: RABBITMQ_URL,
      TIDINGS_BROKER_PREFIX: prefix,
      TIDINGS_BROKER_SHARDS: String(BROKER_SHARDS),
      TIDINGS_BROKER_PUBLISH_INTERVAL: '100ms',
      TIDINGS_BROKER_SWEEP_AFTER: '3s',
      TIDINGS_BROKER_RECONNECT_MIN: '100ms',
      TIDINGS_BROKER_RECONNECT_MAX: '500ms',
      TIDINGS_BROKER_PUBLISH_TIMEOUT: '2s',
      ...settings,
      ...extra,
    });
  return {
    database,
    receiver,
    prefix,
    processes,
    env,
    async startApi() {
      const p = await startTidingsProcess({ role: 'api', name: 'api', env: env() });
      processes.push(p);
      return new ApiClient(p.apiUrl ?? '');
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
    async setupApp(api, count, pathPrefix) {
      const appId = await api.createApp(`broker ${pathPrefix}`);
      const endpoints: { id: string; path: string }[] = [];
      for (let i = 0; i < count; i++) {
        const path = `/${pathPrefix}-${i}`;
        const secret = encodeSecret(randomBytes(24));
        await receiver.setSecret(path, secret);
        endpoints.push({ id: await api.createEndpoint(appId, receiver.url(path), secret), path });
      }
      return { appId, endpoints };
    },
    async query(text, params = []) {
      return (await database.db.query(text, params)).rows as never;
    },
    async waitForRows<R extends pg.QueryResultRow>(
      text: string,
      params: readonly unknown[],
      predicate: (rows: R[]) => boolean,
      timeoutMs: number,
      what: string,
    ): Promise<R[]> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const rows = (await database.db.query<R>(text, params)).rows;
        if (predicate(rows)) return rows;
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(rows).slice(0, 500)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async metric(process, name) {
      const res = await fetch(`${process.adminUrl}/metrics`);
      return metricValue(await res.text(), name);
    },
    async close() {
      for (const p of processes) await p.kill().catch(() => undefined);
      await receiver.stop();
      await cleanup(prefix).catch(() => undefined);
      await database.drop();
    },
  };
}
