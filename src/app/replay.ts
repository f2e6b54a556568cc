import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import { AppError, notFound } from '../domain/errors.ts';
import { TimelineReason } from '../domain/timeline-reasons.ts';
import { newId } from '../domain/ids.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import type { HeldSummary, ReplayableState, ReplayBatchResult, ReplayStore } from '../ports/replay-store.ts';
import { TaskKind, type TaskRecord, type TaskStepResult, type TaskStore } from '../ports/task-store.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/**
 * Replays as background tasks (docs/design.md#delivery-lifecycle, docs/adr/0003-svix-compatibility.md): recover
 * (recover.ts), replay-missing, bulk replay and Tidings' dead-letter replay. Starting one stores a `running` task in
 * the request's transaction (so it commits with the Idempotency-Key); the task runner (tasks.ts) then steps it in
 * bounded batches, each batch one transaction that moves deliveries and records the progress together.
 */

/** A time window on message creation: [since, until), until null = unbounded. */
export interface ReplayWindow {
  readonly since: Date;
  readonly until: Date | null;
}

/** Svix `BulkReplayIn` as the use case takes it. */
export interface BulkReplayFilter extends ReplayWindow {
  /** Which deliveries: dead, succeeded (Svix: both by default). */
  readonly states: readonly ReplayableState[];
  readonly eventTypes: readonly string[] | null;
  readonly channel: string | null;
  readonly tag: string | null;
  readonly statusCodeClass: number | null;
}

/** Tidings' dead-letter replay: an application's dead letters, optionally of one endpoint and event types. */
export interface DeadLetterReplayFilter extends ReplayWindow {
  readonly endpointRef: string | null;
  readonly eventTypes: readonly string[] | null;
}

/** The selection of a replay task, stored as its `params` (instants as ISO text). */
export interface ReplayTaskParams {
  readonly appId: string;
  readonly endpointId: string | null;
  readonly since: string;
  readonly until: string | null;
  readonly states: readonly ReplayableState[];
  readonly eventTypes: readonly string[] | null;
  readonly channel: string | null;
  readonly tag: string | null;
  readonly statusCodeClass: number | null;
}

/**
 * The progress of a replay task, stored as its `progress`. The counters are shown as the task's `data`
 * (Svix: `messagesSent`); `cursor` and `slots` (endpoint → next free instant of the pace) let a step, in
 * any process, continue where the last committed one stopped.
 */
export interface ReplayTaskProgress {
  readonly messagesSent: number;
  readonly scanned: number;
  readonly alreadyQueued: number;
  readonly expunged: number;
  readonly unavailable: number;
  /**
   * Of a task for one endpoint: its pending deliveries in the window that wait behind the endpoint (pause,
   * breaker, Retry-After) rather than their schedule — counted when the task starts and again when it
   * finishes (a recover selects dead letters only, so these are neither sent again nor counted as queued).
   * Null for a task over a whole application.
   */
  readonly held: number | null;
  /** {@link held} by what holds them (`paused`, `breaker`, `throttled`), or null. */
  readonly heldBy: { readonly paused: number; readonly breaker: number; readonly throttled: number } | null;
  /** The latest end of those holds that has one (ISO-8601); null when none has, or none is held. */
  readonly heldUntil: string | null;
  readonly error: string | null;
  readonly cursor: string | null;
  readonly slots: Readonly<Record<string, string>>;
}

/** The progress of a task that has not run yet. */
export const INITIAL_PROGRESS: ReplayTaskProgress = Object.freeze({
  messagesSent: 0,
  scanned: 0,
  alreadyQueued: 0,
  expunged: 0,
  unavailable: 0,
  held: null,
  heldBy: null,
  heldUntil: null,
  error: null,
  cursor: null,
  slots: {},
});

/** The held fields of a task's progress from the store's summary. */
function heldProgress(h: HeldSummary): Pick<ReplayTaskProgress, 'held' | 'heldBy' | 'heldUntil'> {
  return { held: h.held, heldBy: { ...h.byKind }, heldUntil: h.heldUntil === null ? null : h.heldUntil.toISOString() };
}

/** Why a step moved a delivery, written into its timeline row. */
const REASON: Readonly<Record<TaskKind, TimelineReason>> = {
  [TaskKind.recover]: TimelineReason.recoverRequested,
  [TaskKind.replayMissing]: TimelineReason.replayMissingRequested,
  [TaskKind.bulkReplay]: TimelineReason.bulkReplayRequested,
  [TaskKind.deadLetterReplay]: TimelineReason.deadLetterReplayRequested,
};

/** Dependencies of the replay use cases. */
export interface ReplaysDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  readonly tasks: Pick<TaskStore, 'insertTask'>;
  /** Counts the endpoint's held deliveries when a task for one endpoint starts. */
  readonly replay: Pick<ReplayStore, 'countHeld'>;
  readonly clock: Clock;
  readonly random: Random;
}

/** What a new replay task selects, before the application and endpoint are resolved. */
interface Selection extends ReplayWindow {
  readonly states: readonly ReplayableState[];
  readonly eventTypes: readonly string[] | null;
  readonly channel: string | null;
  readonly tag: string | null;
  readonly statusCodeClass: number | null;
}

/**
 * Resolves the application (and endpoint), checks the window and stores a `running` task of `kind`.
 * @throws AppError `not_found` (application, endpoint), `validation` (since after until, at body.until),
 *   `conflict` (the endpoint is disabled: enable it first)
 */
export async function startReplayTask(
  deps: ReplaysDeps,
  tx: Tx,
  principal: Principal,
  appRef: string,
  endpointRef: string | null,
  kind: TaskKind,
  selection: Selection,
): Promise<TaskRecord> {
  if (selection.until !== null && selection.since.valueOf() > selection.until.valueOf()) {
    throw new AppError('validation', [
      { loc: ['body', 'until'], msg: 'until must not be before since', type: 'value_error' },
    ]);
  }
  const app = await resolveApplication(deps.lookups, principal, appRef, tx);
  let endpointId: string | null = null;
  if (endpointRef !== null) {
    const endpoint = await deps.lookups.findEndpoint(app.id, endpointRef, { tx });
    if (endpoint === null) throw notFound('Endpoint');
    if (endpoint.status === 'disabled')
      throw new AppError('conflict', 'The endpoint is disabled; enable it before replaying to it');
    endpointId = endpoint.id;
  }
  const params: ReplayTaskParams = {
    appId: app.id,
    endpointId,
    since: selection.since.toISOString(),
    until: selection.until?.toISOString() ?? null,
    states: selection.states,
    eventTypes: selection.eventTypes,
    channel: selection.channel,
    tag: selection.tag,
    statusCodeClass: selection.statusCodeClass,
  };
  const held =
    endpointId === null
      ? null
      : await deps.replay.countHeld(tx, {
          appId: app.id,
          endpointId,
          since: selection.since,
          until: selection.until,
          now: deps.clock.sqlNow(),
        });
  return deps.tasks.insertTask(
    tx,
    {
      id: newId('qtask', deps.clock.nowMs(), () => deps.random.next()),
      appId: app.id,
      kind,
      params: { ...params },
      progress: { ...INITIAL_PROGRESS, ...(held === null ? {} : heldProgress(held)) },
    },
    deps.clock.sqlNow(),
  );
}

/** Replay-missing, bulk replay and dead-letter replay (recover is in recover.ts). */
export interface Replays {
  /**
   * Svix replay-missing: the endpoint's skipped deliveries, and the messages its subscription matches but
   * that it has no delivery for, created in the window, are each sent once.
   * @throws AppError `not_found`, `validation`, `conflict` (endpoint disabled)
   */
  replayMissing(
    tx: Tx,
    principal: Principal,
    appRef: string,
    endpointRef: string,
    window: ReplayWindow,
  ): Promise<TaskRecord>;
  /** Svix bulk-replay: the endpoint's dead and/or succeeded deliveries by filter. @throws as {@link replayMissing} */
  bulkReplay(
    tx: Tx,
    principal: Principal,
    appRef: string,
    endpointRef: string,
    filter: BulkReplayFilter,
  ): Promise<TaskRecord>;
  /** Tidings: dead letters of the application by filter. @throws as {@link replayMissing} */
  replayDeadLetters(tx: Tx, principal: Principal, appRef: string, filter: DeadLetterReplayFilter): Promise<TaskRecord>;
}

/** Makes the replay use cases. */
export function createReplays(deps: ReplaysDeps): Replays {
  const none = { eventTypes: null, channel: null, tag: null, statusCodeClass: null };
  return {
    replayMissing: (tx, principal, appRef, endpointRef, window) =>
      startReplayTask(deps, tx, principal, appRef, endpointRef, TaskKind.replayMissing, {
        ...window,
        ...none,
        states: ['skipped'],
      }),
    bulkReplay: (tx, principal, appRef, endpointRef, filter) =>
      startReplayTask(deps, tx, principal, appRef, endpointRef, TaskKind.bulkReplay, filter),
    replayDeadLetters: (tx, principal, appRef, filter) =>
      startReplayTask(deps, tx, principal, appRef, filter.endpointRef, TaskKind.deadLetterReplay, {
        ...filter,
        ...none,
        eventTypes: filter.eventTypes,
        states: ['dead'],
      }),
  };
}

/** Settings of a replay step. */
export interface ReplayStepSettings {
  /** TIDINGS_TASK_BATCH: rows examined per step. */
  readonly batch: number;
  /** 1000 / TIDINGS_REPLAY_RATE: ms between two deliveries queued for one endpoint. */
  readonly intervalMs: number;
}

/** Dependencies of {@link stepReplayTask}. */
export interface ReplayStepDeps {
  readonly replay: Pick<ReplayStore, 'replayDeliveries' | 'replayMissing' | 'countHeld'>;
  readonly lookups: Pick<EndpointStore, 'findEndpoint'>;
  readonly clock: Clock;
  readonly settings: ReplayStepSettings;
}

const isKind = (kind: string): kind is TaskKind => (Object.values(TaskKind) as string[]).includes(kind);

/**
 * One step of a replay task, in the task's transaction: one bounded batch, then the new progress. A task
 * whose endpoint was deleted or disabled meanwhile fails with the reason in `data.error`; a batch that
 * examined fewer rows than the batch size finishes the task.
 */
export async function stepReplayTask(deps: ReplayStepDeps, tx: Tx, task: TaskRecord): Promise<TaskStepResult> {
  const params = task.params as unknown as ReplayTaskParams;
  const progress = { ...INITIAL_PROGRESS, ...(task.progress as Partial<ReplayTaskProgress>) };
  const fail = (error: string): TaskStepResult => ({ status: 'failed', progress: { ...progress, error } });
  if (!isKind(task.kind)) return fail(`unknown task kind ${task.kind}`);
  if (params.endpointId !== null) {
    const endpoint = await deps.lookups.findEndpoint(params.appId, params.endpointId, { tx });
    if (endpoint === null) return fail('endpoint_deleted');
    if (endpoint.status === 'disabled') return fail('endpoint_disabled');
  }
  const slots = Object.fromEntries(Object.entries(progress.slots).map(([id, at]) => [id, new Date(at)]));
  const base = {
    appId: params.appId,
    since: new Date(params.since),
    until: params.until === null ? null : new Date(params.until),
    after: progress.cursor,
    limit: deps.settings.batch,
    intervalMs: deps.settings.intervalMs,
    slots,
    reason: REASON[task.kind],
    now: deps.clock.sqlNow(),
  };
  const result: ReplayBatchResult =
    task.kind === TaskKind.replayMissing && params.endpointId !== null
      ? await deps.replay.replayMissing(tx, { ...base, endpointId: params.endpointId })
      : await deps.replay.replayDeliveries(tx, {
          ...base,
          endpointId: params.endpointId,
          states: params.states,
          eventTypes: params.eventTypes,
          channel: params.channel,
          tag: params.tag,
          statusCodeClass: params.statusCodeClass,
        });
  // Slots already in the past no longer pace anything.
  const merged: Record<string, string> = {};
  for (const [id, at] of Object.entries({ ...slots, ...result.slots }))
    if (at.valueOf() > result.at.valueOf()) merged[id] = at.toISOString();
  const next: ReplayTaskProgress = {
    messagesSent: progress.messagesSent + result.queued,
    scanned: progress.scanned + result.scanned,
    alreadyQueued: progress.alreadyQueued + result.alreadyQueued,
    expunged: progress.expunged + result.expunged,
    unavailable: progress.unavailable + result.unavailable,
    held: progress.held,
    heldBy: progress.heldBy,
    heldUntil: progress.heldUntil,
    error: null,
    cursor: result.cursor,
    slots: merged,
  };
  const finished = result.scanned < deps.settings.batch;
  // The summary a finished task of one endpoint leaves: what still waits behind the endpoint.
  const held =
    finished && params.endpointId !== null
      ? heldProgress(
          await deps.replay.countHeld(tx, {
            appId: params.appId,
            endpointId: params.endpointId,
            since: base.since,
            until: base.until,
            now: base.now,
          }),
        )
      : {};
  return { status: finished ? 'finished' : 'running', progress: { ...next, ...held } };
}
