import cliProgress from 'cli-progress';
import { seg, type ApiClient } from './api-client.ts';
import { CliError, ExitCode, note, pause, printJson, printLine, type CliIo } from './io.ts';

/**
 * Following a recover / replay background task to its end (`GET /api/v1/background-task/{id}`): a progress bar
 * when stdout is a terminal, one plain line per change of progress otherwise (logs and pipes stay readable),
 * nothing but the final task with `--json`.
 */

/** How often the task is read while it runs, ms. */
export const TASK_POLL_MS = 250;

/** Svix `BackgroundTaskOut` with Tidings' replay progress in `data` (docs/reference/api.md#background-tasks). */
export interface TaskOut {
  readonly id: string;
  readonly status: 'running' | 'finished' | 'failed';
  readonly task: string;
  readonly updatedAt: string;
  readonly data: {
    readonly messagesSent?: number;
    readonly scanned?: number;
    readonly alreadyQueued?: number;
    readonly expunged?: number;
    readonly unavailable?: number;
    readonly error?: string | null;
    readonly held?: number | null;
    readonly heldBy?: Readonly<Record<string, number>> | null;
    readonly heldUntil?: string | null;
  };
}

/** The task's progress as one line. */
export function progressLine(t: TaskOut): string {
  const d = t.data;
  return `${t.id} ${t.status}: ${d.messagesSent ?? 0} queued to be sent again, ${d.scanned ?? 0} examined`;
}

/** The finished task's summary: what was queued, what was not and why, and what the endpoint still holds. */
export function summaryLines(t: TaskOut): string[] {
  const d = t.data;
  const lines = [
    `${t.id} ${t.status}: ${d.messagesSent ?? 0} queued to be sent again (paced by TIDINGS_REPLAY_RATE); ` +
      `${d.alreadyQueued ?? 0} already queued, ${d.expunged ?? 0} without payload (expired or expunged), ` +
      `${d.unavailable ?? 0} to endpoints deleted or disabled`,
  ];
  if (d.held !== null && d.held !== undefined && d.held > 0) {
    const by = Object.entries(d.heldBy ?? {})
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    const until = d.heldUntil === null || d.heldUntil === undefined ? '' : ` until ${d.heldUntil}`;
    lines.push(
      `${d.held} pending deliveries of the endpoint wait behind it (${by})${until}: ` +
        'resume the endpoint or close its breaker to let them go',
    );
  }
  if (t.status === 'failed') lines.push(`error: ${d.error ?? 'unknown'}`);
  return lines;
}

/**
 * Reads the task until it is no longer running, showing its progress; `total` (the count a dry run would
 * print) sizes the bar. Ctrl-C stops the waiting, not the task.
 * @returns the last reading of the task
 * @throws CliError failure when the task failed; as ApiClient when a read fails
 */
export async function followTask(
  io: CliIo,
  api: ApiClient,
  started: TaskOut,
  total: number | null,
  json: boolean,
): Promise<TaskOut> {
  const bar =
    !json && io.stdout.isTTY === true
      ? new cliProgress.SingleBar(
          {
            stream: io.stdout as unknown as NodeJS.WritableStream,
            hideCursor: true,
            clearOnComplete: false,
            barsize: 30,
            format: `${started.task} {bar} {value}/{total} queued | {scanned} examined | {status}`,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;
  bar?.start(Math.max(total ?? 0, 1), 0, { scanned: 0, status: started.status });
  let task = started;
  let shown = '';
  let interrupted = false;
  try {
    for (;;) {
      const sent = task.data.messagesSent ?? 0;
      if (bar !== null) {
        if (sent > bar.getTotal()) bar.setTotal(sent);
        bar.update(sent, { scanned: task.data.scanned ?? 0, status: task.status });
      } else if (!json && task.status === 'running' && progressLine(task) !== shown) {
        shown = progressLine(task);
        printLine(io, shown);
      }
      if (task.status !== 'running') break;
      await pause(TASK_POLL_MS, io.signal);
      if (io.signal.aborted) {
        interrupted = true;
        break;
      }
      task = await api.get<TaskOut>(`/api/v1/background-task/${seg(task.id)}`);
    }
  } finally {
    if (bar !== null) {
      if (task.status !== 'running') bar.setTotal(Math.max(task.data.messagesSent ?? 0, 1));
      bar.update(task.data.messagesSent ?? 0, { scanned: task.data.scanned ?? 0, status: task.status });
      bar.stop();
    }
  }
  if (interrupted) {
    note(io, `stopped waiting; the task goes on: GET /api/v1/background-task/${task.id}`);
    return task;
  }
  if (json) printJson(io, task);
  else for (const line of summaryLines(task)) printLine(io, line);
  if (task.status === 'failed')
    throw new CliError(ExitCode.failure, `task ${task.id} failed: ${task.data.error ?? 'unknown'}`);
  return task;
}
