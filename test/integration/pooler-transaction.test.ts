/**
 * Tidings behind a real PgBouncer in transaction mode (docs/guides/poolers-and-replicas.md): a private PgBouncer
 * on 127.0.0.1 in front of the test server, strict (every server session reset with DISCARD ALL after each
 * transaction, so a statement prepared by name, a session SET or a LISTEN through it fails every time). The
 * API and the dispatcher run in this process with DATABASE_URL through the pooler; migrations and LISTEN take the
 * direct URL (TIDINGS_DIRECT_DATABASE_URL). PostgreSQL server only (a pooler has no embedded form).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { Svix } from 'svix';
import { encodeSecret } from '../../src/domain/signing.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { SERVER_ADMIN_URL } from '../support/db.ts';
import { LogTap, type LogLine } from '../support/log-tap.ts';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';
import { startTestReceiver, type ReceivedRequest, type TestReceiver } from '../support/test-receiver.ts';

/** The fields of an API answer the test reads. */
type Answer = { readonly id: string; readonly data: readonly { readonly id: string }[] };
/** A raw API call with the admin token: status and parsed JSON. */
type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; json: Answer }>;

const TOKEN = `pooler_${randomBytes(12).toString('hex')}`;
const WAIT_MS = 30_000;
const SETTINGS: Readonly<Record<string, string>> = {
  TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
  TIDINGS_API_TOKEN: TOKEN,
  HOST: '127.0.0.1',
  PORT: '0',
  TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
  TIDINGS_POLL_INTERVAL: '100ms',
  TIDINGS_LOG_LEVEL: 'info',
  TIDINGS_RETRY_SCHEDULE: '50ms,50ms',
  TIDINGS_DB_POOL_SIZE: '4',
  TIDINGS_BREAKER_THRESHOLD: '1000',
  // Every delivery goes through the claim (named statements, run many times on the same pooled connections).
  TIDINGS_PUBLISH_HANDOFF: 'false',
};

function caller(apiUrl: string): Call {
  return async (method, path, body, headers = {}) => {
    const json = body === undefined ? {} : { 'content-type': 'application/json' };
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...json, ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (res.status === 204 ? null : await res.json()) as Answer };
  };
}

/** What the console reads of an application, each through the API. */
function consoleReads(appId: string, messageId: string, endpoints: { ok: string; flaky: string }): string[] {
  const app = `/api/v1/app/${appId}`;
  return [
    '/api/v1/app?limit=10',
    `${app}/endpoint`,
    `${app}/msg?with_content=true`,
    `${app}/msg/${messageId}`,
    `${app}/attempt/endpoint/${endpoints.flaky}`,
    `${app}/attempt/msg/${messageId}`,
    `${app}/msg/${messageId}/endpoint`,
    `${app}/endpoint/${endpoints.ok}/msg`,
    `${app}/endpoint/${endpoints.ok}/stats`,
    `${app}/dead-letter`,
    '/api/v1/dead-letter',
    '/api/v1/stats/overview',
    '/api/v1/stats/time-in-state?window=1h',
  ];
}

describe('behind PgBouncer in transaction mode', () => {
  const name = `tidings_t_${randomBytes(6).toString('hex')}`;
  const directUrl = SERVER_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  let bouncer: PgBouncer;
  let pooledUrl: string;
  let receiver: TestReceiver;
  const running: Running[] = [];

  const start = async (env: Record<string, string>, logs = new LogTap()): Promise<Running> => {
    const roles = { api: true, dispatcher: true };
    const tidings = await startTidings({ roles, logDestination: logs, env: { ...SETTINGS, ...env } });
    running.push(tidings);
    return tidings;
  };
  const endpoint = async (svix: Svix, appId: string, path: string): Promise<string> => {
    const secret = encodeSecret(randomBytes(32));
    await receiver.setSecret(path, secret);
    return (await svix.endpoint.create(appId, { url: receiver.url(path), secret })).id;
  };
  const onAdmin = async (sql: string): Promise<void> => {
    const admin = new pg.Client({ connectionString: SERVER_ADMIN_URL });
    await admin.connect();
    await admin.query(sql).finally(() => admin.end());
  };
  /** The LISTEN sessions of the test database that are not one of PgBouncer's server sessions, and the migrations. */
  const directSessions = async (): Promise<{ listeners: number; pooledListeners: number; migrations: number }> => {
    const direct = new pg.Client({ connectionString: directUrl });
    await direct.connect();
    try {
      const listening = `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN tidings_due'`;
      const pids = (await direct.query<{ pid: number }>(listening, [name])).rows.map((r) => r.pid);
      const servers = await bouncer.admin<{ remote_pid: number }>('SHOW SERVERS');
      const pooled = new Set(servers.map((s) => Number(s.remote_pid)));
      const counted = await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM pgmigrations');
      const migrations = counted.rows[0]?.n ?? 0;
      return { listeners: pids.length, pooledListeners: pids.filter((pid) => pooled.has(pid)).length, migrations };
    } finally {
      await direct.end();
    }
  };

  before(async () => {
    await onAdmin(`CREATE DATABASE ${name}`);
    const server = new URL(SERVER_ADMIN_URL);
    const target = { host: server.hostname, port: Number(server.port || 5432) };
    bouncer = await startPgBouncer({ target, poolSize: 5 });
    pooledUrl = bouncer.url(name);
    receiver = await startTestReceiver();
  });

  after(async () => {
    for (const tidings of running) await tidings.stop().catch(() => undefined);
    await receiver?.stop();
    await bouncer?.stop();
    await onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  test(
    'the pooled URL under TIDINGS_DATABASE_POOLER=none is ' + 'refused at start-up, before anything is written',
    async () => {
      await assert.rejects(start({ DATABASE_URL: pooledUrl }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'database_pooler_mismatch');
        assert.match(error.message, /TIDINGS_DATABASE_POOLER=transaction/);
        return true;
      });
    },
  );

  test(
    'without a direct URL, a database with migrations pending is ' + 'refused at start-up, naming the setting',
    async () => {
      const pooledOnly = { DATABASE_URL: pooledUrl, TIDINGS_DATABASE_POOLER: 'transaction' };
      await assert.rejects(start(pooledOnly), (error: Error & { code?: string; pending?: string[] }) => {
        assert.equal(error.code, 'migration_needs_session');
        assert.match(error.message, /TIDINGS_DIRECT_DATABASE_URL/);
        assert.ok((error.pending ?? []).includes('1764000000000_baseline'));
        return true;
      });
    },
  );

  test(
    "publish, deliver, retry, idempotency, recover and the console's reads all work through the pooler; LISTEN " +
      'and migrations use the direct URL',
    async () => {
      const logs = new LogTap();
      const env = {
        DATABASE_URL: pooledUrl,
        TIDINGS_DATABASE_POOLER: 'transaction',
        TIDINGS_DIRECT_DATABASE_URL: directUrl,
      };
      const tidings = await start(env, logs);
      const svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
      const call = caller(tidings.apiUrl!);
      const app = await svix.application.create({ name: 'pooled' });
      const ok = await endpoint(svix, app.id, '/ok');
      const flaky = await endpoint(svix, app.id, '/flaky');
      await receiver.script('/flaky', [{ status: 500 }], { status: 200 });
      const down = await endpoint(svix, app.id, '/down');
      await receiver.script('/down', [], { status: 503 });

      // Several publishes, so that every hot statement runs more than once on the same pooled connections.
      const ids: string[] = [];
      for (let n = 0; n < 6; n++) {
        ids.push((await svix.message.create(app.id, { eventType: 'pool.test', payload: { n } })).id);
      }
      const keyed = { eventType: 'pool.test', payload: { keyed: true } };
      const first = await call('POST', `/api/v1/app/${app.id}/msg`, keyed, { 'idempotency-key': 'pooled-1' });
      const again = await call('POST', `/api/v1/app/${app.id}/msg`, keyed, { 'idempotency-key': 'pooled-1' });
      assert.equal(first.status, 202);
      assert.equal(again.json.id, first.json.id, 'the stored answer is replayed');
      ids.push(first.json.id);
      const seen = (path: string, status?: number) => (rs: readonly ReceivedRequest[]) =>
        ids.every((id) =>
          rs.some((r) => r.path === path && r.webhookId === id && (status === undefined || r.answer.status === status)),
        );
      await receiver.waitFor(seen('/ok'), WAIT_MS, 'every message delivered to /ok');
      await receiver.waitFor(seen('/flaky'), WAIT_MS, 'every message delivered to /flaky after its retry');
      const deadLine = (l: LogLine): boolean => l.event === 'delivery.attempted' && l.next === 'dead';
      assert.equal(
        (await logs.waitForCount(deadLine, ids.length, WAIT_MS, 'dead letters of /down')).length,
        ids.length,
      );

      // Replay: the dead letters of /down, sent again once it answers.
      await receiver.script('/down', [], { status: 200 });
      const since = new Date(Date.now() - 3_600_000).toISOString();
      assert.equal((await call('POST', `/api/v1/app/${app.id}/endpoint/${down}/recover`, { since })).status, 202);
      await receiver.waitFor(seen('/down', 200), WAIT_MS, 'recovered to /down');

      for (const path of consoleReads(app.id, ids[0]!, { ok, flaky })) {
        const res = await call('GET', path);
        assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.json)}`);
      }
      assert.equal((await call('GET', `/api/v1/app/${app.id}/msg?limit=50`)).json.data.length, ids.length);

      // The statements went through PgBouncer; its server sessions never held the LISTEN, a session of its own did.
      const stats = await bouncer.admin<{ database: string; total_xact_count: string }>('SHOW STATS');
      const transactions = Number(stats.find((s) => s.database === name)?.total_xact_count ?? 0);
      assert.ok(transactions > 100, 'transactions through the pooler');
      const sessions = await directSessions();
      assert.equal(sessions.listeners, 1, 'one LISTEN session');
      assert.equal(sessions.pooledListeners, 0, "the LISTEN session is not one of the pooler's");
      assert.ok(sessions.migrations >= 1, 'migrations applied through the direct URL');
      assert.deepEqual(
        logs.lines.filter((l) => Number(l.level) >= 50),
        [],
        'no error logged',
      );
      await tidings.stop();
    },
  );

  test(
    'with only the pooled URL on a migrated database: it starts, says once that dispatchers poll, and delivers ' +
      'by polling',
    async () => {
      const logs = new LogTap();
      const tidings = await start({ DATABASE_URL: pooledUrl, TIDINGS_DATABASE_POOLER: 'transaction' }, logs);
      const polling = logs.lines.filter((l) => String(l.msg).includes('without TIDINGS_DIRECT_DATABASE_URL'));
      assert.equal(polling.length, 1);
      const svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
      const app = await svix.application.create({ name: 'polled' });
      await endpoint(svix, app.id, '/polled');
      const msg = await svix.message.create(app.id, { eventType: 'pool.test', payload: { polled: true } });
      const delivered = (rs: readonly ReceivedRequest[]): boolean =>
        rs.some((r) => r.path === '/polled' && r.webhookId === msg.id);
      await receiver.waitFor(delivered, WAIT_MS, 'delivered');
      assert.deepEqual(
        logs.lines.filter((l) => Number(l.level) >= 50),
        [],
      );
      await tidings.stop();
    },
  );
});
