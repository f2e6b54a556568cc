/**
 * The raw-HTTP reference, run as a child process (started by raw-http.ts with `process.execPath`): the
 * ceiling every Tidings figure is compared with. undici (an `Agent`, one pool per origin, the same socket
 * cap per origin as the dispatcher) POSTs the benchmark payload to the same receiver, with the same number
 * of requests in flight, and no database. With `sign`, each request carries Standard Webhooks headers
 * signed with the project's own `signV1` (HMAC-SHA256 per request), as the dispatcher does.
 *
 * It waits for `go` over IPC (so the parent can read its idle memory first), in burst mode sends one
 * uncounted warm-up request per in-flight slot (connections opened), runs the bounded workload,
 * sends one `result`, and exits when the parent disconnects.
 */
import { randomBytes } from 'node:crypto';
import { Agent } from 'undici';
import { signV1 } from '../src/domain/signing.ts';

/** The workload, passed as JSON in argv[2]. */
export interface RawHttpInit {
  /** Receiver URLs; requests go round-robin over them. */
  readonly urls: readonly string[];
  /** Requests in flight at most. */
  readonly inFlight: number;
  /** Connections per origin (the dispatcher's TIDINGS_MAX_SOCKETS_PER_ORIGIN). */
  readonly connectionsPerOrigin: number;
  /** Sign each request (Standard Webhooks v1). */
  readonly sign: boolean;
  /** Body bytes of each request. */
  readonly body: string;
  /** Prefix of each `webhook-id` (the receiver keys arrival times by it). */
  readonly idPrefix: string;
  /** `burst`: `count` requests as fast as `inFlight` allows. `paced`: `rate` per second for `durationMs`. */
  readonly mode: 'burst' | 'paced';
  readonly count: number;
  readonly rate: number;
  readonly durationMs: number;
  /** Give up on the workload after this long (every loop is bounded). */
  readonly timeoutMs: number;
}

/** The one result message. Instants are Unix ms on this machine's clock. */
export interface RawHttpResult {
  readonly type: 'result';
  readonly sent: number;
  readonly ok: number;
  readonly failed: number;
  readonly firstError: string | null;
  readonly startedAt: number;
  readonly endedAt: number;
  /** Most requests in flight at once. */
  readonly maxInFlight: number;
  /** Sends that started later than their paced slot by more than 5 ms (paced mode). */
  readonly late: number;
  /** Per request: its `webhook-id` and when it was handed to undici (paced mode only). */
  readonly ids: readonly string[];
  readonly sentAt: readonly number[];
}

const nowMs = (): number => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  if (process.send === undefined)
    throw new Error('raw-http-process.ts must be started with an IPC channel (see raw-http.ts)');
  const init = JSON.parse(process.argv[2] ?? '{}') as RawHttpInit;
  const agent = new Agent({
    connections: init.connectionsPerOrigin,
    pipelining: 1,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const key = randomBytes(32);
  const body = Buffer.from(init.body, 'utf8');
  const targets = init.urls.map((u) => new URL(u));
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let late = 0;
  let firstError: string | null = null;
  const ids: string[] = [];
  const sentAt: number[] = [];
  const record = init.mode === 'paced';

  const one = async (i: number, warmUp = false): Promise<void> => {
    const target = targets[i % targets.length]!;
    const id = `${init.idPrefix}${warmUp ? 'w' : ''}${i}`;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'tidings-bench-raw',
      'webhook-id': id,
    };
    if (init.sign) {
      const ts = Math.floor(Date.now() / 1000);
      headers['webhook-timestamp'] = String(ts);
      headers['webhook-signature'] = signV1(key, id, ts, body);
    }
    if (warmUp) {
      try {
        await (
          await agent.request({ origin: target.origin, path: target.pathname, method: 'POST', headers, body })
        ).body.dump();
      } catch {
        // counted by the measured requests
      }
      return;
    }
    inFlight += 1;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
    sent += 1;
    if (record) {
      ids.push(id);
      sentAt.push(nowMs());
    }
    try {
      const res = await agent.request({ origin: target.origin, path: target.pathname, method: 'POST', headers, body });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) ok += 1;
      else {
        failed += 1;
        firstError ??= `status ${res.statusCode}`;
      }
    } catch (error) {
      failed += 1;
      firstError ??= (error as Error).message;
    } finally {
      inFlight -= 1;
    }
  };

  const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
  process.send({ type: 'ready' });
  await go;
  if (init.mode === 'burst') {
    // Warm-up, not counted: open the connections and let the JIT settle, as a running dispatcher has.
    await Promise.all(Array.from({ length: Math.min(init.inFlight, init.count) }, (_, i) => one(i, true)));
  }
  const startedAt = nowMs();
  const deadline = startedAt + init.timeoutMs;
  if (init.mode === 'burst') {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < init.count && nowMs() < deadline) await one(next++);
    };
    await Promise.all(Array.from({ length: Math.min(init.inFlight, init.count) }, worker));
  } else {
    const total = Math.round((init.rate * init.durationMs) / 1000);
    const running = new Set<Promise<void>>();
    let i = 0;
    while (i < total && nowMs() < deadline) {
      const due = startedAt + (i * 1000) / init.rate;
      const now = nowMs();
      if (now < due) {
        await new Promise((r) => setTimeout(r, Math.max(0, Math.floor(due - now))));
        continue;
      }
      if (running.size >= init.inFlight) {
        await Promise.race(running);
        continue;
      }
      if (now - due > 5) late += 1;
      const p = one(i++);
      running.add(p);
      void p.finally(() => running.delete(p));
    }
    await Promise.race([Promise.all(running), new Promise((r) => setTimeout(r, Math.max(0, deadline - nowMs())))]);
  }
  const result: RawHttpResult = {
    type: 'result',
    sent,
    ok,
    failed,
    firstError,
    startedAt,
    endedAt: nowMs(),
    maxInFlight,
    late,
    ids,
    sentAt,
  };
  process.send(result);
  process.once('disconnect', () => {
    void agent.close().finally(() => process.exit(0));
  });
}

if (import.meta.main) await main();
