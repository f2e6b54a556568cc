import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { seg } from './api-client.ts';
import { CliError, ExitCode, printJson, printLine, readAll, type CliIo } from './io.ts';
import { apiClient, collect, instant, withApiOptions } from './options.ts';

/** `POST /api/v1/app/{app}/msg`'s answer (Svix `MessageOut`). */
interface MessageOut {
  readonly id: string;
  readonly eventType: string;
  readonly eventId: string | null;
  readonly timestamp: string;
  readonly deliverAt: string | null;
  readonly channels: string[] | null;
}

interface PublishOptions {
  readonly file?: string;
  readonly idempotencyKey?: string;
  readonly deliverAt?: string;
  readonly channel?: string[];
  readonly tag?: string[];
  readonly eventId?: string;
  readonly json?: boolean;
}

/**
 * The payload's text: the argument, else `--file` (`-` = stdin), else stdin when it is not a terminal.
 * @throws CliError usage when there is none, or it is not a JSON object
 */
async function payloadText(io: CliIo, argument: string | undefined, file: string | undefined): Promise<string> {
  let text: string;
  if (argument !== undefined && file !== undefined)
    throw new CliError(ExitCode.usage, 'give the payload as an argument or with --file, not both');
  if (argument !== undefined) text = argument;
  else if (file !== undefined && file !== '-') {
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CliError(
        ExitCode.usage,
        `--file: cannot read ${file} (${(error as { code?: string }).code ?? String(error)})`,
      );
    }
  } else if (file === '-' || io.stdin.isTTY !== true) text = (await readAll(io.stdin)).toString('utf8');
  else throw new CliError(ExitCode.usage, 'no payload: give it as an argument, with --file, or on stdin');
  // A byte-order mark is not part of JSON text (RFC 8259 §8.1).
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(ExitCode.usage, `the payload is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new CliError(ExitCode.usage, 'the payload must be a JSON object');
  return text.trim();
}

/**
 * The request body with the payload's own text in place: its key order, spacing and large integers reach the
 * receivers exactly as written (the API stores and delivers the payload's bytes).
 */
export function publishBody(
  eventType: string,
  payload: string,
  o: Omit<PublishOptions, 'file' | 'idempotencyKey' | 'json'>,
): string {
  const fields: string[] = [`"eventType":${JSON.stringify(eventType)}`];
  if (o.eventId !== undefined) fields.push(`"eventId":${JSON.stringify(o.eventId)}`);
  if (o.channel !== undefined) fields.push(`"channels":${JSON.stringify(o.channel)}`);
  if (o.tag !== undefined) fields.push(`"tags":${JSON.stringify(o.tag)}`);
  if (o.deliverAt !== undefined) fields.push(`"deliverAt":${JSON.stringify(o.deliverAt)}`);
  fields.push(`"payload":${payload}`);
  return `{${fields.join(',')}}`;
}

/** `tidings publish <app> <event-type> [payload]`. */
export function publishCommand(io: CliIo): Command {
  return withApiOptions(
    new Command('publish')
      .description('publish a message: its payload from the argument, --file, or stdin; delivered as written')
      .argument('<app>', 'application id or uid')
      .argument('<event-type>', 'event type name')
      .argument('[payload]', 'the payload, a JSON object (else --file or stdin)')
      .option('-f, --file <path>', 'read the payload from a file (- = stdin)')
      .option('--idempotency-key <key>', 'Idempotency-Key: the same key and body again answers the same message')
      .option(
        '--deliver-at <instant>',
        'first attempt at this instant (RFC 3339, or a duration from now: 10m)',
        instant(io, 'ahead'),
      )
      .option('--channel <name>', 'a channel (repeat for several)', collect)
      .option('--tag <name>', 'a tag (repeat for several)', collect)
      .option('--event-id <id>', 'your id of the event (a second message with it is refused, 409)'),
  ).action(async (app: string, eventType: string, payloadArg: string | undefined, o: PublishOptions) => {
    const payload = await payloadText(io, payloadArg, o.file);
    const api = apiClient(io, o);
    const headers: Record<string, string> =
      o.idempotencyKey === undefined ? {} : { 'idempotency-key': o.idempotencyKey };
    const answer = await api.raw('POST', `/api/v1/app/${seg(app)}/msg`, {
      body: publishBody(eventType, payload, o),
      headers,
    });
    const message = JSON.parse(answer.text) as MessageOut;
    const replayed = answer.headers.get('idempotent-replayed') === 'true';
    if (o.json === true) printJson(io, { ...message, idempotentReplayed: replayed });
    else {
      const when = message.deliverAt === null ? '' : `, first attempt at ${message.deliverAt}`;
      printLine(
        io,
        `${message.id}  ${message.eventType}  published ${message.timestamp}${when}` +
          (replayed ? ' (idempotent replay: the earlier answer)' : ''),
      );
    }
  });
}
