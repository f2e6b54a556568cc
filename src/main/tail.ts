/**
 * `tidings tail`: a live view of delivery attempts in the terminal, read through the HTTP API (never the
 * database), so it works against any deployment with a credential: an operator token, or an application
 * key for its own application.
 */
import type { AttemptOut } from '../cli/messages.ts';

/** Outcome filter: Svix attempt status 0 (success) or 2 (fail). */
export type TailOutcome = 'success' | 'fail';

/** Options of {@link runTail}. */
export interface TailOptions {
  /** Base URL of the Tidings API, e.g. `http://127.0.0.1:8071`. */
  readonly baseUrl: string;
  /** Bearer token (from TIDINGS_TOKEN: a token on the command line would show in the process list). */
  readonly token: string;
  /** Application id or uid. */
  readonly app: string;
  /** Endpoint id or uid; absent = every endpoint of the application (re-listed on every poll). */
  readonly endpoint?: string | undefined;
  readonly outcome?: TailOutcome | undefined;
  /** Time between polls, ms. */
  readonly intervalMs: number;
  /** Attempts shown from before the start, per endpoint (newest ones). */
  readonly backlog: number;
  /** Receives each line. */
  readonly out: (line: string) => void;
  /** Stops the loop. */
  readonly signal: AbortSignal;
}

/** Page size of each attempts read (the Svix maximum). */
const PAGE = 250;

/**
 * One attempt as a line: time, outcome, HTTP status, duration, attempt number, trigger, endpoint, message, attempt id.
 */
export function formatAttempt(a: AttemptOut): string {
  const outcome = a.status === 0 ? 'success' : a.status === 2 ? 'fail' : `status=${a.status}`;
  return [
    a.timestamp,
    outcome.padEnd(7),
    String(a.responseStatusCode || '-').padStart(3),
    `${a.responseDurationMs}ms`.padStart(7),
    `#${a.attemptNumber}`,
    a.triggerType === 1 ? 'manual' : 'scheduled',
    a.endpointId,
    a.msgId,
    a.id,
  ].join('  ');
}

/**
 * Polls the attempts of the application's endpoints every `intervalMs` and writes each attempt once,
 * oldest first; the first read of an endpoint shows its last `backlog` attempts.
 * @throws Error when the API refuses the credential or the application (the message names the status and code)
 */
export async function runTail(o: TailOptions): Promise<void> {
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(new URL(path, o.baseUrl), {
      headers: { authorization: `Bearer ${o.token}` },
      signal: o.signal,
    });
    if (!res.ok) {
      const body = (await res.json().catch(() => ({}))) as { code?: string; detail?: unknown };
      throw new Error(
        (
          `GET ${path}: ${res.status} ${body.code ?? ''} ` +
          `${typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail ?? '')}`
        ).trim(),
      );
    }
    return (await res.json()) as T;
  };
  const app = encodeURIComponent(o.app);
  const seen = new Map<string, Set<string>>();
  const status = o.outcome === undefined ? '' : `&status=${o.outcome === 'success' ? 0 : 2}`;
  while (!o.signal.aborted) {
    const endpoints =
      o.endpoint !== undefined
        ? [o.endpoint]
        : (await get<{ data: { id: string }[] }>(`/api/v1/app/${app}/endpoint?limit=${PAGE}`)).data.map((e) => e.id);
    const fresh: AttemptOut[] = [];
    for (const ep of endpoints) {
      const page = await get<{ data: AttemptOut[] }>(
        `/api/v1/app/${app}/attempt/endpoint/${encodeURIComponent(ep)}?limit=${PAGE}&with_content=false${status}`,
      );
      const known = seen.get(ep);
      // The first read of an endpoint shows its newest `backlog` attempts (the page is newest first).
      fresh.push(...(known === undefined ? page.data.slice(0, o.backlog) : page.data.filter((a) => !known.has(a.id))));
      seen.set(ep, new Set([...(known ?? []), ...page.data.map((a) => a.id)]));
    }
    fresh.sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id));
    for (const a of fresh) o.out(formatAttempt(a));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, o.intervalMs);
      o.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
