/**
 * A Tidings role (`serve`, `api`, `dispatcher`) as a real child process (docs/guides/failure-table.md): started with
 * `process.execPath` on src/main/cli.ts, its JSON log lines (pino, stdout) parsed and kept, and the
 * signals of the fault suite — SIGTERM (graceful), SIGKILL, SIGSTOP / SIGCONT. Waiting is event-driven:
 * on a log line or on the exit, each with a bounded timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onProcessExit } from './exit-cleanup.ts';

const CLI = fileURLToPath(new URL('../../src/main/cli.ts', import.meta.url));

/** One line of the child's stdout: the parsed JSON object, or `{ raw }` for plain text. */
export type LogLine = Readonly<Record<string, unknown>>;

/** How a child ended. */
export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Options of {@link startTidingsProcess}. */
export interface TidingsProcessOptions {
  readonly role: 'serve' | 'api' | 'dispatcher';
  /** The complete Tidings environment (see {@link tidingsEnv}); nothing is inherited but PATH and HOME. */
  readonly env: Readonly<Record<string, string>>;
  /** A name for messages (e.g. `dispatcher-a`). */
  readonly name?: string;
  /**
   * How long to wait for the role to listen (default 120 s: machines are shared, and a start-up under load is slow).
   */
  readonly startTimeoutMs?: number;
  /** Print the child's stderr lines to ours (default: only when TIDINGS_FAULT_VERBOSE is set). */
  readonly echoStderr?: boolean;
}

const children = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Kills (SIGKILL) every child still alive when the test process ends, so none outlives the suite. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  onProcessExit(() => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
}

/**
 * The environment of a Tidings child: the settings given, over PATH and HOME only (no DATABASE_URL or
 * TIDINGS_* of the test process leaks in).
 */
export function tidingsEnv(settings: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...settings };
}

/** A running Tidings child. */
export class TidingsProcess {
  readonly name: string;
  readonly role: TidingsProcessOptions['role'];
  readonly #child: ChildProcess;
  readonly #lines: LogLine[] = [];
  #stderr = '';
  #exit: ExitInfo | null = null;
  readonly #exited: Promise<ExitInfo>;
  #waiters = new Set<{
    predicate: (line: LogLine) => boolean;
    resolve: (line: LogLine) => void;
    reject: (error: Error) => void;
  }>();
  /** Base URL of the HTTP API (api and serve roles). */
  apiUrl: string | undefined;
  /** Base URL of the admin server (dispatcher role). */
  adminUrl: string | undefined;

  constructor(options: TidingsProcessOptions) {
    this.name = options.name ?? options.role;
    this.role = options.role;
    installExitHook();
    this.#child = spawn(process.execPath, [CLI, options.role], {
      env: { ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(this.#child);
    const echo =
      options.echoStderr ??
      (process.env.TIDINGS_FAULT_VERBOSE !== undefined && process.env.TIDINGS_FAULT_VERBOSE !== '');
    let partial = '';
    this.#child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const part of parts) if (part.trim() !== '') this.#onLine(part);
    });
    this.#child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stderr += chunk;
      if (echo) process.stderr.write(`[${this.name} stderr] ${chunk}`);
    });
    this.#exited = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => {
        if (partial.trim() !== '') this.#onLine(partial);
        this.#exit = { code, signal };
        children.delete(this.#child);
        const error = new Error(
          `${this.name} exited (code ${code}, signal ${signal}); stderr: ${this.#stderr.slice(-2000)}`,
        );
        for (const w of this.#waiters) w.reject(error);
        this.#waiters.clear();
        resolve(this.#exit);
      });
    });
  }

  /** Process id. */
  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** Every log line so far. */
  get lines(): readonly LogLine[] {
    return this.#lines;
  }

  /** Everything written to stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** How it ended, or null while it runs. */
  get exitInfo(): ExitInfo | null {
    return this.#exit;
  }

  get alive(): boolean {
    return this.#exit === null;
  }

  /** The lines whose `msg` equals `msg` or for which `predicate` holds. */
  logs(predicate: string | ((line: LogLine) => boolean)): LogLine[] {
    const p = typeof predicate === 'string' ? (l: LogLine) => l.msg === predicate : predicate;
    return this.#lines.filter(p);
  }

  /**
   * Resolves with the first line (already logged or future) for which `predicate` holds (`string`: the
   * line's `msg`). Rejects after `timeoutMs` or when the process exits first.
   */
  waitForLog(predicate: string | ((line: LogLine) => boolean), timeoutMs: number, what?: string): Promise<LogLine> {
    const p = typeof predicate === 'string' ? (l: LogLine) => l.msg === predicate : predicate;
    const seen = this.#lines.find(p);
    if (seen !== undefined) return Promise.resolve(seen);
    if (this.#exit !== null)
      return Promise.reject(
        new Error(
          `${this.name} has exited (${JSON.stringify(this.#exit)}) before logging ${what ?? String(predicate)}`,
        ),
      );
    return new Promise((resolve, reject) => {
      const waiter = {
        predicate: p,
        resolve: (line: LogLine) => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve(line);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        waiter.reject(
          new Error(
            `${this.name}: no log line ${what ?? String(predicate)} within ${timeoutMs} ms; last lines: ${this.#lines
              .slice(-5)
              .map((l) => JSON.stringify(l))
              .join('\n')}`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Resolves when the process has exited (rejects after `timeoutMs`). */
  waitForExit(timeoutMs: number): Promise<ExitInfo> {
    if (this.#exit !== null) return Promise.resolve(this.#exit);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name} (pid ${this.pid}) did not exit within ${timeoutMs} ms`)),
        timeoutMs,
      );
      void this.#exited.then((info) => {
        clearTimeout(timer);
        resolve(info);
      });
    });
  }

  /** Sends `signal` to the process (no-op once it exited). */
  signal(signal: NodeJS.Signals): void {
    if (this.#exit === null) this.#child.kill(signal);
  }

  /** SIGKILL, then waits for the exit. */
  async kill(timeoutMs = 30_000): Promise<ExitInfo> {
    this.signal('SIGKILL');
    return this.waitForExit(timeoutMs);
  }

  /** SIGTERM (graceful stop), then waits for the exit; SIGKILL if it takes longer than `timeoutMs`. */
  async stop(timeoutMs = 60_000): Promise<ExitInfo> {
    if (this.#exit !== null) return this.#exit;
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    try {
      return await this.waitForExit(timeoutMs);
    } catch (error) {
      this.signal('SIGKILL');
      await this.waitForExit(30_000);
      // What the process was doing when it hung, for the failure message.
      throw new Error(
        `${(error as Error).message}; last lines: ${this.#lines
          .slice(-15)
          .map((l) => JSON.stringify(l))
          .join('\n')}`,
      );
    }
  }

  /** SIGSTOP: the process freezes (timers, sockets, everything). */
  pause(): void {
    this.signal('SIGSTOP');
  }

  /** SIGCONT: the process goes on. */
  resume(): void {
    this.signal('SIGCONT');
  }

  #onLine(text: string): void {
    let line: LogLine;
    try {
      const parsed: unknown = JSON.parse(text);
      line = typeof parsed === 'object' && parsed !== null ? (parsed as LogLine) : { raw: text };
    } catch {
      line = { raw: text };
    }
    this.#lines.push(line);
    if (line.msg === 'HTTP API listening' && typeof line.url === 'string') this.apiUrl = line.url;
    if (typeof line.msg === 'string' && line.msg.startsWith('admin server listening') && typeof line.url === 'string')
      this.adminUrl = line.url;
    for (const w of [...this.#waiters]) {
      if (w.predicate(line)) w.resolve(line);
    }
  }
}

/**
 * Starts a Tidings role and waits until it serves: the API listening (api, serve) or the admin server
 * listening (dispatcher).
 * @throws Error when it exits first or does not listen within the timeout (the child is then killed).
 */
export async function startTidingsProcess(options: TidingsProcessOptions): Promise<TidingsProcess> {
  const p = new TidingsProcess(options);
  const listening =
    options.role === 'dispatcher'
      ? (l: LogLine) => typeof l.msg === 'string' && l.msg.startsWith('admin server listening')
      : (l: LogLine) => l.msg === 'HTTP API listening';
  try {
    await p.waitForLog(listening, options.startTimeoutMs ?? 120_000, `${options.role} listening`);
  } catch (error) {
    await p.kill().catch(() => undefined);
    throw error;
  }
  return p;
}

/**
 * Runs the `tidings` command to its end (e.g. a start-up that must be refused) and returns its exit and
 * output. A process still running after `timeoutMs` is killed and reported as such.
 */
export async function runTidingsCommand(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  timeoutMs: number,
): Promise<ExitInfo & { readonly stdout: string; readonly stderr: string; readonly timedOut: boolean }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  installExitHook();
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const info = await new Promise<ExitInfo>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  clearTimeout(timer);
  children.delete(child);
  return { ...info, stdout, stderr, timedOut };
}
