import { CliError, ExitCode, type CliIo } from './io.ts';

/**
 * The operator commands' client of the Tidings HTTP API (docs/reference/api.md): a base URL, a Bearer token,
 * a timeout per request, and every refusal turned into a {@link CliError} with the exit code of its kind and
 * the API's `code` and `detail` in the message. Commands never read the database: they work against any
 * installation a token reaches.
 */

/** Default API address: `tidings serve` on this machine. */
export const DEFAULT_API_URL = 'http://127.0.0.1:8071';
/** Default time one API request may take, ms (`--timeout`). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The largest page the list routes give (Svix's maximum `limit`). */
export const MAX_PAGE = 250;

/** Where the API is and how to reach it. */
export interface ApiTarget {
  readonly url: string;
  readonly token: string;
  readonly timeoutMs: number;
}

/** One page of a list route. */
export interface Page<T> {
  readonly data: T[];
  readonly iterator: string | null;
  readonly done: boolean;
}

/** An answer read as text (for the routes whose payload bytes must survive) and as JSON. */
export interface RawAnswer {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

type Query = Readonly<Record<string, string | number | boolean | readonly string[] | null | undefined>>;

/** The query string of `query`: absent and null values left out, lists repeated (`event_types=a&event_types=b`). */
export function queryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value as readonly string[]) params.append(name, v);
    else params.append(name, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** Maps an HTTP status the API refused with to the exit code of its kind. */
export function exitCodeOfStatus(status: number): ExitCode {
  if (status === 400 || status === 413 || status === 422) return ExitCode.usage;
  if (status === 401 || status === 403 || status === 404 || status === 409 || status === 410) return ExitCode.refused;
  if (status === 408 || status === 429 || status === 503 || status === 504) return ExitCode.unavailable;
  return ExitCode.failure;
}

/** The API's error body as one line: `code: detail`, a 422's `[{loc, msg}]` as `body.field: msg; …`. */
export function describeRefusal(status: number, text: string): string {
  let body: { code?: unknown; detail?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return `${status} ${text.slice(0, 200)}`.trim();
  }
  const detail = Array.isArray(body.detail)
    ? body.detail
        .map(
          (d: { loc?: unknown; msg?: unknown }) => `${Array.isArray(d.loc) ? d.loc.join('.') : ''}: ${String(d.msg)}`,
        )
        .join('; ')
    : typeof body.detail === 'string'
      ? body.detail
      : body.detail === undefined
        ? ''
        : JSON.stringify(body.detail);
  return `${status} ${typeof body.code === 'string' ? body.code : ''}${detail === '' ? '' : `: ${detail}`}`.trim();
}

/** The client. Each request is aborted by the command's stop signal and by its own timeout. */
export class ApiClient {
  readonly target: ApiTarget;
  readonly #signal: AbortSignal;

  constructor(target: ApiTarget, signal: AbortSignal) {
    this.target = target;
    this.#signal = signal;
  }

  /**
   * One request; `body` is sent as is when it is a string (the publish payload's bytes), else as JSON.
   * @throws CliError: unavailable (cannot connect, timeout, 429/503), usage (400/413/422), refused
   *   (401/403/404/409), failure (other statuses)
   */
  async raw(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<RawAnswer> {
    const url = new URL(`${path}${queryString(options.query ?? {})}`, this.target.url);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.target.token}`,
      accept: 'application/json',
      ...options.headers,
    };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.any([this.#signal, AbortSignal.timeout(this.target.timeoutMs)]),
      });
    } catch (error) {
      throw unreachable(this.target, method, url, error);
    }
    const text = await res.text();
    if (res.status >= 400) {
      throw new CliError(
        exitCodeOfStatus(res.status),
        `${method} ${url.pathname}: ${describeRefusal(res.status, text)}`,
      );
    }
    return { status: res.status, text, headers: res.headers };
  }

  /** A request whose answer is JSON (204: `undefined`). @throws as {@link raw} */
  async json<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const answer = await this.raw(method, path, options);
    return (answer.text === '' ? undefined : JSON.parse(answer.text)) as T;
  }

  /** `GET` of JSON. @throws as {@link raw} */
  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.json<T>('GET', path, { query });
  }

  /**
   * Every item of a list route, page after page, until `done` or `max` items (then `truncated`).
   * @throws as {@link raw}
   */
  async all<T>(path: string, query: Query, max: number): Promise<{ items: T[]; truncated: boolean }> {
    const items: T[] = [];
    let iterator: string | null = null;
    for (;;) {
      const page: Page<T> = await this.get<Page<T>>(path, { ...query, limit: MAX_PAGE, iterator });
      items.push(...page.data);
      if (items.length >= max) return { items: items.slice(0, max), truncated: true };
      if (page.done || page.iterator === null || page.data.length === 0) return { items, truncated: false };
      iterator = page.iterator;
    }
  }
}

/** The error of a request that got no answer: the stop signal, the timeout, or the network. */
function unreachable(target: ApiTarget, method: string, url: URL, error: unknown): CliError {
  const e = error as { name?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') {
    return new CliError(
      ExitCode.unavailable,
      `${method} ${url.pathname}: no answer within ${target.timeoutMs} ms (--timeout)`,
      { cause: error },
    );
  }
  if (e.name === 'AbortError')
    return new CliError(ExitCode.unavailable, `${method} ${url.pathname}: stopped`, { cause: error });
  const why = e.cause?.code ?? e.cause?.message ?? String(error);
  return new CliError(
    ExitCode.unavailable,
    `cannot reach the Tidings API at ${target.url} (${why}); set --url or TIDINGS_URL`,
    { cause: error },
  );
}

/** Options every API command takes (commander's parsed values). */
export interface ApiOptions {
  readonly url?: string;
  readonly token?: string;
  readonly timeout?: string;
  readonly json?: boolean;
}

/**
 * The client of a command: `--url` or `TIDINGS_URL` (default {@link DEFAULT_API_URL}), `--token` or
 * `TIDINGS_TOKEN`, `--timeout` in ms.
 * @throws CliError usage when no token is given or the URL or timeout is malformed
 */
export function clientOf(io: CliIo, options: ApiOptions, parseTimeout: (text: string) => number): ApiClient {
  const token = options.token ?? io.env.TIDINGS_TOKEN ?? '';
  if (token === '')
    throw new CliError(ExitCode.usage, 'no API token: set TIDINGS_TOKEN (or --token) to an admin token or an API key');
  const url =
    options.url ??
    (io.env.TIDINGS_URL === undefined || io.env.TIDINGS_URL === '' ? DEFAULT_API_URL : io.env.TIDINGS_URL);
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
    throw new CliError(ExitCode.usage, `--url: "${url}" is not an http(s) URL`);
  const timeoutMs = options.timeout === undefined ? DEFAULT_REQUEST_TIMEOUT_MS : parseTimeout(options.timeout);
  return new ApiClient({ url, token, timeoutMs }, io.signal);
}

/** A path segment (an id, a uid, an event id) escaped for a URL path. */
export const seg = (value: string): string => encodeURIComponent(value);
