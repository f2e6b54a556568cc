import { Command } from 'commander';
import { createScanner } from 'jsonc-parser';
import { signatureHeadersFor } from '../domain/signing.ts';
import { MAX_PAGE, seg, type ApiClient } from './api-client.ts';
import { CliError, ExitCode, note, pause, printJson, printLine, type CliIo } from './io.ts';
import { apiClient, duration, wholeNumber, withApiOptions } from './options.ts';
import { secretKey } from './signature-check.ts';

/**
 * `tidings listen <app> <endpoint> --forward-to <url>`: the messages of one endpoint, from now on, POSTed to
 * a URL on the developer's machine — each message's payload as the exact bytes the API stored, signed with
 * the endpoint's secret as Tidings signs (so the local receiver's verification runs as in production). Only
 * outbound requests: the API is polled (`GET …/endpoint/{ep}/msg`, ascending from a cursor), nothing is
 * exposed. It stops on Ctrl-C, after `--max-messages`, or after `--for`.
 */

/**
 * How far behind the cursor each poll reads again, ms: a message whose publish committed after a later one
 * (several API processes, group commit) carries an earlier time, and is still seen if it committed within this.
 */
export const LATE_COMMIT_WINDOW_MS = 5_000;
/** Pages one poll reads at most (each up to {@link MAX_PAGE} messages); the rest waits for the next poll. */
export const MAX_PAGES_PER_POLL = 8;
/** Characters of the local answer shown on a line. */
const ANSWER_PREFIX = 120;

/** One message of the endpoint, with its payload's exact text. */
export interface ListedMessage {
  readonly id: string;
  readonly eventType: string;
  readonly timestamp: string;
  /** The payload as it appears in the API's answer (the stored bytes, verbatim). */
  readonly payloadText: string;
}

/** jsonc-parser's token kinds used here (its `SyntaxKind` is a const enum this build cannot import). */
const TOKEN = { openBrace: 1, closeBrace: 2, openBracket: 3, closeBracket: 4, comma: 5, colon: 6, eof: 17 } as const;

/**
 * The text span of each `data[i].payload` of a list answer (strict JSON), null for an item without one.
 * Iterative, at any depth: a payload stored before TIDINGS_MAX_JSON_DEPTH existed (or with it raised) may be
 * nested deeper than a recursive parser reaches. Of a key given twice, the last counts.
 */
function payloadSpans(text: string): (readonly [number, number] | null)[] {
  const scanner = createScanner(text, true);
  const objects: boolean[] = []; // per open container, whether it is an object
  const spans: (readonly [number, number] | null)[] = [];
  let expectKey = false;
  let rootKey: string | null = null;
  let itemKey: string | null = null;
  let inData = false;
  let payloadAt = -1;
  for (let t: number = scanner.scan(); t !== TOKEN.eof; t = scanner.scan()) {
    const depth = objects.length;
    const atPayload = depth === 3 && inData && itemKey === 'payload' && payloadAt < 0;
    if (t === TOKEN.openBrace || t === TOKEN.openBracket) {
      if (depth === 1 && rootKey === 'data' && t === TOKEN.openBracket) inData = true;
      if (depth === 2 && inData && t === TOKEN.openBrace) {
        spans.push(null);
        itemKey = null;
      }
      if (atPayload) payloadAt = scanner.getTokenOffset();
      objects.push(t === TOKEN.openBrace);
      expectKey = t === TOKEN.openBrace;
    } else if (t === TOKEN.closeBrace || t === TOKEN.closeBracket) {
      objects.pop();
      if (objects.length === 3 && payloadAt >= 0) {
        spans[spans.length - 1] = [payloadAt, scanner.getTokenOffset() + 1];
        payloadAt = -1;
      }
      if (objects.length === 1) inData = false;
    } else if (t === TOKEN.comma) {
      expectKey = objects.at(-1) === true;
    } else if (t !== TOKEN.colon && expectKey) {
      if (depth === 1) rootKey = scanner.getTokenValue();
      if (depth === 3) itemKey = scanner.getTokenValue();
      expectKey = false;
    } else if (t !== TOKEN.colon && atPayload) {
      spans[spans.length - 1] = [scanner.getTokenOffset(), scanner.getTokenOffset() + scanner.getTokenLength()];
    }
  }
  return spans;
}

/** A list answer's item as JSON.parse reads it (the payload's text comes from {@link payloadSpans}). */
interface PageItem {
  readonly id?: unknown;
  readonly eventType?: unknown;
  readonly timestamp?: unknown;
}

/**
 * The messages of one page of `…/endpoint/{ep}/msg` with each payload's text span (JSON.parse would lose
 * integers beyond 2^53 and the publisher's spacing).
 */
export function messagesOfPage(text: string): { messages: ListedMessage[]; iterator: string | null; done: boolean } {
  let page: { readonly data?: unknown; readonly iterator?: unknown; readonly done?: unknown };
  try {
    page = JSON.parse(text) as typeof page;
  } catch {
    throw new Error('the API answered a list without data');
  }
  if (typeof page !== 'object' || page === null || !Array.isArray(page.data)) {
    throw new Error('the API answered a list without data');
  }
  const spans = payloadSpans(text);
  const messages = (page.data as PageItem[]).map((item, i) => {
    const span = spans[i] ?? null;
    return {
      id: String(item.id),
      eventType: String(item.eventType),
      timestamp: String(item.timestamp),
      payloadText: span === null ? '{}' : text.slice(span[0], span[1]),
    };
  });
  return {
    messages,
    iterator: typeof page.iterator === 'string' ? page.iterator : null,
    done: page.done === true,
  };
}

/** What forwarding one message gave. */
export interface Forwarded {
  readonly msgId: string;
  readonly eventType: string;
  readonly timestamp: string;
  readonly status: number | null;
  readonly durationMs: number;
  readonly answer: string;
  readonly error: string | null;
}

interface ListenOptions {
  readonly forwardTo: string;
  readonly interval?: number;
  readonly maxMessages?: number;
  readonly for?: number;
  readonly forwardTimeout?: number;
  readonly url?: string;
  readonly token?: string;
  readonly timeout?: string;
  readonly json?: boolean;
}

/** POSTs one message to the local URL, signed; never throws (a refused connection is a result). */
async function forward(io: CliIo, key: Buffer, target: URL, m: ListedMessage, timeoutMs: number): Promise<Forwarded> {
  // A raw message (published with transformationsParams.rawPayload) reads back as a JSON string: its text is the body.
  const raw = m.payloadText.startsWith('"');
  const body = Buffer.from(raw ? (JSON.parse(m.payloadText) as string) : m.payloadText, 'utf8');
  const signed = signatureHeadersFor('both', [key], m.id, Math.floor(io.now() / 1000), body);
  const started = performance.now();
  const base = { msgId: m.id, eventType: m.eventType, timestamp: m.timestamp };
  try {
    const res = await fetch(target, {
      method: 'POST',
      body,
      redirect: 'manual',
      signal: AbortSignal.any([io.signal, AbortSignal.timeout(timeoutMs)]),
      headers: { 'content-type': raw ? 'text/plain' : 'application/json', 'user-agent': 'tidings-listen', ...signed },
    });
    const answer = (await res.text()).slice(0, ANSWER_PREFIX).replace(/\s+/g, ' ');
    return { ...base, status: res.status, durationMs: Math.round(performance.now() - started), answer, error: null };
  } catch (error) {
    const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    const why =
      e.name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : (e.cause?.code ?? e.cause?.message ?? e.message ?? String(error));
    return { ...base, status: null, durationMs: Math.round(performance.now() - started), answer: '', error: why };
  }
}

/** One forwarded message as a line: when, message, event type, and the local answer. */
export function forwardedLine(f: Forwarded): string {
  const outcome =
    f.error !== null ? `error: ${f.error}` : `${f.status} (${f.durationMs} ms)${f.answer === '' ? '' : ` ${f.answer}`}`;
  return `${f.timestamp}  ${f.msgId}  ${f.eventType}  -> ${outcome}`;
}

/** Reads the endpoint's messages after `afterMs` (ascending), at most {@link MAX_PAGES_PER_POLL} pages. */
async function poll(
  api: ApiClient,
  path: string,
  afterMs: number | null,
  withContent: boolean,
): Promise<ListedMessage[]> {
  const out: ListedMessage[] = [];
  let iterator: string | null = null;
  for (let page = 0; page < MAX_PAGES_PER_POLL; page += 1) {
    const answer = await api.raw('GET', path, {
      query: {
        order: 'ascending',
        limit: MAX_PAGE,
        with_content: withContent,
        iterator,
        after: afterMs === null ? undefined : new Date(afterMs).toISOString(),
      },
    });
    const read = messagesOfPage(answer.text);
    out.push(...read.messages);
    if (read.done || read.iterator === null || read.messages.length === 0) break;
    iterator = read.iterator;
  }
  return out;
}

/** Forwards the endpoint's new messages until stopped; returns how many were forwarded. */
export async function runListen(io: CliIo, api: ApiClient, app: string, ep: string, o: ListenOptions): Promise<number> {
  const target = new URL(o.forwardTo);
  const base = `/api/v1/app/${seg(app)}/endpoint/${seg(ep)}`;
  const key = secretKey((await api.get<{ key: string }>(`${base}/secret`)).key);
  const newest = await api.get<{ data: { timestamp: string }[] }>(`${base}/msg`, { limit: 1, with_content: false });
  // The cursor: the newest message's time (the API's clock, never this host's); what is older is not forwarded.
  let cursorMs: number | null = newest.data[0] === undefined ? null : Date.parse(newest.data[0].timestamp);
  const seen = new Map<string, number>();
  if (cursorMs !== null)
    for (const m of await poll(api, `${base}/msg`, cursorMs - LATE_COMMIT_WINDOW_MS, false))
      seen.set(m.id, Date.parse(m.timestamp));
  note(io, `forwarding the messages of ${ep} to ${target.href} (Ctrl-C to stop)`);
  const deadline = o.for === undefined ? Number.POSITIVE_INFINITY : io.now() + o.for;
  const max = o.maxMessages ?? Number.POSITIVE_INFINITY;
  let forwarded = 0;
  while (!io.signal.aborted && io.now() < deadline && forwarded < max) {
    const read = await poll(api, `${base}/msg`, cursorMs === null ? null : cursorMs - LATE_COMMIT_WINDOW_MS, true);
    for (const m of read) {
      if (seen.has(m.id) || forwarded >= max || io.signal.aborted) continue;
      const at = Date.parse(m.timestamp);
      seen.set(m.id, at);
      cursorMs = Math.max(cursorMs ?? at, at);
      const f = await forward(io, key, target, m, o.forwardTimeout ?? 10_000);
      forwarded += 1;
      if (o.json === true) printJson(io, f);
      else printLine(io, forwardedLine(f));
    }
    if (cursorMs !== null) for (const [id, at] of seen) if (at < cursorMs - LATE_COMMIT_WINDOW_MS) seen.delete(id);
    if (forwarded < max) await pause(Math.min(o.interval ?? 1000, Math.max(0, deadline - io.now())), io.signal);
  }
  note(io, `stopped: ${forwarded} message${forwarded === 1 ? '' : 's'} forwarded`);
  return forwarded;
}

/** `tidings listen <app> <endpoint> --forward-to <url>`. */
export function listenCommand(io: CliIo): Command {
  return withApiOptions(
    new Command('listen')
      .description(
        "forward the endpoint's new messages, signed, to a URL on this machine (polls the API; exposes nothing)",
      )
      .argument('<app>', 'application id or uid')
      .argument('<endpoint>', 'endpoint id or uid (a paused one works: Tidings holds its deliveries)')
      .requiredOption('--forward-to <url>', 'where to POST each message, e.g. http://127.0.0.1:3000/webhooks')
      .option('--interval <duration>', 'time between polls of the API (default 1s, at least 100ms)', duration)
      .option('--max-messages <n>', 'stop after forwarding this many', wholeNumber(1))
      .option('--for <duration>', 'stop after this long (e.g. 10m)', duration)
      .option('--forward-timeout <duration>', 'time the local URL may take to answer (default 10s)', duration),
  ).action(async (app: string, ep: string, o: ListenOptions) => {
    if (!URL.canParse(o.forwardTo) || !/^https?:$/.test(new URL(o.forwardTo).protocol))
      throw new CliError(ExitCode.usage, `--forward-to: "${o.forwardTo}" is not an http(s) URL`);
    if (o.interval !== undefined && o.interval < 100)
      throw new CliError(ExitCode.usage, '--interval must be at least 100ms');
    await runListen(io, apiClient(io, o), app, ep, o);
  });
}
