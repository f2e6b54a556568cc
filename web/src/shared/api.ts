import { signal } from '@preact/signals';
import createClient from 'openapi-fetch';
import type { paths } from './api-types.ts';

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

/** A query string from the defined, non-empty values (arrays repeat the key). */
export function query(params: Readonly<Record<string, unknown>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((item) => q.append(k, String(item)));
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/**
 * The typed client of the API (openapi-fetch over the types generated from its OpenAPI document, api-types.ts):
 * paths, parameters, bodies and answers are checked against the route schemas. Calls go through {@link ok}.
 */
export const client = createClient<paths>({
  credentials: 'omit',
  cache: 'no-store',
  querySerializer: (params) => query(params).slice(1),
});
client.use({
  onRequest({ request }) {
    if (token.value !== null) request.headers.set('authorization', `Bearer ${token.value}`);
    return request;
  },
});

/** An API refusal from its status and body (JSON parsed by openapi-fetch, or the text it could not parse). */
function refusal(status: number, body: unknown): ApiError {
  if (typeof body === 'object' && body !== null) {
    const parsed = body as { code?: string; detail?: unknown };
    return new ApiError(status, parsed.code ?? `http_${status}`, detailText(parsed.detail));
  }
  return new ApiError(status, `http_${status}`, (typeof body === 'string' ? body : '').slice(0, 300));
}

/**
 * The data of a typed call (undefined for 204).
 * @throws ApiError on a non-2xx answer (`code` and `detail` of its body) or none (`network_error`)
 */
export async function ok<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  let answer: { data?: D; error?: unknown; response: Response };
  try {
    answer = await call;
  } catch (error) {
    throw new ApiError(0, 'network_error', `Tidings did not answer (${(error as Error).message})`);
  }
  if (!answer.response.ok) throw refusal(answer.response.status, answer.error);
  return answer.data as D;
}

/** Route segments are encoded by the router's helper; re-exported for the pages that import it from here. */
export { seg } from './route-match.ts';

/**
 * The exact bytes of `payload` in a message body as the API sent it: the message JSON ends with
 * `"payload":<the stored bytes>}` and the fields before it are JSON strings, in which `"payload":` cannot
 * occur unescaped.
 */
export function payloadBytes(messageJson: string): string {
  const at = messageJson.indexOf('"payload":');
  return at === -1 ? '' : messageJson.slice(at + '"payload":'.length, messageJson.lastIndexOf('}'));
}
