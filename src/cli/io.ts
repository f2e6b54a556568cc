/**
 * What every `tidings` operator command shares: its exit codes, the error that carries one, and the streams,
 * environment, clock and stop signal it runs with (the process's by default; a test hands in its own).
 */

/** Exit codes of the operator commands (docs/guides/cli.md#exit-codes). */
export const ExitCode = Object.freeze({
  /** Done. */
  ok: 0,
  /** Failed: the API answered 5xx, a task failed, a signature did not verify, doctor found an error. */
  failure: 1,
  /** Usage: a wrong command line, or input the API refused as invalid (400, 413, 422). */
  usage: 2,
  /** Not found or refused: 401, 403, 404, 409 (a missing object, a credential without access, a conflict). */
  refused: 3,
  /** Unavailable: the API could not be reached, timed out, or answered 429 / 503; trying again later may work. */
  unavailable: 4,
});
/** One of {@link ExitCode}. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The help text that lists the exit codes (shown under every command's `--help`). */
export const EXIT_CODES_HELP = `
Exit codes: 0 ok, 1 failure (API 5xx, task failed, signature invalid, doctor error), 2 usage (bad arguments,
or input the API refused: 400/413/422), 3 not found or refused (401/403/404/409), 4 unavailable (cannot reach
the API, timeout, 429/503).`;

/** An error that ends a command with its exit code and a one-line message (written to stderr). */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(exitCode: ExitCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A stream the commands write to; `isTTY` decides between a progress bar and plain lines. */
export interface OutStream {
  write(chunk: string): boolean;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

/** An input stream (stdin) read whole. */
export interface InStream extends AsyncIterable<Buffer | string> {
  readonly isTTY?: boolean | undefined;
}

/** The process around a command. */
export interface CliIo {
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly stdin: InStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** This host's clock, ms since the epoch (a test seam: doctor's clock-skew check reads it). */
  readonly now: () => number;
  /** Aborted by Ctrl-C / SIGTERM: long-running commands (listen, waiting for a task) stop. */
  readonly signal: AbortSignal;
}

/** Writes one line to stdout. */
export function printLine(io: CliIo, line: string): void {
  io.stdout.write(`${line}\n`);
}

/** Writes a value as JSON on one line of stdout (for `--json`). */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Writes one line to stderr (notes and hints that must not mix with the output a script reads). */
export function note(io: CliIo, line: string): void {
  io.stderr.write(`${line}\n`);
}

/** Reads a whole input stream (stdin) as bytes. */
export async function readAll(stream: InStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Rows as aligned columns (two spaces apart), the header first; an empty list prints `(none)`. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  if (rows.length === 0) return ['(none)'];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(headers), ...rows.map(line)];
}
