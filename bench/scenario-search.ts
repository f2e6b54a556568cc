import pg from 'pg';
import { n0, type BenchContext } from './context.ts';
import { fillSearchLog, type SearchLog } from './search-fill.ts';
import { quantile, round } from './stats.ts';
import { dropDatabase, startCluster } from './tidings.ts';

/** The delivery log spans the day before the fill; each search reads a window of {@link WINDOW_MS}. */
const SPAN_MS = 86_400_000;
const WINDOW_MS = 3_600_000;
/** Items per page, as the console asks. */
const LIMIT = 50;

/** One timed request: its path for a window (after, before as RFC 3339), given what the fill made. */
interface SearchCase {
  readonly name: string;
  readonly path: (log: SearchLog, after: string, before: string) => string;
}

/**
 * The documented searches (docs/reference/api.md, "Search"), each over a one-hour window, and the Svix list routes
 * beside them (no window: the newest page).
 */
const CASES: readonly SearchCase[] = [
  { name: 'search/msg, window only', path: (l, a, b) => `/app/${l.appId}/search/msg?after=${a}&before=${b}` },
  {
    name: 'search/msg, event_types (1 in 10)',
    path: (l, a, b) => `/app/${l.appId}/search/msg?after=${a}&before=${b}&event_types=order.3`,
  },
  {
    name: 'search/msg, channel (1 in 2)',
    path: (l, a, b) => `/app/${l.appId}/search/msg?after=${a}&before=${b}&channel=eu`,
  },
  { name: 'search/msg, tag (1 in 7)', path: (l, a, b) => `/app/${l.appId}/search/msg?after=${a}&before=${b}&tag=vip` },
  {
    name: 'search/msg, payload field (1 in 1000)',
    path: (l, a, b) =>
      `/app/${l.appId}/search/msg?after=${a}&before=${b}&payload_field=customer.id&payload_value=cus_42`,
  },
  {
    name: 'search/msg, with_content',
    path: (l, a, b) => `/app/${l.appId}/search/msg?after=${a}&before=${b}&with_content=true`,
  },
  {
    name: 'search/delivery, every endpoint',
    path: (l, a, b) => `/app/${l.appId}/search/delivery?after=${a}&before=${b}`,
  },
  {
    name: 'search/delivery, endpoint_id',
    path: (l, a, b) => `/app/${l.appId}/search/delivery?after=${a}&before=${b}&endpoint_id=${l.endpointA}`,
  },
  {
    name: 'search/delivery, endpoint_id + delivery_state=dead (1 in 100)',
    path: (l, a, b) =>
      `/app/${l.appId}/search/delivery?after=${a}&before=${b}&endpoint_id=${l.endpointA}&delivery_state=dead`,
  },
  {
    name: 'search/delivery, status_code_class=500, every endpoint (1 in 200)',
    path: (l, a, b) => `/app/${l.appId}/search/delivery?after=${a}&before=${b}&status_code_class=500`,
  },
  {
    name: 'endpoint/{ep}/undelivered (3 in 100)',
    path: (l, a, b) => `/app/${l.appId}/endpoint/${l.endpointA}/undelivered?after=${a}&before=${b}`,
  },
  {
    name: 'search/attempt, endpoint_id',
    path: (l, a, b) => `/app/${l.appId}/search/attempt?after=${a}&before=${b}&endpoint_id=${l.endpointA}`,
  },
  {
    name: 'search/attempt, endpoint_id + status=2 (fail, 3 in 100)',
    path: (l, a, b) => `/app/${l.appId}/search/attempt?after=${a}&before=${b}&endpoint_id=${l.endpointA}&status=2`,
  },
  { name: 'Svix list msg, newest page', path: (l) => `/app/${l.appId}/msg?with_content=false` },
  {
    name: 'Svix list msg, event_types (1 in 10), newest page',
    path: (l) => `/app/${l.appId}/msg?with_content=false&event_types=order.3`,
  },
  {
    name: 'Svix list attempt/endpoint, newest page',
    path: (l) => `/app/${l.appId}/attempt/endpoint/${l.endpointA}?with_content=false`,
  },
];

/** A one-hour window at a random place in the filled day (`random` in [0, 1)). */
function windowAt(log: SearchLog, random: number): { after: string; before: string } {
  const from = log.from.getTime() + random * (log.to.getTime() - log.from.getTime() - WINDOW_MS);
  return { after: new Date(from).toISOString(), before: new Date(from + WINDOW_MS).toISOString() };
}

/** GET `path` under /api/v1 with the token; the milliseconds until the whole body was read, and the body. */
async function timed(url: string, token: string, path: string): Promise<{ ms: number; body: { iterator?: string } }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1${path}${path.includes('?') ? '&' : '?'}limit=${LIMIT}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
  return { ms, body: JSON.parse(text) as { iterator?: string } };
}

/**
 * search: the search and list routes' latency at `searchMessages` messages in one application (server only): the
 * log of ./search-fill.ts, then one API process (no dispatcher) on it, and for each search `searchRequests` GETs one
 * after another, each over a one-hour window at a random place in the day (the page after it too, through its
 * iterator, for the plain message search); p50 and p99 of each, in ms, from request to the last byte of the answer.
 */
export async function scenarioSearch(ctx: BenchContext): Promise<void> {
  if (!ctx.options.engines.includes('server')) return;
  const { searchMessages: messages, searchRequests: requests } = ctx.options.sizes;
  const base = { ...ctx.base, dbName: `${ctx.base.dbName}_search` };
  const cluster = await startCluster(base, { engine: 'server', dispatchers: 0, env: {}, tag: 'search' });
  try {
    const client = new pg.Client({ connectionString: cluster.databaseUrl! });
    await client.connect();
    let log: SearchLog;
    const t0 = performance.now();
    try {
      const fill = { messages, spanMs: SPAN_MS, ref: new Date(), payloadBytes: ctx.options.payloadBytes };
      log = await fillSearchLog(client, fill, ctx.log);
    } finally {
      await client.end();
    }
    const fillS = (performance.now() - t0) / 1000;
    ctx.log(`  search: ${n0(messages)} messages filled in ${round(fillS, 1)} s: ${JSON.stringify(log.rows)}`);
    ctx.details.push({ scenario: 'search', messages, fillS: round(fillS, 1), rows: log.rows });
    const label = `@${n0(messages)} messages`;
    for (let run = 1; run <= ctx.options.runs; run += 1) {
      for (const c of CASES) {
        const ms: number[] = [];
        const nextMs: number[] = [];
        const warm = windowAt(log, 0.5);
        await timed(cluster.apiUrl, base.apiToken, c.path(log, warm.after, warm.before)); // plans and pages
        for (let i = 0; i < requests; i += 1) {
          const w = windowAt(log, Math.random());
          const path = c.path(log, w.after, w.before);
          const first = await timed(cluster.apiUrl, base.apiToken, path);
          ms.push(first.ms);
          if (c === CASES[0] && first.body.iterator !== undefined)
            nextMs.push((await timed(cluster.apiUrl, base.apiToken, `${path}&iterator=${first.body.iterator}`)).ms);
        }
        const figures: [string, number[]][] = [[c.name, ms]];
        if (nextMs.length > 0) figures.push([`${c.name}, next page by iterator`, nextMs]);
        for (const [name, values] of figures) {
          for (const [q, tag] of [
            [0.5, 'p50'],
            [0.99, 'p99'],
          ] as const) {
            const def = { scenario: 'search', engine: 'server', name: `${name} ${tag} ${label}`, unit: 'ms' };
            ctx.book.add({ ...def, better: 'lower' }, quantile(values, q));
          }
          ctx.details.push({ scenario: 'search', run, search: name, requests: values.length, ms: values.map(round) });
          const p = (q: number) => round(quantile(values, q), 1);
          ctx.log(`  search run ${run} ${name}: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${p(1)} ms`);
        }
      }
    }
  } finally {
    await cluster.stop();
    await dropDatabase(base.serverUrl, base.dbName);
  }
}
