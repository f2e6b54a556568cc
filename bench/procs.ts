/**
 * Child processes of the benchmark: spawning with `process.execPath` (the pinned Node 24), bounded stops,
 * free loopback ports, readiness polling, and per-process CPU and memory read from /proc (Linux).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A child process started by {@link startChild}. */
export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  /** Resolves with the exit code (or signal name) when the process has exited. */
  readonly exited: Promise<number | string>;
  /**
   * Stops the process: SIGTERM, then SIGKILL after `graceMs`. Resolves once it has exited. A stopped
   * (SIGSTOP) process is continued first so that it can handle SIGTERM.
   */
  stop(graceMs?: number): Promise<number | string>;
}

/** Options of {@link startChild}. */
export interface StartChildOptions {
  readonly name: string;
  /** Script path and arguments, run by `process.execPath`. */
  readonly args: readonly string[];
  /** Extra Node options placed before the script (e.g. `--cpu-prof`, `--import`). */
  readonly nodeArgs?: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** File that receives stdout and stderr; undefined = discarded. */
  readonly logFile?: string;
  /** Open an IPC channel (the receiver and raw-HTTP children talk over it). */
  readonly ipc?: boolean;
  readonly cwd?: string;
}

/** Starts `process.execPath [nodeArgs] args` with stdout/stderr going to `logFile` (never to a pipe). */
export function startChild(options: StartChildOptions): Child {
  const fd = options.logFile === undefined ? 'ignore' : openSync(options.logFile, 'a');
  const stdio: ('ignore' | 'ipc' | number)[] = ['ignore', fd, fd];
  if (options.ipc === true) stdio.push('ipc');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...options.args], {
    env: options.env as NodeJS.ProcessEnv,
    stdio,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  if (typeof fd === 'number') closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${options.name}`);
  const pid = child.pid;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    name: options.name,
    process: child,
    pid,
    exited,
    async stop(graceMs = 10_000) {
      if (done) return exited;
      try {
        process.kill(pid, 'SIGCONT');
        process.kill(pid, 'SIGTERM');
      } catch {
        return exited;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** A free TCP port on 127.0.0.1 (bound then released; the short race is acceptable on loopback). */
export async function freePort(): Promise<number> {
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

/**
 * Polls `url` until it answers 2xx, the child exits, or `timeoutMs` passes.
 * @throws Error naming the child and its log file when it exited or did not become ready in time
 */
export async function waitHttpOk(url: string, child: Child, timeoutMs: number, logFile?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | string | null = null;
  void child.exited.then((code) => {
    exited = code;
  });
  while (Date.now() < deadline) {
    if (exited !== null)
      throw new Error(
        `${child.name} exited (${exited}) before it was ready${logFile === undefined ? '' : `; see ${logFile}`}`,
      );
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(
    `${child.name} was not ready at ${url} within ${timeoutMs} ms${logFile === undefined ? '' : `; see ${logFile}`}`,
  );
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** CPU time (user + system) and resident memory of one process, from /proc (null when it is gone). */
export interface ProcUsage {
  /** CPU seconds used since the process started. */
  readonly cpuS: number;
  /** The part of `cpuS` spent in the kernel (system calls), seconds. */
  readonly systemS: number;
  /** Resident set size, bytes. */
  readonly rssBytes: number;
}

/** Clock ticks per second of /proc/stat and /proc/<pid>/stat (USER_HZ on Linux). */
export const CLOCK_TICKS = 100;

/** Reads /proc/<pid>/stat; null when the process is gone or /proc is not there. */
export function procUsage(pid: number): ProcUsage | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    const rssPages = Number(fields[21]);
    return { cpuS: (utime + stime) / CLOCK_TICKS, systemS: stime / CLOCK_TICKS, rssBytes: rssPages * 4096 };
  } catch {
    return null;
  }
}

/**
 * Machine CPU per message between two {@link machineCpu} readings: the busy time of every process on the
 * machine (the load generator, the receiver and other users included), in ms, divided by `count`. Null when a
 * reading is missing or `count` is 0.
 */
export function machineCpuMsPerMessage(
  before: ReturnType<typeof machineCpu>,
  after: ReturnType<typeof machineCpu>,
  count: number,
): number | null {
  if (before === null || after === null || count === 0) return null;
  return (((after.busy - before.busy) / CLOCK_TICKS) * 1000) / count;
}

/**
 * Busy and total jiffies of the whole machine (/proc/stat, first line: user, nice, system, idle, iowait, irq,
 * softirq, steal, guest, guest_nice; proc(5)), or null. Busy is user + nice + system + irq + softirq: not idle,
 * not waiting for I/O, and not steal (time the hypervisor gave to other machines). Total is the first eight
 * fields: guest and guest_nice are already counted in user and nice.
 */
export function machineCpu(): { readonly busy: number; readonly total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const field = (i: number): number => values[i] ?? 0;
    const total = values.reduce((a, b) => a + b, 0);
    return { busy: field(0) + field(1) + field(2) + field(5) + field(6), total };
  } catch {
    return null;
  }
}
