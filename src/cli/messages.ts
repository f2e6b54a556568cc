import { Command, Option } from 'commander';
import { seg } from './api-client.ts';
import { CliError, ExitCode, printJson, printLine, table, type CliIo } from './io.ts';
import { printPage, printRecord, text, withPaging, type PageOptions } from './listing.ts';
import { apiClient, collect, instant, withApiOptions } from './options.ts';

/** Svix `MessageOut`. */
interface MessageOut {
  readonly id: string;
  readonly eventId: string | null;
  readonly eventType: string;
  readonly channels: string[] | null;
  readonly timestamp: string;
}

/** Svix `MessageAttemptOut` with Tidings' `attemptNumber` and `errorKind`. */
export interface AttemptOut {
  readonly id: string;
  readonly msgId: string;
  readonly endpointId: string;
  readonly responseStatusCode: number;
  readonly responseDurationMs: number;
  readonly status: number;
  readonly triggerType: number;
  readonly timestamp: string;
  readonly attemptNumber: number;
  readonly errorKind: string | null;
}

/** Tidings' dead letter. */
interface DeadLetterOut {
  readonly appId: string;
  readonly msgId: string;
  readonly endpointId: string;
  readonly eventType: string;
  readonly reason: string | null;
  readonly attemptCount: number;
  readonly lastStatusCode: number | null;
  readonly lastErrorKind: string | null;
  readonly deadAt: string;
}

/** Tidings' delivery timeline. */
interface TimelineOut {
  readonly deliveryState: string;
  readonly attemptCount: number;
  readonly nextAttemptAt: string | null;
  readonly heldBy: string | null;
  readonly heldUntil: string | null;
  readonly deadReason: string | null;
  readonly data: readonly {
    readonly state: string;
    readonly dispatcherId: string | null;
    readonly fencingToken: string | null;
    readonly statusCode: number | null;
    readonly latencyMs: number | null;
    readonly errorKind: string | null;
    readonly reason: string | null;
    readonly at: string;
  }[];
  readonly iterator: string | null;
  readonly done: boolean;
}

type Options = PageOptions & {
  readonly url?: string;
  readonly token?: string;
  readonly timeout?: string;
  readonly eventType?: string[];
  readonly channel?: string;
  readonly after?: string;
  readonly before?: string;
  readonly msg?: string;
  readonly endpoint?: string;
  readonly status?: 'success' | 'fail';
};

/** Adds the window and event-type filters of the message, attempt and dead-letter lists. */
function withFilters(io: CliIo, command: Command): Command {
  return command
    .option('--event-type <name>', 'only this event type (repeat for several)', collect)
    .option('--after <instant>', 'created after this instant (RFC 3339, or a duration ago: 2h)', instant(io))
    .option('--before <instant>', 'created before this instant', instant(io));
}

const filters = (o: Options): Record<string, string | readonly string[] | undefined> => ({
  event_types: o.eventType,
  after: o.after,
  before: o.before,
});

const outcome = (status: number): string =>
  status === 0 ? 'success' : status === 2 ? 'fail' : status === 1 ? 'pending' : status === 3 ? 'sending' : 'canceled';

/** `tidings messages list|show`. */
export function messagesCommand(io: CliIo): Command {
  const messages = new Command('messages').description("an application's messages: list, show");
  messages.addCommand(
    withPaging(
      withFilters(
        io,
        withApiOptions(
          new Command('list')
            .description('list messages, newest first')
            .argument('<app>', 'application id or uid')
            .option('--channel <name>', 'only this channel'),
        ),
      ),
    ).action(async (app: string, o: Options) => {
      await printPage<MessageOut>(
        io,
        apiClient(io, o),
        `/api/v1/app/${seg(app)}/msg`,
        { ...filters(o), channel: o.channel, with_content: false },
        o,
        [
          ['ID', (m) => m.id],
          ['EVENT TYPE', (m) => m.eventType],
          ['EVENT ID', (m) => text(m.eventId)],
          ['CHANNELS', (m) => text(m.channels?.join(','))],
          ['CREATED', (m) => m.timestamp],
        ],
      );
    }),
  );
  messages.addCommand(
    withApiOptions(
      new Command('show')
        .description('show one message with its payload')
        .argument('<app>', 'application id or uid')
        .argument('<msg>', 'message id or eventId'),
    ).action(async (app: string, msg: string, o: Options) => {
      printRecord(
        io,
        await apiClient(io, o).get<Record<string, unknown>>(`/api/v1/app/${seg(app)}/msg/${seg(msg)}`),
        o.json,
      );
    }),
  );
  return messages;
}

/** `tidings attempts <app> --msg <id> | --endpoint <id>`. */
export function attemptsCommand(io: CliIo): Command {
  return withPaging(
    withFilters(
      io,
      withApiOptions(
        new Command('attempts')
          .description('list attempts of a message or of an endpoint, newest first')
          .argument('<app>', 'application id or uid')
          .option('--msg <id>', 'attempts of this message')
          .option('--endpoint <id>', 'attempts to this endpoint (with --msg: of that message to it)')
          .addOption(new Option('--status <outcome>', 'only successes or failures').choices(['success', 'fail'])),
      ),
    ),
  ).action(async (app: string, o: Options) => {
    if (o.msg === undefined && o.endpoint === undefined) throw new CliError(ExitCode.usage, 'give --msg or --endpoint');
    const path =
      o.msg !== undefined
        ? `/api/v1/app/${seg(app)}/attempt/msg/${seg(o.msg)}`
        : `/api/v1/app/${seg(app)}/attempt/endpoint/${seg(o.endpoint!)}`;
    const status = o.status === undefined ? undefined : o.status === 'success' ? 0 : 2;
    await printPage<AttemptOut>(
      io,
      apiClient(io, o),
      path,
      { ...filters(o), status, endpoint_id: o.msg !== undefined ? o.endpoint : undefined, with_content: false },
      o,
      [
        ['ATTEMPT', (a) => a.id],
        ['#', (a) => String(a.attemptNumber)],
        ['OUTCOME', (a) => outcome(a.status)],
        ['HTTP', (a) => text(a.responseStatusCode || null)],
        ['MS', (a) => String(a.responseDurationMs)],
        ['ERROR', (a) => text(a.errorKind)],
        ['TRIGGER', (a) => (a.triggerType === 1 ? 'manual' : 'scheduled')],
        ['MESSAGE', (a) => a.msgId],
        ['ENDPOINT', (a) => a.endpointId],
        ['AT', (a) => a.timestamp],
      ],
    );
  });
}

/** `tidings timeline <app> <msg> <endpoint>`: one delivery's state and its timeline, oldest first. */
export function timelineCommand(io: CliIo): Command {
  return withPaging(
    withApiOptions(
      new Command('timeline')
        .description('one delivery: its state and every transition, oldest first')
        .argument('<app>', 'application id or uid')
        .argument('<msg>', 'message id or eventId')
        .argument('<endpoint>', 'endpoint id or uid'),
    ),
  ).action(async (app: string, msg: string, ep: string, o: Options) => {
    const t = await apiClient(io, o).get<TimelineOut>(
      `/api/v1/app/${seg(app)}/msg/${seg(msg)}/endpoint/${seg(ep)}/timeline`,
      { limit: o.limit ?? 250, iterator: o.iterator },
    );
    if (o.json === true) {
      printJson(io, t);
      return;
    }
    const held = t.heldBy === null ? '' : `, held by ${t.heldBy}${t.heldUntil === null ? '' : ` until ${t.heldUntil}`}`;
    const dead = t.deadReason === null ? '' : ` (${t.deadReason})`;
    printLine(
      io,
      `state: ${t.deliveryState}${dead}, attempts: ${t.attemptCount}, next attempt: ${text(t.nextAttemptAt)}${held}`,
    );
    for (const line of table(
      ['AT', 'STATE', 'REASON', 'HTTP', 'MS', 'ERROR', 'DISPATCHER', 'TOKEN'],
      t.data.map((r) => [
        r.at,
        r.state,
        text(r.reason),
        text(r.statusCode),
        text(r.latencyMs),
        text(r.errorKind),
        text(r.dispatcherId),
        text(r.fencingToken),
      ]),
    ))
      printLine(io, line);
    if (!t.done && t.iterator !== null) io.stderr.write(`more: --iterator ${t.iterator}\n`);
  });
}

/** `tidings dead-letters [app] [--endpoint <id>]`: every application's (operator) or one application's dead letters. */
export function deadLettersCommand(io: CliIo): Command {
  return withPaging(
    withFilters(
      io,
      withApiOptions(
        new Command('dead-letters')
          .description('deliveries that ended dead, newest first')
          .argument('[app]', 'application id or uid (absent: every application, operator credential)')
          .option('--endpoint <id>', 'only this endpoint (with an application)'),
      ),
    ),
  ).action(async (app: string | undefined, o: Options) => {
    if (app === undefined && o.endpoint !== undefined)
      throw new CliError(ExitCode.usage, '--endpoint needs the application');
    const path =
      app === undefined
        ? '/api/v1/dead-letter'
        : o.endpoint === undefined
          ? `/api/v1/app/${seg(app)}/dead-letter`
          : `/api/v1/app/${seg(app)}/endpoint/${seg(o.endpoint)}/dead-letter`;
    await printPage<DeadLetterOut>(io, apiClient(io, o), path, filters(o), o, [
      ['MESSAGE', (d) => d.msgId],
      ['ENDPOINT', (d) => d.endpointId],
      ...(app === undefined ? [['APP', (d: DeadLetterOut) => d.appId] as const] : []),
      ['EVENT TYPE', (d) => d.eventType],
      ['REASON', (d) => text(d.reason)],
      ['ATTEMPTS', (d) => String(d.attemptCount)],
      ['LAST HTTP', (d) => text(d.lastStatusCode)],
      ['LAST ERROR', (d) => text(d.lastErrorKind)],
      ['DEAD AT', (d) => d.deadAt],
    ]);
  });
}
