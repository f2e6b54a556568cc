import { signal } from '@preact/signals';

/**
 * The one way the web app talks to Tidings: the public HTTP API on this origin, with the Bearer token held
 * in memory only (this signal), never in a cookie, the URL, storage or a log (ADR 0012).
 */
export const token = signal<string | null>(null);

/** An API refusal: the HTTP status and the error body's `code` and `detail` (Svix `HttpErrorOut`). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  constructor(status: number, code: string, detail: string) {
    super(`${code}: ${detail}`);
    this.status = status;
    this.code = code;
    this.detail = detail;
  }
}

/** A Svix list page. */
export interface Page<T> {
  readonly data: T[];
  readonly iterator: string | null;
  readonly prevIterator: string | null;
  readonly done: boolean;
}

/** A 422 `detail` (a list of `{loc, msg}`) as one line. */
function detailText(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail))
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join('.')}: ${d.msg ?? ''}`)
      .join('; ');
  return JSON.stringify(detail);
}

/** A request body given as JSON text, sent byte for byte (a payload keeps its key order and numbers). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** Sends one request; answers the raw response text (null for 204). @throws ApiError on a non-2xx or no answer. */
export async function apiText(method: string, path: string, body?: unknown): Promise<string | null> {
  const headers: Record<string, string> = {};
  if (token.value !== null) headers.authorization = `Bearer ${token.value}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? null : body instanceof RawJson ? body.text : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError(0, 'network_error', `Tidings did not answer (${(error as Error).message})`);
  }
  if (response.status === 204) return null;
  const text = await response.text();
  if (!response.ok) {
    let code = `http_${response.status}`;
    let detail = text.slice(0, 300);
    try {
      const parsed = JSON.parse(text) as { code?: string; detail?: unknown };
      code = parsed.code ?? code;
      detail = detailText(parsed.detail);
    } catch {
      /* not JSON: shown as text */
    }
    throw new ApiError(response.status, code, detail);
  }
  return text;
}

/** {@link apiText}, parsed as JSON. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const text = await apiText(method, path, body);
  return (text === null ? null : JSON.parse(text)) as T;
}

/** GET shorthand. */
export const get = <T>(path: string): Promise<T> => api<T>('GET', path);

/** A path segment, percent-encoded. */
export const seg = (s: string): string => encodeURIComponent(s);

/** A query string from the defined, non-empty values (arrays repeat the key). */
export function query(params: Record<string, string | number | boolean | string[] | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((item) => q.append(k, item));
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/**
 * The exact bytes of `payload` in a message body as the API sent it: the message JSON ends with
 * `"payload":<the stored bytes>}` and the fields before it are JSON strings, in which `"payload":` cannot
 * occur unescaped.
 */
export function payloadBytes(messageJson: string): string {
  const at = messageJson.indexOf('"payload":');
  return at === -1 ? '' : messageJson.slice(at + '"payload":'.length, messageJson.lastIndexOf('}'));
}
