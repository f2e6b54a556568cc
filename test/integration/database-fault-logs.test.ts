/**
 * What the log says when the database server drops Tidings' connections (SQLSTATE 57P01, as in a restart), on the
 * PostgreSQL server (the embedded engine is one process: nothing restarts under it). Regression: each failure
 * was a line of its own (at error from the jobs, once a second), and the pool's error carried the whole pg
 * client into the line (16 KB: its cancel key and every prepared statement).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { openDb, type Db } from '../../src/adapters/postgres/db.ts';
import { isDatabaseUnavailable } from '../../src/adapters/postgres/sqlstate.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createTransientFaults } from '../../src/observability/transient-faults.ts';
import { startTidings } from '../../src/main/compose.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/cipher.ts';
import { freshServerDatabase, SERVER_ADMIN_URL, type TestDatabase } from '../support/db.ts';
import { LogTap, type LogLine } from '../support/log-tap.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

describe('database fault logs (server)', () => {
  let database: TestDatabase;
  let db: Db;
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const transient = createTransientFaults({ isTransient: isDatabaseUnavailable });
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      raw.push(chunk.toString());
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink, transient });
  let connected!: () => void;
  let idleFailed!: () => void;

  before(async () => {
    database = await freshServerDatabase();
    db = await openDb({
      databaseUrl: database.url,
      dataDir: '',
      poolSize: 4,
      onError: (error) => {
        logger.warn({ err: error }, 'idle database connection failed');
        idleFailed?.();
      },
      onConnect: () => {
        transient.recovered();
        connected?.();
      },
    });
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  test(
    'connections terminated by the server give one short warn line, ' + 'and a new connection one line with the count',
    async () => {
      // Four idle connections, each with prepared statements (what the client would have carried into the line).
      await Promise.all(Array.from({ length: 4 }, (_, i) => db.query(`SELECT pg_sleep(0.05), $1::int AS n`, [i])));
      const idle = new Promise<void>((resolve) => {
        idleFailed = resolve;
      });
      const admin = await openDb({ databaseUrl: SERVER_ADMIN_URL, dataDir: '', poolSize: 1 });
      try {
        const dbName = new URL(database.url!).pathname.slice(1);
        const killed = await admin.query<{ n: number }>(
          'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> ' +
            'pg_backend_pid()',
          [dbName],
        );
        assert.ok(killed.rows[0]!.n >= 1);
      } finally {
        await admin.close();
      }
      // The pool reports its idle connections' end (pg-pool attaches the client to that error).
      let timer: NodeJS.Timeout | undefined;
      const within = (ms: number, what: string) =>
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(what)), ms);
        });
      await Promise.race([idle, within(10_000, 'no idle connection error reported')]);
      clearTimeout(timer);
      // The callers go on as they do: each failed call is reported at error (as the roll-up job does) until one
      // succeeds.
      const reconnected = new Promise<void>((resolve) => {
        connected = resolve;
      });
      let calls = 0;
      for (; calls < 20; calls += 1) {
        try {
          await db.query('SELECT 1');
          break;
        } catch (error) {
          logger.error({ err: error }, 'stats roll-up failed');
        }
      }
      assert.ok(calls < 20, 'the database answers again');
      await Promise.race([reconnected, within(10_000, 'no new connection reported')]);
      clearTimeout(timer);
      const down = lines.filter((l) => l.event === 'database.unavailable');
      assert.equal(down.length, 1, JSON.stringify(lines.map((l) => [l.level, l.msg])));
      assert.equal(down[0]!.level, 40, 'warn, not error');
      assert.equal((down[0]!.err as { code?: string }).code, '57P01');
      assert.deepEqual(
        lines.filter((l) => l.level === 50),
        [],
        'no error line',
      );
      const longest = Math.max(...raw.map((r) => r.length));
      assert.ok(longest < 2048, `a line of ${longest} characters`);
      assert.ok(!raw.join('').includes('"client"'), 'no pg client in the log');
      const up = lines.filter((l) => l.event === 'database.available');
      assert.equal(up.length, 1);
      assert.ok(Number(up[0]!.failures) >= 1);
      assert.equal(lines.length, 2, 'two lines in all: down, and up again with the count');
    },
  );
});

describe('a dispatcher cut from the database (server)', () => {
  test(
    'an outage of many claim back-offs is one warn line when it starts and one when it ends, not a line per ' +
      'back-off (the back-offs are debug lines)',
    async () => {
      const database = await freshServerDatabase();
      const target = new URL(database.url!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const through = new URL(database.url!);
      through.hostname = '127.0.0.1';
      through.port = String(proxy.port);
      const logs = new LogTap();
      const tidings = await startTidings({
        roles: { api: false, dispatcher: true },
        logDestination: logs,
        env: {
          DATABASE_URL: through.href,
          TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
          TIDINGS_POLL_INTERVAL: '50ms',
          TIDINGS_LOG_LEVEL: 'debug',
        },
      });
      try {
        const backOff = (l: LogLine): boolean => l.msg === 'claim failed; backing off';
        const cutAt = logs.lines.length;
        proxy.setMode('cut');
        await logs.waitForCount(backOff, 4, 30_000, 'claim back-offs');
        proxy.setMode('pass');
        await logs.waitFor((l) => l.msg === 'claims resumed', 30_000, 'claims resumed');
        const during = logs.lines.slice(cutAt);
        const warned = during.filter((l) => Number(l.level) >= 40);
        const shown = JSON.stringify(warned.map((l) => [l.level, l.msg, l.event, l.call]));
        assert.deepEqual(
          warned.map((l) => l.event),
          ['database.unavailable', 'database.available'],
          `one line down, one line up: ${shown}`,
        );
        assert.equal(typeof warned[0]!.during, 'string', 'the first line says where the fault happened');
        assert.ok(Number(warned[1]!.failures) >= 4, `the count of faults: ${shown}`);
        assert.ok(
          during.filter(backOff).every((l) => l.level === 20 && Number(l.retryInMs) > 0),
          'each back-off is a debug line with its delay',
        );
        assert.equal(during.filter((l) => l.msg === 'claims resumed').length, 1);
      } finally {
        await tidings.stop();
        await proxy.close();
        await database.drop();
      }
    },
  );
});
