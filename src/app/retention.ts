import type { ApplicationStore } from '../ports/application-store.ts';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { HistoryPartitionSettings, HistoryPartitions } from '../ports/history-partitions.ts';
import type { IdempotencyPruning } from '../ports/idempotency-store.ts';
import type { ErasureFilter, ErasureTask, PayloadCursor, RetentionStore } from '../ports/retention-store.ts';
import { ERASURE_TASK_KIND, type TaskRecord, type TaskStore } from '../ports/task-store.ts';
import type { UnitOfWork } from '../ports/unit-of-work.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** The ages and batch size of the retention job (TIDINGS_PAYLOAD_RETENTION, …_SUCCEEDED_AGE, …_BATCH). */
export interface RetentionSettings {
  /** Payload retention of messages that name none, in ms (whole hours are used). */
  readonly payloadRetentionMs: number;
  /** Age after success at which a delivery, its attempts and timeline are deleted; 0 = never. */
  readonly succeededAgeMs: number;
  /** Rows per statement. */
  readonly batch: number;
  /** The history partitions' width, how many are made ahead, and the lock wait (absent: none are made). */
  readonly partitions?: HistoryPartitionSettings;
}

/** What one run of the retention job did. */
export interface RetentionReport {
  readonly payloadsExpunged: number;
  readonly deliveriesPruned: number;
  readonly idempotencyKeysPruned: number;
  readonly erasureBatches: number;
  /** History partitions made, dropped, and kept past their age because a live delivery has rows in them. */
  readonly partitionsMade: number;
  readonly partitionsDropped: number;
  readonly partitionsKeptForLive: number;
  /** History rows of dead, skipped and canceled deliveries carried over out of the partitions dropped. */
  readonly historyRowsCarried: number;
}

/**
 * The stores the retention job works through, each the one writer of its tables: messages' payloads and
 * succeeded deliveries (`retention`), expired idempotency keys (`idempotency`), and erasure tasks, which are
 * background tasks stepped by the task store like replays (`tasks`).
 */
export interface RetentionDeps {
  readonly retention: RetentionStore;
  readonly idempotency: IdempotencyPruning;
  readonly tasks: Pick<TaskStore, 'stepNext'>;
  /** The history partitions (attempts, timeline); absent: neither made nor dropped. */
  readonly history?: HistoryPartitions;
}

const HOUR_MS = 3_600_000;

/**
 * One run of the retention job (docs/guides/security.md, docs/design.md#scale): expunges payloads past their retention
 * (per retention class, batch after batch), deletes succeeded deliveries older than the configured age with
 * their attempts and timeline rows, deletes expired idempotency keys, and advances erasure tasks — each
 * step a loop of bounded single-statement batches, so delivery is never held back. `shouldStop` is
 * checked between batches (graceful stop); what is left is done by the next run.
 */
export async function runRetention(
  deps: RetentionDeps,
  settings: RetentionSettings,
  clock: Clock,
  shouldStop: () => boolean = () => false,
): Promise<RetentionReport> {
  let payloadsExpunged = 0;
  let deliveriesPruned = 0;
  let idempotencyKeysPruned = 0;
  let erasureBatches = 0;
  const parts = await maintainPartitions(deps, settings, clock);
  const report = () => ({ payloadsExpunged, deliveriesPruned, idempotencyKeysPruned, erasureBatches, ...parts });
  const defaultHours = Math.max(1, Math.round(settings.payloadRetentionMs / HOUR_MS));
  for (const retentionHours of await deps.retention.payloadRetentionClasses()) {
    let cursor: PayloadCursor | null = null;
    for (;;) {
      if (shouldStop()) return report();
      const batch = await deps.retention.expirePayloads({
        retentionHours,
        defaultHours,
        batch: settings.batch,
        cursor,
        now: clock.sqlNow(),
      });
      payloadsExpunged += batch.expunged;
      cursor = batch.cursor;
      if (batch.read < settings.batch) break;
    }
  }
  if (settings.succeededAgeMs > 0) {
    for (;;) {
      if (shouldStop()) break;
      const n = await deps.retention.pruneSucceeded({
        ageMs: settings.succeededAgeMs,
        batch: settings.batch,
        now: clock.sqlNow(),
      });
      deliveriesPruned += n;
      if (n < settings.batch) break;
    }
  }
  for (;;) {
    if (shouldStop()) break;
    const n = await deps.idempotency.pruneExpired({ batch: settings.batch, now: clock.sqlNow() });
    idempotencyKeysPruned += n;
    if (n < settings.batch) break;
  }
  erasureBatches = await runErasures(deps, settings.batch, clock, shouldStop);
  return report();
}

/**
 * The history partitions' step of a retention run (docs/adr/0030-history-partitions.md): makes the current and the
 * next partitions, then drops those whose range is older than the succeeded age (never one holding a live
 * delivery's rows; the rows of dead, skipped and canceled deliveries are carried over first, ADR 0031), before
 * succeeded deliveries are pruned, so that their rows in dated partitions are not deleted one by one.
 */
async function maintainPartitions(
  deps: RetentionDeps,
  settings: RetentionSettings,
  clock: Clock,
): Promise<{
  partitionsMade: number;
  partitionsDropped: number;
  partitionsKeptForLive: number;
  historyRowsCarried: number;
}> {
  const p = settings.partitions;
  if (deps.history === undefined || p === undefined)
    return { partitionsMade: 0, partitionsDropped: 0, partitionsKeptForLive: 0, historyRowsCarried: 0 };
  const nowMs = clock.nowMs();
  const made = await deps.history.ensure({ nowMs, widthMs: p.widthMs, ahead: p.ahead, lockTimeoutMs: p.lockTimeoutMs });
  if (settings.succeededAgeMs === 0)
    return { partitionsMade: made.length, partitionsDropped: 0, partitionsKeptForLive: 0, historyRowsCarried: 0 };
  const aged = await deps.history.dropAged({ nowMs, ageMs: settings.succeededAgeMs, lockTimeoutMs: p.lockTimeoutMs });
  return {
    partitionsMade: made.length,
    partitionsDropped: aged.dropped.length,
    partitionsKeptForLive: aged.keptForLive.length,
    historyRowsCarried: aged.carried,
  };
}

/** What an erasure task keeps: its filter and where it stops in `params`, its scan in `progress`. */
type ErasureParams = {
  readonly tag: string | null;
  readonly eventIdPrefix: string | null;
  readonly untilId: string | null;
};
type ErasureProgress = { readonly cursor: string; readonly messagesPurged: number; readonly messagesScanned: number };

/** The {@link ErasureTask} view of an erasure's background task. */
function erasureOf(task: TaskRecord): ErasureTask {
  const params = task.params as unknown as ErasureParams;
  const progress = task.progress as unknown as ErasureProgress;
  return {
    id: task.id,
    appId: task.appId ?? '',
    status: task.status,
    filter: { tag: params.tag, eventIdPrefix: params.eventIdPrefix },
    messagesPurged: progress.messagesPurged,
    updatedAt: task.updatedAt,
  };
}

/**
 * Advances running erasure tasks one batch at a time until none is runnable (the least recently advanced
 * task nobody else holds goes first; each batch commits with the task's progress, so a task left running by
 * a stopped process resumes from its last batch); returns the batches run.
 */
export async function runErasures(
  deps: Pick<RetentionDeps, 'retention' | 'tasks'>,
  batch: number,
  clock: Clock,
  shouldStop: () => boolean = () => false,
): Promise<number> {
  let steps = 0;
  while (!shouldStop()) {
    const now = clock.sqlNow();
    const stepped = await deps.tasks.stepNext([ERASURE_TASK_KIND], now, async (tx, task) => {
      const params = task.params as unknown as ErasureParams;
      const progress = task.progress as unknown as ErasureProgress;
      if (params.untilId === null || task.appId === null) return { status: 'finished', progress };
      const done = await deps.retention.eraseBatch(tx, {
        appId: task.appId,
        afterId: progress.cursor,
        untilId: params.untilId,
        filter: { tag: params.tag, eventIdPrefix: params.eventIdPrefix },
        batch,
        now,
      });
      const next: ErasureProgress = {
        cursor: done.lastId ?? progress.cursor,
        messagesPurged: progress.messagesPurged + done.expunged,
        messagesScanned: progress.messagesScanned + done.read,
      };
      return { status: done.read < batch ? 'finished' : 'running', progress: next };
    });
    if (!stepped) break;
    steps++;
  }
  return steps;
}

/** Dependencies of {@link createErasure}. `kick` starts the runner at once (the retention job's). */
export interface ErasureDeps {
  readonly retention: Pick<RetentionStore, 'newestMessageId'>;
  readonly tasks: Pick<TaskStore, 'insertTask'>;
  readonly applications: Pick<ApplicationStore, 'findApplication'>;
  readonly unitOfWork: Pick<UnitOfWork, 'transaction'>;
  readonly clock: Clock;
  readonly random: Random;
  readonly kick: () => void;
}

/** Erasure of many payloads on request (docs/guides/security.md). */
export interface Erasure {
  /**
   * Starts a background task that expunges every payload (and stored response body) of the application's
   * messages existing now — or only those with `filter.tag`, or whose eventId starts with
   * `filter.eventIdPrefix` — whatever their retention or delivery state. Deliveries still pending then
   * carry JSON null, as for any expunged message.
   * @throws AppError `not_found`, `validation` (an empty prefix)
   */
  start(principal: Principal, appRef: string, filter: ErasureFilter): Promise<ErasureTask>;
}

/** Makes the erasure use case. */
export function createErasure(deps: ErasureDeps): Erasure {
  return {
    async start(principal, appRef, filter) {
      if (filter.eventIdPrefix === '')
        throw new AppError('validation', [
          { loc: ['body', 'eventIdPrefix'], msg: 'must not be empty', type: 'value_error' },
        ]);
      const app = await resolveApplication(deps.applications, principal, appRef);
      const id = newId('qtask', deps.clock.nowMs(), () => deps.random.next());
      const task = await deps.unitOfWork.transaction(async (tx) => {
        const params: ErasureParams = {
          tag: filter.tag,
          eventIdPrefix: filter.eventIdPrefix,
          untilId: await deps.retention.newestMessageId(tx, app.id),
        };
        const progress: ErasureProgress = { cursor: '', messagesPurged: 0, messagesScanned: 0 };
        return erasureOf(
          await deps.tasks.insertTask(
            tx,
            { id, appId: app.id, kind: ERASURE_TASK_KIND, params, progress },
            deps.clock.sqlNow(),
          ),
        );
      });
      deps.kick();
      return task;
    },
  };
}
