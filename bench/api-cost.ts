/**
 * `node bench/api-cost.ts [--messages N] [--rounds R] [--payload-bytes B] [--database-url URL] [--cpu-prof] [--probe]
 * [--env K=V]…`: CPU of the API process per publish call, with no dispatcher running, beside a bare Fastify route in
 * the same invocation. Tidings' `api` process runs on a fresh database `tidings_bench_apicost` (on the PostgreSQL
 * server of `--database-url`, default `$BENCH_DATABASE_URL` or postgresql://postgres@127.0.0.1:5432/postgres; dropped
 * at the end). The load generator (this process) makes N publish calls of B bytes (default 10,000 of 1,024;
 * N ≥ 1,000), 50 in flight, on one application with one endpoint, and reads the API process's CPU
 * (/proc/<pid>/stat, utime + stime) over them. The bare route (`bench/api-cost.ts serve-bare`: Fastify, no
 * plugin, answers 202 with a small JSON object) takes the same calls, so the difference is what Tidings' own
 * per-request work costs: authentication, logging, validation, the exact payload span, the publish and its
 * answer (docs/adr/0016-hot-path-cost.md). Prints µs of CPU per call, the median of R rounds (default 5), and beside it
 * the CPU of the API's PostgreSQL backends per call (/proc/<pid>/stat of the server processes that
 * pg_stat_activity lists for the bench database after the warm-up round; the server must run on this machine, else
 * that line says so). `--probe` runs the API under bench/pg-probe.ts and prints its statements per 10,000
 * calls (warm-up round included).
 * `--env K=V` (repeatable) adds a variable to the API process's environment, to see what one setting costs
 * (e.g. `--env TIDINGS_LOG_LEVEL=warn`).
 * `--endpoints E` (default 1) gives the application E endpoints, so each publish fans out to E deliveries;
 * `--filter match|miss` gives each of them a payload filter (docs/adr/0029-endpoint-payload-filters.md) of 8 nodes
 * that every message matches (the same deliveries, plus E evaluations) or that none matches (no delivery).
 * `--database-name D` names the fresh database instead (two invocations at once on one server need two names).
 * On an error the processes' logs are kept and their folder is named. `--cpu-prof` runs the API process under
 * `node --cpu-prof`, keeps its profile and prints its self time by area and by function (bench/cpu-profile.ts).
 *
 * The API process is the only Tidings process, so its figure hardly depends on how the machine's other
 * processes are scheduled, unlike the end-to-end scenarios of `npm run bench`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import type { ApiClient } from './load.ts';
import { summarize } from './stats.ts';

const IN_FLIGHT = 50;

if (process.argv[2] === 'serve-bare') {
  const app = Fastify({ logger: false });
  app.get('/readyz', async () => ({ ok: true }));
  app.post('/api/v1/app/:appId/msg', async (request, reply) => {
    reply.code(202);
    return { id: 'msg_bare', eventType: (request.body as { eventType?: string }).eventType };
  });
  await app.listen({ port: Number(process.argv[3]), host: '127.0.0.1' });
} else {
  // Loaded here, not at the top: the bare route's process (the branch above) loads Fastify only.
  const { generateKeyEntry } = await import('../src/adapters/crypto/key-ring.ts');
  const { createApiClient } = await import('./load.ts');
  const { freePort, procUsage, startChild, waitHttpOk } = await import('./procs.ts');
  const { dropDatabase, startCluster } = await import('./tidings.ts');
  const { backendPids } = await import('./pg-stats.ts');
  const { readProbes } = await import('./delivery-run.ts');
  const { values } = parseArgs({
    options: {
      messages: { type: 'string' },
      rounds: { type: 'string' },
      'payload-bytes': { type: 'string' },
      'database-url': { type: 'string' },
      'cpu-prof': { type: 'boolean' },
      probe: { type: 'boolean' },
      env: { type: 'string', multiple: true },
      endpoints: { type: 'string' },
      filter: { type: 'string' },
      'database-name': { type: 'string' },
    },
  });
  const extraEnv = Object.fromEntries(
    (values.env ?? []).map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`--env takes K=V (got ${pair})`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
  /** A whole-number option of at least `min`. @throws Error naming the option otherwise */
  const count = (name: string, raw: string | undefined, fallback: number, min: number): number => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${name} must be a whole number of at least ${min} (got ${raw})`);
    return n;
  };
  const messages = count('messages', values.messages, 10_000, 1_000);
  const rounds = count('rounds', values.rounds, 5, 1);
  const payloadBytes = count('payload-bytes', values['payload-bytes'], 1024, 16);
  const endpoints = count('endpoints', values.endpoints, 1, 1);
  const filterMode = values.filter ?? 'none';
  if (!['none', 'match', 'miss'].includes(filterMode)) throw new Error(`--filter takes none, match or miss`);
  // 8 nodes over the bench payload ({"type":"bench","seq":n,"pad":"x…"}); `miss` differs in its last condition.
  const filterOf = (mode: string): unknown => ({
    eventType: 'bench.event',
    payload: {
      type: { $in: ['bench', 'load'] },
      pad: { $exists: true },
      seq: mode === 'match' ? { $gte: 0 } : { $lt: 0 },
    },
  });
  const serverUrl =
    values['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const logDir = await mkdtemp(join(tmpdir(), 'tidings-api-cost-'));
  const dbName = values['database-name'] ?? 'tidings_bench_apicost';
  if (!/^[a-z_][a-z0-9_]*$/.test(dbName)) throw new Error(`--database-name takes a plain identifier (got ${dbName})`);

  const median = (xs: readonly number[]): number => summarize(xs).median;
  const show = (m: { perRound: number[]; systemShare: number }): string =>
    `${median(m.perRound).toFixed(0)} µs (rounds: ${m.perRound.map((x) => x.toFixed(0)).join(' ')}; ` +
    `${(m.systemShare * 100).toFixed(0)} % in the kernel)`;
  /**
   * µs of CPU of process `pid` per publish call on `app`, one figure per round (after a warm-up round that is
   * not counted: the first rounds run while V8 still optimises), and the median share of it spent in the kernel.
   */
  const measure = async (
    client: ApiClient,
    app: string,
    pid: number,
    backends?: () => Promise<number[]>,
  ): Promise<{ perRound: number[]; systemShare: number; backendPerRound: number[] | null }> => {
    await client.publishBurst(app, messages, IN_FLIGHT, () => 'bench.event', 300_000);
    const sum = (pids: readonly number[]): { cpuS: number; systemS: number } | null => {
      let cpuS = 0;
      let systemS = 0;
      for (const p of pids) {
        const u = procUsage(p);
        if (u === null) return null;
        cpuS += u.cpuS;
        systemS += u.systemS;
      }
      return { cpuS, systemS };
    };
    const usage = (): { cpuS: number; systemS: number } => procUsage(pid) ?? { cpuS: 0, systemS: 0 };
    const serving = backends === undefined ? [] : await backends();
    const perRound: number[] = [];
    const systemShare: number[] = [];
    let backendPerRound: number[] | null = serving.length > 0 && sum(serving) !== null ? [] : null;
    for (let r = 0; r < rounds; r += 1) {
      const before = usage();
      const backendBefore = sum(serving);
      const run = await client.publishBurst(app, messages, IN_FLIGHT, () => 'bench.event', 300_000);
      if (run.failed > 0) throw new Error(`${run.failed} publish calls failed: ${run.firstError}`);
      const after = usage();
      const backendAfter = sum(serving);
      perRound.push(((after.cpuS - before.cpuS) * 1e6) / messages);
      systemShare.push((after.systemS - before.systemS) / Math.max(1e-9, after.cpuS - before.cpuS));
      if (backendPerRound !== null && backendBefore !== null && backendAfter !== null)
        backendPerRound.push(((backendAfter.cpuS - backendBefore.cpuS) * 1e6) / messages);
      else backendPerRound = null;
    }
    return { perRound, systemShare: median(systemShare), backendPerRound };
  };

  try {
    const port = await freePort();
    const bare = startChild({
      name: 'bare',
      args: [fileURLToPath(import.meta.url), 'serve-bare', String(port)],
      env: { PATH: process.env.PATH },
      logFile: join(logDir, 'bare.log'),
    });
    let bareCost: Awaited<ReturnType<typeof measure>>;
    try {
      await waitHttpOk(`http://127.0.0.1:${port}/readyz`, bare, 30_000);
      const client = createApiClient(`http://127.0.0.1:${port}`, 'none', IN_FLIGHT, payloadBytes);
      bareCost = await measure(client, 'app_bare', bare.pid);
      await client.close();
    } finally {
      await bare.stop(5_000);
    }

    const base = {
      serverUrl,
      dbName,
      encryptionKeys: generateKeyEntry('bench'),
      apiToken: `bench_${randomBytes(24).toString('base64url')}`,
      logLevel: 'info',
      logDir,
      probe: values.probe === true,
      cpuProf: values['cpu-prof'] === true,
      userEnv: {},
    };
    const cluster = await startCluster(base, { engine: 'server', dispatchers: 0, env: extraEnv, tag: 'api-cost' });
    let apiCost: Awaited<ReturnType<typeof measure>>;
    let stopped: Awaited<ReturnType<typeof cluster.stop>> | undefined;
    try {
      const client = createApiClient(cluster.apiUrl, base.apiToken, IN_FLIGHT, payloadBytes);
      const app = await client.createApplication('api cost', 'api-cost');
      for (let e = 0; e < endpoints; e += 1) {
        const ep = await client.createEndpoint(app, `http://127.0.0.1:9/${e}`);
        if (filterMode === 'none') continue;
        const res = await fetch(`${cluster.apiUrl}/api/v1/app/${app}/endpoint/${ep}/filter`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${base.apiToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ filter: filterOf(filterMode) }),
        });
        if (res.status !== 200) throw new Error(`setting a filter: HTTP ${res.status} ${await res.text()}`);
      }
      apiCost = await measure(client, app, cluster.api.pid, () => backendPids(serverUrl, dbName, true));
      await client.close();
    } finally {
      stopped = await cluster.stop();
      await dropDatabase(serverUrl, dbName);
    }
    console.log(
      `CPU per publish call, ${messages} calls of ${payloadBytes} B per round, ${IN_FLIGHT} in flight, median ` +
        `of ${rounds} rounds; ${endpoints} endpoint(s), payload filters: ${filterMode}`,
    );
    console.log(`  bare Fastify route     ${show(bareCost)}`);
    console.log(
      `  Tidings API process    ${show(apiCost)}  ` +
        `(${(median(apiCost.perRound) / median(bareCost.perRound)).toFixed(2)}× the bare route)`,
    );
    const backend = apiCost.backendPerRound;
    console.log(
      backend === null
        ? '  its PostgreSQL backends: not measured (the server does not run on this machine, or a backend ended ' +
            'during a round)'
        : `  its PostgreSQL backends ${median(backend).toFixed(0)} µs (rounds: ` +
            `${backend.map((x) => x.toFixed(0)).join(' ')})`,
    );
    if (base.probe) {
      const calls = messages * (rounds + 1);
      console.log(
        'statements of the API per 10,000 publish calls (warm-up round included; probed: figures above include ' +
          `the probe's cost):`,
      );
      for (const dump of Object.values(await readProbes(stopped?.probeFiles ?? []))) {
        for (const [name, st] of Object.entries(dump.statements).sort((a, b) => b[1].calls - a[1].calls)) {
          console.log(`  ${((st.calls * 10_000) / calls).toFixed(0).padStart(6)}  ${name}`);
        }
      }
    }
    if (base.cpuProf) {
      const { summarizeProfile } = await import('./cpu-profile.ts');
      // bench/tidings.ts names a process's profile `<tag>-<role>`.
      const file = join(logDir, 'api-cost-api.cpuprofile');
      const summary = await summarizeProfile(file, 30);
      console.log(`\nAPI process profile (${file}), ${summary.busyMs.toFixed(0)} ms busy; self time by area:`);
      console.log(
        '(the API ran under the profiler and the bare route did not: compare the figures above only between ' +
          'runs without --cpu-prof)',
      );
      for (const a of summary.byArea) console.log(`  ${a.share.toFixed(1).padStart(5)} %  ${a.area}`);
      console.log('by function:');
      for (const f of summary.topFunctions) console.log(`  ${f.share.toFixed(1).padStart(5)} %  ${f.fn}`);
    } else {
      await rm(logDir, { recursive: true, force: true });
    }
  } catch (error) {
    // The processes' logs stay for the error's reader (it may name one of them).
    console.error(`api-cost failed; the processes' logs are in ${logDir}`);
    throw error;
  }
}
