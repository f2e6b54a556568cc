import { Command } from 'commander';
import { seg, type ApiClient } from './api-client.ts';
import { CliError, ExitCode, note, printJson, printLine, type CliIo } from './io.ts';
import { apiClient, collect, instant, withApiOptions } from './options.ts';
import { followTask, type TaskOut } from './task-progress.ts';

/**
 * `tidings recover`, `tidings replay-missing` and `tidings replay` (dead letters): start the background task
 * and follow it, or with `--dry-run` count what it would queue. The count is read through the list routes
 * with the task's selection, so it works against any installation; it is an upper bound, because a task
 * leaves out messages whose payload expired meanwhile and deliveries to endpoints disabled meanwhile.
 */

/** Most items a dry run reads before it answers "at least". */
export const MAX_COUNTED = 100_000;

/** The window of a replay: [since, until). */
interface Window {
  readonly since: string;
  readonly until?: string;
}

/** What a dry run found: how many deliveries the task would queue, and what they are. */
export interface ReplayCount {
  readonly wouldQueue: number;
  /** True when the count stopped at {@link MAX_COUNTED}: the task would queue at least this many. */
  readonly atLeast: boolean;
  readonly detail: Readonly<Record<string, number>>;
}

interface EndpointOut {
  readonly id: string;
  readonly disabled: boolean;
  readonly eventTypes: string[] | null;
  readonly channels: string[] | null;
}
interface EndpointMessage {
  readonly id: string;
  readonly deliveryState: string;
}
interface Message {
  readonly id: string;
  readonly channels: string[] | null;
}

/** The list filters of a window: `after` is exclusive on the millisecond, `since` inclusive. */
function windowQuery(w: Window): { after: string; before: string | undefined } {
  return { after: new Date(Date.parse(w.since) - 1).toISOString(), before: w.until };
}

/** The endpoint, refusing as the API would (409) when it is disabled. @throws CliError refused */
async function liveEndpoint(api: ApiClient, app: string, ep: string): Promise<EndpointOut> {
  const endpoint = await api.get<EndpointOut>(`/api/v1/app/${seg(app)}/endpoint/${seg(ep)}`);
  if (endpoint.disabled)
    throw new CliError(
      ExitCode.refused,
      `endpoint ${endpoint.id} is disabled: the API refuses to replay to it (409); enable it first`,
    );
  return endpoint;
}

/** Recover: the endpoint's dead letters of messages created in the window. */
export async function countRecover(api: ApiClient, app: string, ep: string, w: Window): Promise<ReplayCount> {
  await liveEndpoint(api, app, ep);
  const dead = await api.all<EndpointMessage>(
    `/api/v1/app/${seg(app)}/endpoint/${seg(ep)}/msg`,
    { ...windowQuery(w), status: 2, with_content: false },
    MAX_COUNTED,
  );
  const n = dead.items.filter((m) => m.deliveryState === 'dead').length;
  return { wouldQueue: n, atLeast: dead.truncated, detail: { deadLetters: n } };
}

/**
 * Replay-missing: the endpoint's skipped deliveries, and the messages of the window that its subscription
 * (event types, channels) matches but that it has no delivery for.
 */
export async function countReplayMissing(api: ApiClient, app: string, ep: string, w: Window): Promise<ReplayCount> {
  const endpoint = await liveEndpoint(api, app, ep);
  const had = await api.all<EndpointMessage>(
    `/api/v1/app/${seg(app)}/endpoint/${seg(ep)}/msg`,
    { ...windowQuery(w), with_content: false, expanded_statuses: true },
    MAX_COUNTED,
  );
  const eventTypes = endpoint.eventTypes === null || endpoint.eventTypes.length === 0 ? undefined : endpoint.eventTypes;
  const all = await api.all<Message>(
    `/api/v1/app/${seg(app)}/msg`,
    { ...windowQuery(w), with_content: false, event_types: eventTypes },
    MAX_COUNTED,
  );
  const ids = new Set(had.items.map((m) => m.id));
  const channels = endpoint.channels ?? [];
  const matches = (m: Message): boolean =>
    channels.length === 0 || (m.channels ?? []).some((c) => channels.includes(c));
  const skipped = had.items.filter((m) => m.deliveryState === 'skipped').length;
  const missing = all.items.filter((m) => !ids.has(m.id) && matches(m)).length;
  return {
    wouldQueue: skipped + missing,
    atLeast: had.truncated || all.truncated,
    detail: { skipped, neverDelivered: missing },
  };
}

/** Dead-letter replay: the application's (or one endpoint's) dead letters of the window and event types. */
export async function countDeadLetterReplay(
  api: ApiClient,
  app: string,
  w: Window,
  endpoint: string | undefined,
  eventTypes: string[] | undefined,
): Promise<ReplayCount> {
  if (endpoint !== undefined) await liveEndpoint(api, app, endpoint);
  const path =
    endpoint === undefined
      ? `/api/v1/app/${seg(app)}/dead-letter`
      : `/api/v1/app/${seg(app)}/endpoint/${seg(endpoint)}/dead-letter`;
  const dead = await api.all<unknown>(path, { ...windowQuery(w), event_types: eventTypes }, MAX_COUNTED);
  return { wouldQueue: dead.items.length, atLeast: dead.truncated, detail: { deadLetters: dead.items.length } };
}

interface ReplayOptions {
  readonly url?: string;
  readonly token?: string;
  readonly timeout?: string;
  readonly json?: boolean;
  readonly since: string;
  readonly until?: string;
  readonly dryRun?: boolean;
  readonly wait: boolean;
  readonly endpoint?: string;
  readonly eventType?: string[];
}

/** One replay command: its count, and how to start its task. */
interface ReplayKind {
  readonly count: (api: ApiClient, o: ReplayOptions) => Promise<ReplayCount>;
  readonly start: (api: ApiClient, o: ReplayOptions) => Promise<TaskOut>;
}

/** Runs a replay command: a dry run prints the count; otherwise the task is started and followed. */
async function runReplay(io: CliIo, o: ReplayOptions, kind: ReplayKind): Promise<void> {
  const api = apiClient(io, o);
  if (o.dryRun === true) {
    const c = await kind.count(api, o);
    if (o.json === true) printJson(io, { dryRun: true, ...c });
    else {
      const detail = Object.entries(c.detail)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
      printLine(
        io,
        `dry run: would queue ${c.atLeast ? 'at least ' : ''}${c.wouldQueue} deliveries (${detail}); ` +
          'nothing was changed',
      );
    }
    return;
  }
  // The bar's total: the same count a dry run prints (read only when a bar is shown).
  const total = o.wait && o.json !== true && io.stdout.isTTY === true ? (await kind.count(api, o)).wouldQueue : null;
  const task = await kind.start(api, o);
  if (!o.wait) {
    if (o.json === true) printJson(io, task);
    else printLine(io, `${task.id} started (${task.task}); follow it: GET /api/v1/background-task/${task.id}`);
    return;
  }
  if (o.json !== true) note(io, `${task.id} started (${task.task})`);
  await followTask(io, api, task, total, o.json === true);
}

/** The options every replay command takes. */
function replayBase(io: CliIo, name: string, description: string): Command {
  return withApiOptions(new Command(name).description(description))
    .requiredOption(
      '--since <instant>',
      'messages created at or after this instant (RFC 3339, or a duration ago: 2h)',
      instant(io),
    )
    .option('--until <instant>', 'messages created before this instant (default: no bound)', instant(io))
    .option('--dry-run', 'count the deliveries it would queue, change nothing')
    .option('--no-wait', 'start the task and print its id, without following it');
}

const body = (o: ReplayOptions): Record<string, unknown> => ({
  since: o.since,
  ...(o.until === undefined ? {} : { until: o.until }),
});

/** `tidings recover <app> <endpoint>`. */
export function recoverCommand(io: CliIo): Command {
  return replayBase(
    io,
    'recover',
    "send again the endpoint's dead letters of messages created in the window (Svix recover)",
  )
    .argument('<app>', 'application id or uid')
    .argument('<endpoint>', 'endpoint id or uid')
    .action(async (app: string, ep: string, o: ReplayOptions) =>
      runReplay(io, o, {
        count: (api) => countRecover(api, app, ep, o),
        start: (api) =>
          api.json<TaskOut>('POST', `/api/v1/app/${seg(app)}/endpoint/${seg(ep)}/recover`, { body: body(o) }),
      }),
    );
}

/** `tidings replay-missing <app> <endpoint>`. */
export function replayMissingCommand(io: CliIo): Command {
  return replayBase(
    io,
    'replay-missing',
    'send once the messages of the window the endpoint never had, and its skipped ones (Svix replay-missing)',
  )
    .argument('<app>', 'application id or uid')
    .argument('<endpoint>', 'endpoint id or uid')
    .action(async (app: string, ep: string, o: ReplayOptions) =>
      runReplay(io, o, {
        count: (api) => countReplayMissing(api, app, ep, o),
        start: (api) =>
          api.json<TaskOut>('POST', `/api/v1/app/${seg(app)}/endpoint/${seg(ep)}/replay-missing`, { body: body(o) }),
      }),
    );
}

/** `tidings replay <app>`: dead letters back to pending (Tidings' dead-letter replay). */
export function deadLetterReplayCommand(io: CliIo): Command {
  return replayBase(io, 'replay', "send again the application's dead letters of the window, paced per endpoint")
    .argument('<app>', 'application id or uid')
    .option('--endpoint <id>', 'only the dead letters of this endpoint')
    .option('--event-type <name>', 'only this event type (repeat for several)', collect)
    .action(async (app: string, o: ReplayOptions) =>
      runReplay(io, o, {
        count: (api) => countDeadLetterReplay(api, app, o, o.endpoint, o.eventType),
        start: (api) =>
          api.json<TaskOut>('POST', `/api/v1/app/${seg(app)}/dead-letter/replay`, {
            body: {
              ...body(o),
              ...(o.endpoint === undefined ? {} : { endpointId: o.endpoint }),
              ...(o.eventType === undefined ? {} : { eventTypes: o.eventType }),
            },
          }),
      }),
    );
}
