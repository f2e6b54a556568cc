import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';

const nowMs = (): number => performance.timeOrigin + performance.now();

/**
 * A closed loop: `lanes` lanes each make call after call (`call(i)` with i = 0, 1, …) until `count` calls
 * were started or `deadlineMs` (epoch ms) passed. Resolves when every lane is done.
 */
export async function closedLoop(
  count: number,
  lanes: number,
  deadlineMs: number,
  call: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count && nowMs() < deadlineMs) await call(next++);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, count) }, lane));
}

/**
 * An open loop: `rate` calls per second for `durationMs` (call i is due at start + i/rate s), at most
 * `inFlight` at once, until `deadlineMs` (epoch ms); calls still outstanding are awaited (each is bounded by
 * its own timeouts), so every answer is counted and none loads the system during the next phase.
 * @returns calls started more than 5 ms after they were due (`late`) and the most in flight at once
 */
export async function pacedLoop(
  rate: number,
  durationMs: number,
  inFlight: number,
  deadlineMs: number,
  call: (i: number) => Promise<void>,
): Promise<{ late: number; maxInFlight: number }> {
  const total = Math.round((rate * durationMs) / 1000);
  const running = new Set<Promise<void>>();
  const startedAt = nowMs();
  let i = 0;
  let late = 0;
  let maxInFlight = 0;
  while (i < total && nowMs() < deadlineMs) {
    const due = startedAt + (i * 1000) / rate;
    const now = nowMs();
    if (now < due) {
      await new Promise((r) => setTimeout(r, Math.max(0, Math.floor(due - now))));
      continue;
    }
    if (running.size >= inFlight) {
      await Promise.race(running);
      continue;
    }
    if (now - due > 5) late += 1;
    const p = call(i++);
    running.add(p);
    if (running.size > maxInFlight) maxInFlight = running.size;
    void p.finally(() => running.delete(p));
  }
  await Promise.all(running);
  return { late, maxInFlight };
}

/** One accepted publish: the message id and when its 2xx arrived (Unix ms on this machine's clock). */
export interface Ack {
  readonly id: string;
  readonly sentAt: number;
  readonly ackAt: number;
}

/** What a publishing run did. Instants are Unix ms. */
export interface PublishRun {
  readonly acks: readonly Ack[];
  readonly failed: number;
  readonly firstError: string | null;
  readonly startedAt: number;
  /** The last 2xx. */
  readonly endedAt: number;
  /** Paced mode: sends that left more than 5 ms after their slot. */
  readonly late: number;
  /** Most calls in flight at once. */
  readonly maxInFlight: number;
}

/**
 * The load generator's client of the Tidings HTTP API (Svix shapes, Bearer token), on one undici `Pool`
 * with as many connections as calls in flight.
 */
export interface ApiClient {
  createApplication(name: string, uid: string): Promise<string>;
  /** Creates an endpoint; `filterTypes` routes only those event types to it. Returns its id. */
  createEndpoint(app: string, url: string, filterTypes?: readonly string[]): Promise<string>;
  /** Publishes `count` messages, one per call, `inFlight` calls at a time; `eventType(i)` names each. */
  publishBurst(
    app: string,
    count: number,
    inFlight: number,
    eventType: (i: number) => string,
    timeoutMs: number,
  ): Promise<PublishRun>;
  /**
   * Publishes at `rate` per second for `durationMs` (open loop, at most `inFlight` calls outstanding); stops
   * sending at `timeoutMs` and then waits for the calls still outstanding.
   */
  publishPaced(
    app: string,
    rate: number,
    durationMs: number,
    inFlight: number,
    eventType: string,
    timeoutMs: number,
  ): Promise<PublishRun>;
  close(): Promise<void>;
}

/**
 * A payload of about `bytes` bytes: a small JSON object padded with a string field. Every message of a run
 * carries the same payload apart from its sequence number.
 */
export function benchPayload(bytes: number, seq: number): string {
  const head = `{"type":"bench","seq":${seq},"pad":"`;
  const tail = '"}';
  return head + 'x'.repeat(Math.max(0, bytes - head.length - tail.length)) + tail;
}

/**
 * Makes the API client for `baseUrl` with `connections` sockets. With `idempotencyKeys`, every publish carries
 * an `idempotency-key: auto_<uuid>` header, as the svix client adds to every POST.
 */
export function createApiClient(
  baseUrl: string,
  token: string,
  connections: number,
  payloadBytes: number,
  idempotencyKeys = false,
): ApiClient {
  const pool = new Pool(baseUrl, { connections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const auth = `Bearer ${token}`;

  const post = async (
    path: string,
    body: string,
    keyed = false,
  ): Promise<{ status: number; json: unknown; at: number }> => {
    const headers: Record<string, string> = { authorization: auth, 'content-type': 'application/json' };
    if (keyed) headers['idempotency-key'] = `auto_${randomUUID()}`;
    const res = await pool.request({ path, method: 'POST', headers, body });
    const at = nowMs();
    const text = await res.body.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.statusCode, json, at };
  };

  const idOf = (r: { status: number; json: unknown }, what: string): string => {
    if (r.status < 200 || r.status >= 300 || typeof r.json !== 'object' || r.json === null || !('id' in r.json)) {
      throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    }
    return String((r.json as { id: unknown }).id);
  };

  const publishOne = async (
    app: string,
    eventType: string,
    seq: number,
    acks: Ack[],
    fail: (e: string) => void,
  ): Promise<void> => {
    const sentAt = nowMs();
    try {
      const r = await post(
        `/api/v1/app/${encodeURIComponent(app)}/msg?with_content=false`,
        `{"eventType":"${eventType}","payload":${benchPayload(payloadBytes, seq)}}`,
        idempotencyKeys,
      );
      if (r.status >= 200 && r.status < 300)
        acks.push({ id: String((r.json as { id: unknown }).id), sentAt, ackAt: r.at });
      else fail(`HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    } catch (error) {
      fail((error as Error).message);
    }
  };

  return {
    async createApplication(name, uid) {
      return idOf(await post('/api/v1/app', JSON.stringify({ name, uid })), 'create application');
    },
    async createEndpoint(app, url, filterTypes) {
      const body = filterTypes === undefined ? { url } : { url, filterTypes };
      return idOf(
        await post(`/api/v1/app/${encodeURIComponent(app)}/endpoint`, JSON.stringify(body)),
        'create endpoint',
      );
    },

    async publishBurst(app, count, inFlight, eventType, timeoutMs) {
      const acks: Ack[] = [];
      let failed = 0;
      let firstError: string | null = null;
      const fail = (e: string): void => {
        failed += 1;
        firstError ??= e;
      };
      const startedAt = nowMs();
      const deadline = startedAt + timeoutMs;
      await closedLoop(count, inFlight, deadline, (i) => publishOne(app, eventType(i), i, acks, fail));
      const endedAt = acks.reduce((m, a) => Math.max(m, a.ackAt), startedAt);
      return { acks, failed, firstError, startedAt, endedAt, late: 0, maxInFlight: Math.min(inFlight, count) };
    },

    async publishPaced(app, rate, durationMs, inFlight, eventType, timeoutMs) {
      const acks: Ack[] = [];
      let failed = 0;
      let firstError: string | null = null;
      const fail = (e: string): void => {
        failed += 1;
        firstError ??= e;
      };
      const startedAt = nowMs();
      // Outstanding calls are bounded by the pool's 60 s timeouts.
      const { late, maxInFlight } = await pacedLoop(rate, durationMs, inFlight, startedAt + timeoutMs, (i) =>
        publishOne(app, eventType, i, acks, fail),
      );
      const endedAt = acks.reduce((m, a) => Math.max(m, a.ackAt), startedAt);
      return { acks, failed, firstError, startedAt, endedAt, late, maxInFlight };
    },

    close: () => pool.close(),
  };
}
