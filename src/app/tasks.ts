import { notFound } from '../domain/errors.ts';
import type { Page } from '../ports/paging.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import {
  REPLAY_TASK_KINDS,
  type TaskListQuery,
  type TaskRecord,
  type TaskStepResult,
  type TaskStore,
} from '../ports/task-store.ts';
import { requireAdmin } from './applications.ts';
import type { Principal } from './credentials.ts';
import { stepReplayTask, type ReplayStepDeps } from './replay.ts';

/**
 * Reading background tasks (Svix `/api/v1/background-task`). The list is the operator's (as in Svix, where
 * tasks belong to the environment); a credential scoped to an application may read its own tasks by id
 * (the id the recover or replay call answered).
 */
export interface Tasks {
  /** @throws AppError `not_found` (also for another application's task) */
  get(principal: Principal, id: string): Promise<TaskRecord>;
  /** @throws AppError `forbidden` for a scoped credential */
  list(principal: Principal, query: Omit<TaskListQuery, 'appId'>): Promise<Page<TaskRecord>>;
}

/** Makes the task queries. */
export function createTasks(deps: { readonly store: Pick<TaskStore, 'findTask' | 'listTasks'> }): Tasks {
  const scope = (principal: Principal): string | null => (principal.kind === 'app' ? principal.appId : null);
  return {
    async get(principal, id) {
      const task = await deps.store.findTask(id, scope(principal));
      if (task === null) throw notFound('Background task');
      return task;
    },
    async list(principal, query) {
      requireAdmin(principal);
      return deps.store.listTasks({ ...query, appId: null });
    },
  };
}

/** Dependencies of {@link createTaskRunner}. */
export interface TaskRunnerDeps extends ReplayStepDeps {
  readonly store: Pick<TaskStore, 'stepNext'>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** TIDINGS_TASK_POLL_INTERVAL: how often an idle runner looks for running tasks, in ms. */
  readonly pollIntervalMs: number;
}

/**
 * The replay task runner of an API process. It steps running replay tasks one bounded batch at a time
 * (each step one transaction, under the task's row lock, so several processes share the work without
 * doing a batch twice), round-robin across tasks by least-recent progress. A new task is stepped at once
 * ({@link TaskRunner.kick}); tasks left `running` by a process that stopped or crashed are found by the
 * poll and resume from their last committed progress: nothing is lost and no batch is applied twice.
 */
export interface TaskRunner {
  /** Starts the loop (idempotent). */
  start(): void;
  /** Stops the loop after the step in progress, if any, has committed or rolled back. */
  stop(): Promise<void>;
  /** Wakes the loop now (a task was created). */
  kick(): void;
  /** Runs one step of one task; false when none was runnable. The loop's unit, exposed for tests. */
  step(): Promise<boolean>;
}

/** Makes the task runner. */
export function createTaskRunner(deps: TaskRunnerDeps): TaskRunner {
  let running: Promise<void> | null = null;
  let stopped = false;
  let wakeUp: (() => void) | null = null;
  let kicked = false;

  const step = async (): Promise<boolean> => {
    let done: { readonly task: TaskRecord; readonly result: TaskStepResult } | null = null;
    const worked = await deps.store.stepNext(REPLAY_TASK_KINDS, deps.clock.sqlNow(), async (tx, task) => {
      const result = await stepReplayTask(deps, tx, task);
      done = { task, result };
      return result;
    });
    // Logged once the step has committed, so a reader of the log line reads the task as it says.
    const stepped = done as { readonly task: TaskRecord; readonly result: TaskStepResult } | null;
    if (stepped !== null) {
      const { task, result } = stepped;
      const { cursor, slots: _slots, ...counts } = result.progress as Record<string, unknown>;
      deps.logger.debug({ taskId: task.id, kind: task.kind, status: result.status, cursor, ...counts }, 'task.stepped');
      if (result.status !== 'running')
        deps.logger.info(
          { taskId: task.id, kind: task.kind, appId: task.appId, status: result.status, ...counts },
          'task.ended',
        );
    }
    return worked;
  };

  /** Resolves after `ms` or at the next kick, whichever is first. */
  const idle = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (kicked || stopped) {
        kicked = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        wakeUp = null;
        kicked = false;
        resolve();
      }
      wakeUp = done;
    });

  const loop = async (): Promise<void> => {
    while (!stopped) {
      let worked = false;
      try {
        worked = await step();
      } catch (error) {
        deps.logger.warn({ err: error }, 'task step failed; retrying after the poll interval');
      }
      if (!worked && !stopped) await idle(deps.pollIntervalMs);
    }
  };

  return {
    start() {
      if (running !== null) return;
      stopped = false;
      running = loop();
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      await running;
      running = null;
    },
    kick() {
      kicked = true;
      wakeUp?.();
    },
    step,
  };
}
