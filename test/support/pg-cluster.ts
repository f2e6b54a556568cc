/**
 * A private PostgreSQL cluster for fault injection (docs/guides/failure-table.md): initdb into a temporary folder,
 * listening on 127.0.0.1 on a free port, started, stopped (fast or immediate) and restarted by the test. The machine's
 * shared PostgreSQL is never touched.
 *
 * initdb and postgres refuse to run as root; when the tests run as root (CI), every server command runs as
 * the `postgres` user through `runuser`, and the folder is handed to that user. Binaries come from
 * `pg_config --bindir` (or `TIDINGS_PG_BINDIR`).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { onProcessExit } from './exit-cleanup.ts';

/**
 * How the server is stopped: `fast` (sessions terminated, clean checkpoint) or `immediate` (crash recovery on the next
 * start).
 */
export type StopMode = 'fast' | 'immediate';

/** A running private cluster. */
export interface PgCluster {
  /** TCP port on 127.0.0.1; the same across restarts. */
  readonly port: number;
  /** The temporary folder (data directory in `data/`, server log in `server.log`). */
  readonly root: string;
  /** True while the server runs (as far as this handle knows). */
  readonly running: boolean;
  /** URL of database `database` as superuser `postgres` (trust authentication). */
  url(database?: string): string;
  /** Creates a database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Starts the server and waits until it accepts connections (≤ 60 s). */
  start(): Promise<void>;
  /** Stops the server and waits until it is gone (≤ 60 s). */
  stop(mode: StopMode): Promise<void>;
  /** Stops (`mode`) and starts again on the same port. */
  restart(mode: StopMode): Promise<void>;
  /** Stops the server (immediate) and removes the folder. Idempotent. */
  destroy(): Promise<void>;
}

function binDir(): string {
  const fromEnv = process.env.TIDINGS_PG_BINDIR;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
}

const asRoot = (): boolean => process.getuid?.() === 0;

function command(bin: string, args: readonly string[]): [string, string[]] {
  return asRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, [...args]];
}

/** Runs a server binary synchronously (exit hook only), as `postgres` when we are root. */
function runPgSync(bin: string, args: readonly string[], timeoutMs: number): { status: number | null; output: string } {
  const [file, argv] = command(bin, args);
  const res = spawnSync(file, argv, { encoding: 'utf8', timeout: timeoutMs, cwd: tmpdir() });
  return {
    status: res.status,
    output: `${res.stdout ?? ''}${res.stderr ?? ''}${res.error === undefined ? '' : String(res.error)}`,
  };
}

/** Runs a server binary without blocking the event loop (the test keeps publishing meanwhile). */
function runPg(
  bin: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ status: number | null; output: string }> {
  const [file, argv] = command(bin, args);
  return new Promise((resolve) => {
    execFile(file, argv, { encoding: 'utf8', timeout: timeoutMs, cwd: tmpdir() }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ status, output: `${stdout}${stderr}${error === null ? '' : `\n${error.message}`}` });
    });
  });
}

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

/** Options of {@link startPgCluster}. */
export interface PgClusterOptions {
  /**
   * Make a streaming read replica of this running cluster instead of a new one: `pg_basebackup -R` (its
   * primary_conninfo and standby.signal written for it) over the primary's replication connection, which initdb
   * allows from 127.0.0.1 with the trust method and wal_level = replica by default.
   */
  readonly replicaOf?: PgCluster;
}

/**
 * Creates and starts a private cluster (initdb into a new temporary folder, or a base backup of
 * `clusterOptions.replicaOf`). `fsync` is off: the faults here kill the server process, never the machine, so
 * committed data survives in the OS page cache, and an immediate stop still ends in crash recovery from the WAL.
 * @throws Error with initdb's, pg_basebackup's or pg_ctl's output when one fails.
 */
export async function startPgCluster(clusterOptions: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = binDir();
  const root = mkdtempSync(join(tmpdir(), 'tidings-pg-'));
  if (asRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(root, uid, gid);
  }
  const dataDir = join(root, 'data');
  const primary = clusterOptions.replicaOf;
  const init =
    primary === undefined
      ? await runPg(
          join(bin, 'initdb'),
          ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
          120_000,
        )
      : await runPg(
          join(bin, 'pg_basebackup'),
          [
            '-D',
            dataDir,
            '-R',
            '-X',
            'stream',
            '-c',
            'fast',
            '--no-sync',
            '-h',
            '127.0.0.1',
            '-p',
            String(primary.port),
            '-U',
            'postgres',
          ],
          120_000,
        );
  if (init.status !== 0) {
    rmSync(root, { recursive: true, force: true });
    const what = primary === undefined ? 'initdb' : 'pg_basebackup';
    throw new Error(`${what} failed (status ${init.status}):\n${init.output}`);
  }
  const port = await freePort();
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${root}`,
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=300',
    '-c shared_buffers=32MB',
    '-c log_min_messages=warning',
  ].join(' ');
  let running = false;

  const pgCtl = async (args: readonly string[]): Promise<void> => {
    const res = await runPg(join(bin, 'pg_ctl'), ['-D', dataDir, '-w', '-t', '60', ...args], 90_000);
    if (res.status !== 0) throw new Error(`pg_ctl ${args.join(' ')} failed (status ${res.status}):\n${res.output}`);
  };

  const handle = {
    destroySync(): void {
      if (running) runPgSync(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', '-t', '30', 'stop'], 40_000);
      running = false;
      rmSync(root, { recursive: true, force: true });
    },
  };
  const unregister = onProcessExit(() => handle.destroySync());
  let destroyed = false;

  const cluster: PgCluster = {
    port,
    root,
    get running() {
      return running;
    },
    url: (database = 'postgres') => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      const client = new pg.Client({ connectionString: cluster.url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return cluster.url(name);
    },
    async start() {
      await pgCtl(['-l', join(root, 'server.log'), '-o', options, 'start']);
      running = true;
    },
    async stop(mode) {
      await pgCtl(['-m', mode, 'stop']);
      running = false;
    },
    async restart(mode) {
      await cluster.stop(mode);
      await cluster.start();
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      unregister();
      if (running)
        await runPg(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', '-t', '30', 'stop'], 40_000);
      running = false;
      rmSync(root, { recursive: true, force: true });
    },
  };
  await cluster.start();
  return cluster;
}
