/**
 * `node bench/tenant-fairness.ts [--seconds S] [--rate R] [--flood-connections C] [--database-url URL] [--env K=V]…`:
 * how much one tenant's flood of publishes slows another tenant's publishes, on one `api` process (no
 * dispatcher) over a fresh database `tidings_bench_fairness` (dropped at the end).
 *
 * Two applications, each with its own application-scoped API key. Tenant B publishes R per second (default
 * 20; one `Idempotency-Key` each, as the svix client sends) for S seconds (default 20, at most 120), first alone,
 * then while tenant A publishes flat out on C connections (default 32; each publish keyed too) from a worker
 * thread (its own event loop, so A's client does not delay B's). Prints B's publish latency (p50, p99, max)
 * alone and under A's flood, A's publishes per second and p50, and the API process's event-loop delay
 * (its `/metrics`) at the end. Bounded: A stops at S seconds or 2,000,000 publishes, B at S × R publishes.
 *
 * `--env K=V` (repeatable) sets a variable of the API process, e.g. `--env TIDINGS_API_FAIR_SLOTS=0` to see
 * the process without fair admission (docs/adr/0027-fair-admission-between-credentials.md).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createApiClient, type PublishRun } from './load.ts';
import { quantile } from './stats.ts';

/** What the flood worker is given. */
interface FloodJob {
  readonly url: string;
  readonly token: string;
  readonly app: string;
  readonly connections: number;
  readonly seconds: number;
}

const MAX_FLOOD_PUBLISHES = 2_000_000;
const PAYLOAD_BYTES = 256;

/** p50 / p99 / max of a run's acknowledged publishes, in ms. */
function latency(run: PublishRun): { p50: number; p99: number; max: number; n: number } {
  const ms = run.acks.map((a) => a.ackAt - a.sentAt);
  return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), max: quantile(ms, 1), n: ms.length };
}

if (!isMainThread) {
  const job = workerData as FloodJob;
  const client = createApiClient(job.url, job.token, job.connections, PAYLOAD_BYTES, true);
  const run = await client.publishBurst(
    job.app,
    MAX_FLOOD_PUBLISHES,
    job.connections,
    () => 'flood.event',
    job.seconds * 1000,
  );
  await client.close();
  const seconds = (run.endedAt - run.startedAt) / 1000;
  parentPort?.postMessage({
    ...latency(run),
    perS: run.acks.length / seconds,
    failed: run.failed,
    err: run.firstError,
  });
} else {
  const { generateKeyEntry } = await import('../src/adapters/crypto/key-ring.ts');
  const { dropDatabase, startCluster } = await import('./tidings.ts');
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string' },
      rate: { type: 'string' },
      'flood-connections': { type: 'string' },
      'database-url': { type: 'string' },
      env: { type: 'string', multiple: true },
    },
  });
  const count = (name: string, raw: string | undefined, fallback: number, min: number, max: number): number => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be ${min}–${max} (got ${raw})`);
    return n;
  };
  const seconds = count('seconds', values.seconds, 20, 2, 120);
  const rate = count('rate', values.rate, 20, 1, 200);
  const connections = count('flood-connections', values['flood-connections'], 32, 1, 256);
  const env = Object.fromEntries(
    (values.env ?? []).map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`--env takes K=V (got ${pair})`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
  const serverUrl =
    values['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const logDir = await mkdtemp(join(tmpdir(), 'tidings-fairness-'));
  const dbName = 'tidings_bench_fairness';
  const base = {
    serverUrl,
    dbName,
    encryptionKeys: generateKeyEntry('bench'),
    apiToken: `bench_${randomBytes(24).toString('base64url')}`,
    logLevel: 'warn',
    logDir,
    probe: false,
    cpuProf: false,
    userEnv: {},
  };
  const cluster = await startCluster(base, { engine: 'server', dispatchers: 0, env, tag: 'fairness' });
  try {
    const admin = createApiClient(cluster.apiUrl, base.apiToken, 1, PAYLOAD_BYTES);
    const tenant = async (name: string): Promise<{ app: string; token: string }> => {
      const app = await admin.createApplication(name, name);
      await admin.createEndpoint(app, 'http://127.0.0.1:9/');
      const res = await fetch(`${cluster.apiUrl}/api/v1/api-key`, {
        method: 'POST',
        headers: { authorization: `Bearer ${base.apiToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, appId: app }),
      });
      if (res.status !== 201) throw new Error(`create key: HTTP ${res.status} ${await res.text()}`);
      return { app, token: ((await res.json()) as { token: string }).token };
    };
    const a = await tenant('tenant-a');
    const b = await tenant('tenant-b');
    await admin.close();
    const quiet = createApiClient(cluster.apiUrl, b.token, 4, PAYLOAD_BYTES, true);
    const paced = (): Promise<PublishRun> =>
      quiet.publishPaced(b.app, rate, seconds * 1000, 4, 'quiet.event', seconds * 1000 + 5_000);
    await quiet.publishBurst(b.app, 200, 4, () => 'warm.event', 30_000);
    const alone = latency(await paced());
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { url: cluster.apiUrl, token: a.token, app: a.app, connections, seconds } satisfies FloodJob,
    });
    const flood = new Promise<Record<string, number | string | null>>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await new Promise((r) => setTimeout(r, 1_000));
    const contended = await paced();
    const floodResult = await flood;
    await worker.terminate();
    await quiet.close();
    const metrics = await (await fetch(`${cluster.apiUrl}/metrics`)).text();
    const lag = /^tidings_nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(metrics)?.[1];
    const f = (x: number): string => x.toFixed(1);
    const b2 = latency(contended);
    console.log(`API process env: ${JSON.stringify(env)}; ${seconds} s per phase; B at ${rate}/s`);
    console.log(`B alone:            p50 ${f(alone.p50)} ms  p99 ${f(alone.p99)} ms  max ${f(alone.max)} ms`);
    const bError = contended.firstError === null ? '' : `: ${contended.firstError}`;
    console.log(
      `B beside A's flood: p50 ${f(b2.p50)} ms  p99 ${f(b2.p99)} ms  max ${f(b2.max)} ms  ` +
        `(${b2.n} acknowledged, ${contended.failed} failed${bError})`,
    );
    const aError = floodResult.err ? `: ${floodResult.err}` : '';
    const aLatency = `p50 ${f(Number(floodResult.p50))} ms, p99 ${f(Number(floodResult.p99))} ms`;
    console.log(
      `A on ${connections} connections: ${f(Number(floodResult.perS))} publishes/s, ` +
        `${aLatency}, ${floodResult.failed} failed${aError}`,
    );
    console.log(
      `API event-loop delay p99 (prom-client, last interval): ${lag === undefined ? '?' : f(Number(lag) * 1000)} ms`,
    );
  } finally {
    await cluster.stop();
    await dropDatabase(serverUrl, dbName);
    await rm(logDir, { recursive: true, force: true });
  }
}
