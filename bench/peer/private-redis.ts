/**
 * A Redis server of the benchmark's own for the durable BullMQ peer: a `redis-server` process on a free
 * loopback port with its data in a fresh temporary folder, with `appendonly yes` and `appendfsync always`,
 * so that Redis writes and fsyncs every command to its append-only file before it answers (a job that
 * BullMQ's `add` saw accepted is on the disk, as a Tidings publish is after its commit). No RDB snapshots.
 * Started once per invocation, stopped (SIGTERM, then SIGKILL) and its folder removed at the end. The
 * machine's own Redis and its configuration are never touched.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, sleep } from '../procs.ts';
import { redisConnection, type RedisTarget } from './redis.ts';

/** A running private Redis. */
export interface PrivateRedis {
  readonly target: RedisTarget;
  readonly pid: number;
  /** The settings it was started with, for the JSON. */
  readonly settings: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** What makes this Redis durable per command, and what keeps it private. */
const SETTINGS = { appendonly: 'yes', appendfsync: 'always', save: '' } as const;

/**
 * Starts `binary` (`redis-server`) and waits until it answers PING (bounded: 10 s).
 * @throws Error when it cannot be started, exits, or does not answer in time (its log file is named)
 */
export async function startPrivateRedis(binary: string, logDir: string): Promise<PrivateRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'tidings-bench-redis-'));
  const port = await freePort();
  const logFile = join(logDir, 'private-redis.log');
  const fd = openSync(logFile, 'a');
  const args = [
    '--bind',
    '127.0.0.1',
    '--port',
    String(port),
    '--dir',
    dir,
    '--protected-mode',
    'yes',
    '--daemonize',
    'no',
    '--appendonly',
    SETTINGS.appendonly,
    '--appendfsync',
    SETTINGS.appendfsync,
    '--save',
    SETTINGS.save,
  ];
  const child = spawn(binary, args, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited: string | null = null;
  const done = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      exited = error.message;
      resolve();
    });
    child.once('exit', (code, signal) => {
      exited = String(code ?? signal);
      resolve();
    });
  });
  const stop = async (): Promise<void> => {
    if (exited === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await done;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const target: RedisTarget = { host: '127.0.0.1', port, db: 0 };
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && exited === null) {
    const client = redisConnection(target, { retryStrategy: () => null, lazyConnect: true });
    client.on('error', () => undefined);
    try {
      await client.connect();
      if ((await client.ping()) === 'PONG') {
        return { target, pid: child.pid!, settings: { ...SETTINGS, dir, port: String(port) }, stop };
      }
    } catch {
      // not listening yet
    } finally {
      client.disconnect();
    }
    await sleep(100);
  }
  await stop();
  throw new Error(`${binary} ${exited === null ? 'did not answer within 10 s' : `exited (${exited})`}; see ${logFile}`);
}
