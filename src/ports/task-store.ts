import type { Page, PageQuery } from './paging.ts';
import type { Tx } from './unit-of-work.ts';

/**
 * Background tasks (Svix `BackgroundTaskOut`; table background_tasks). Tidings runs the replay kinds below
 * in its API processes (src/app/tasks.ts); erasures ({@link ERASURE_TASK_KIND}) are run by the retention job.
 * Every kind is read through the same API.
 */
export const TaskKind = Object.freeze({
  /** Svix recover: dead deliveries of one endpoint in a window go back to pending. */
  recover: 'endpoint.recover',
  /** Svix replay-missing: skipped or never-made deliveries of one endpoint in a window are sent once. */
  replayMissing: 'endpoint.replay',
  /** Svix bulk-replay: dead and/or succeeded deliveries of one endpoint, by filter. */
  bulkReplay: 'endpoint.bulk-replay',
  /** Tidings: dead letters of an application (optionally one endpoint, event types), by window. */
  deadLetterReplay: 'dead-letter.replay',
} as const);
export type TaskKind = (typeof TaskKind)[keyof typeof TaskKind];

/**
 * Background-task kind of erasures (Svix `application.purge_content`), run by the retention job (src/app/retention.ts).
 */
export const ERASURE_TASK_KIND = 'application.purge_content';

/** Every replay kind (what the replay runner picks up). */
export const REPLAY_TASK_KINDS: readonly TaskKind[] = Object.freeze(Object.values(TaskKind));

/** Svix `BackgroundTaskStatus`. A task left `running` by a crash is resumed (docs/adr/0003-svix-compatibility.md). */
export type TaskStatus = 'running' | 'finished' | 'failed';

/** A stored task. `params` and `progress` are JSON objects whose shape depends on `kind`. */
export interface TaskRecord {
  readonly id: string;
  readonly appId: string | null;
  readonly kind: string;
  readonly status: TaskStatus;
  readonly params: Readonly<Record<string, unknown>>;
  readonly progress: Readonly<Record<string, unknown>>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface NewTask {
  readonly id: string;
  readonly appId: string | null;
  readonly kind: TaskKind | typeof ERASURE_TASK_KIND;
  readonly params: Readonly<Record<string, unknown>>;
  readonly progress: Readonly<Record<string, unknown>>;
}

/** Filters of a task list; `appId` set limits it to that application's tasks (a scoped credential). */
export interface TaskListQuery extends PageQuery {
  readonly appId: string | null;
  readonly status: TaskStatus | null;
  readonly kind: string | null;
}

/** What one step of a task leaves: its new status and progress. */
export interface TaskStepResult {
  readonly status: TaskStatus;
  readonly progress: Readonly<Record<string, unknown>>;
}

/** Storage of background tasks. */
export interface TaskStore {
  /** Inserts a `running` task in `tx` (it commits with the request's idempotency key). */
  insertTask(tx: Tx, task: NewTask, now: Date | null): Promise<TaskRecord>;
  /** A task by id; with `appId`, only when it belongs to that application. */
  findTask(id: string, appId: string | null): Promise<TaskRecord | null>;
  /** Tasks by id (creation order). */
  listTasks(query: TaskListQuery): Promise<Page<TaskRecord>>;
  /**
   * Runs one step of the `running` task of one of `kinds` that was touched least recently and that no other
   * process is stepping (its row is locked, `SKIP LOCKED`), in one transaction: `step` does its writes in
   * `tx`, then the task's status and progress are stored and the transaction commits. A crash rolls the
   * step back whole, so the task resumes from the progress of its last committed step.
   * @returns false when no task was runnable
   */
  stepNext(
    kinds: readonly string[],
    now: Date | null,
    step: (tx: Tx, task: TaskRecord) => Promise<TaskStepResult>,
  ): Promise<boolean>;
}
