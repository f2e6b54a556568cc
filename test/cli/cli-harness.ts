/**
 * Running `tidings` operator commands as a user does: `bin/tidings.ts` as a child process with the Node that
 * runs the tests, stdout a pipe (not a terminal) or a pseudo-terminal (util-linux `script`), the exit code and
 * both streams returned. Every run is bounded in time; a child still running then is killed and reported.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onProcessExit } from '../support/exit-cleanup.ts';

const BIN = fileURLToPath(new URL('../../bin/tidings.ts', import.meta.url));

/** How a command ended. */
export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link runCli}. */
export interface RunOptions {
  /** The environment (nothing else is inherited but PATH, HOME and TMPDIR). */
  readonly env?: Readonly<Record<string, string>>;
  /** Written to stdin, then closed (default: stdin closed at once). */
  readonly stdin?: string | Buffer;
  /** Bound on the run (default 30 s). */
  readonly timeoutMs?: number;
  /** Called with each stdout chunk as it arrives (to act on a line before the command ends). */
  readonly onStdout?: (chunk: string, signal: (s: NodeJS.Signals) => void) => void;
  /** Called with each stderr chunk as it arrives. */
  readonly onStderr?: (chunk: string, signal: (s: NodeJS.Signals) => void) => void;
}

const running = new Set<ReturnType<typeof spawn>>();
onProcessExit(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** The environment of a command: PATH, HOME and TMPDIR of this process, and `env`. */
function childEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR']) if (process.env[name] !== undefined) base[name] = process.env[name]!;
  return { ...base, ...env };
}

/** Runs `file args` to its end and returns its exit and output. */
function run(file: string, args: readonly string[], o: RunOptions): Promise<CliRun> {
  const child = spawn(file, args, { env: childEnv(o.env ?? {}), stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    o.onStdout?.(chunk, (s) => child.kill(s));
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    o.onStderr?.(chunk, (s) => child.kill(s));
  });
  child.stdin.on('error', () => undefined);
  child.stdin.end(o.stdin ?? '');
  const timeoutMs = o.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${args.join(' ')} did not end within ${timeoutMs} ms; ` +
            `stdout: ${stdout.slice(-2000)}; stderr: ${stderr.slice(-2000)}`,
        ),
      );
    }, timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Runs `tidings <args>` with stdout and stderr on pipes (not a terminal). */
export function runCli(args: readonly string[], o: RunOptions = {}): Promise<CliRun> {
  return run(process.execPath, [BIN, ...args], o);
}

/** Quotes one word for `sh -c`. */
const quote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `tidings <args>` with stdout and stderr on a pseudo-terminal (`script -q -e -c … /dev/null`), as in an
 * interactive shell; the output is the terminal's (CR LF line ends, escape sequences included). The exit code is
 * the command's (`-e`).
 */
export function runCliInTerminal(args: readonly string[], o: RunOptions = {}): Promise<CliRun> {
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  return run('script', ['-q', '-e', '-c', command, '/dev/null'], {
    ...o,
    env: { COLUMNS: '120', LINES: '40', TERM: 'xterm', ...o.env },
  });
}

/** The environment that points the commands at an API with a token. */
export function apiEnv(url: string, token: string): Record<string, string> {
  return { TIDINGS_URL: url, TIDINGS_TOKEN: token };
}

/** Parses stdout as one JSON value. */
export function json<T = Record<string, unknown>>(r: CliRun): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch (error) {
    throw new Error(
      `stdout is not JSON (${(error as Error).message}): ${r.stdout.slice(0, 2000)}\n` +
        `stderr: ${r.stderr.slice(0, 2000)}`,
    );
  }
}
