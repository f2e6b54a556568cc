/**
 * A private PgBouncer for the pooler tests (docs/guides/poolers-and-replicas.md): its own ini and auth file in a
 * temporary folder, listening on 127.0.0.1 on a free port, in front of one PostgreSQL server. PgBouncer refuses to
 * run as root: when the tests run as root (CI) it runs as the `postgres` user through `runuser`, as the private
 * clusters do (pg-cluster.ts). The binary is `TIDINGS_PGBOUNCER`, else `pgbouncer` on PATH or in /usr/sbin
 * (Debian's package `pgbouncer`, which the test set-up installs when missing).
 *
 * Strict by default: after every transaction the server session is reset with `DISCARD ALL`
 * (`server_reset_query_always`), so anything that leans on a session surviving a transaction fails at once and
 * every time (a prepared statement used again by name: "prepared statement … does not exist"; a session `SET`;
 * LISTEN), instead of now and then as it does when sessions merely move between clients.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { onProcessExit } from './exit-cleanup.ts';

/** Options of {@link startPgBouncer}. */
export interface PgBouncerOptions {
  /** The PostgreSQL server behind it. */
  readonly target: { readonly host: string; readonly port: number };
  /** `transaction` (default) or `session`. */
  readonly poolMode?: 'transaction' | 'session';
  /** Server sessions per database and user (default 5). */
  readonly poolSize?: number;
  /** Reset every server session after each transaction with DISCARD ALL (default true). */
  readonly strict?: boolean;
}

/** A running PgBouncer. */
export interface PgBouncer {
  readonly port: number;
  /** The folder of its ini, auth file and log. */
  readonly root: string;
  /** URL of `database` through the pooler, as user `postgres`. */
  url(database: string): string;
  /** Runs a command on the admin console (`SHOW POOLS`, `SHOW SERVERS`, …) and returns its rows. */
  admin<R extends Record<string, unknown>>(command: string): Promise<R[]>;
  /** Its log so far. */
  log(): string;
  /** Stops it (SIGINT: at once) and removes its folder. Idempotent. */
  stop(): Promise<void>;
}

/** The pgbouncer binary, or an error naming how to get it. */
export function pgbouncerBinary(): string {
  const given = process.env.TIDINGS_PGBOUNCER;
  const onPath = (process.env.PATH ?? '').split(':').map((d) => join(d, 'pgbouncer'));
  const candidates = given !== undefined && given !== '' ? [given] : [...onPath, '/usr/sbin/pgbouncer'];
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // next
    }
  }
  throw new Error(
    'the pooler tests need PgBouncer: as root, apt-get install -y pgbouncer (npm test does it), ' +
      'or set TIDINGS_PGBOUNCER',
  );
}

const asRoot = (): boolean => process.getuid?.() === 0;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once 127.0.0.1:`port` accepts a TCP connection, or rejects after `timeoutMs` or when `child` exits. */
async function listening(port: number, child: ChildProcess, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`pgbouncer exited (${child.exitCode ?? child.signalCode}):\n${log()}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port} within ${timeoutMs} ms:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts a PgBouncer in front of `options.target` and waits until it listens (≤ 10 s). */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const binary = pgbouncerBinary();
  const root = mkdtempSync(join(tmpdir(), 'tidings-pgbouncer-'));
  const port = await freePort();
  const logFile = join(root, 'pgbouncer.log');
  const pidFile = join(root, 'pgbouncer.pid');
  const ini = [
    '[databases]',
    `* = host=${options.target.host} port=${options.target.port}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(root, 'users.txt')}`,
    'admin_users = postgres',
    'stats_users = postgres',
    `pool_mode = ${options.poolMode ?? 'transaction'}`,
    `default_pool_size = ${options.poolSize ?? 5}`,
    'max_client_conn = 500',
    `logfile = ${logFile}`,
    `pidfile = ${pidFile}`,
    ...(options.strict === false ? [] : ['server_reset_query = DISCARD ALL', 'server_reset_query_always = 1']),
    // A server that is down: the clients waiting for it are told within a few seconds, not after 120 s.
    'server_login_retry = 1',
    'server_connect_timeout = 3',
    'query_wait_timeout = 10',
    '',
  ].join('\n');
  writeFileSync(join(root, 'pgbouncer.ini'), ini);
  writeFileSync(join(root, 'users.txt'), '"postgres" ""\n');
  if (asRoot()) {
    const id = (flag: string): number =>
      Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    for (const file of ['', 'pgbouncer.ini', 'users.txt']) chownSync(join(root, file), id('-u'), id('-g'));
  }
  const args = [join(root, 'pgbouncer.ini')];
  const spawnOptions = { stdio: 'ignore', cwd: root } as const;
  const child = asRoot()
    ? spawn('runuser', ['-u', 'postgres', '--', binary, ...args], spawnOptions)
    : spawn(binary, args, spawnOptions);
  const log = (): string => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '(no log)';
    }
  };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = (): number | null => {
    try {
      return Number(readFileSync(pidFile, 'utf8').trim());
    } catch {
      return null;
    }
  };
  const killNow = (): void => {
    const p = pid();
    if (p !== null) {
      try {
        process.kill(p, 'SIGINT');
      } catch {
        // gone already
      }
    }
    if (child.exitCode === null) child.kill('SIGINT');
  };
  const unregister = onProcessExit(() => {
    killNow();
    rmSync(root, { recursive: true, force: true });
  });
  let stopped = false;
  const bouncer: PgBouncer = {
    port,
    root,
    url: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    async admin<R extends Record<string, unknown>>(command: string) {
      const client = new pg.Client({ connectionString: bouncer.url('pgbouncer') });
      await client.connect();
      try {
        return (await client.query<R>(command)).rows;
      } finally {
        await client.end();
      }
    },
    log,
    async stop() {
      if (stopped) return;
      stopped = true;
      unregister();
      killNow();
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await listening(port, child, 10_000, log);
  } catch (error) {
    await bouncer.stop();
    throw error;
  }
  return bouncer;
}
