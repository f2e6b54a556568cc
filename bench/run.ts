/**
 * `npm run bench`: the Tidings benchmark (docs/guides/benchmark.md). Starts a receiver, Tidings (API and dispatcher
 * processes on a PostgreSQL server, and the embedded engine in one `serve` process) and a load generator
 * that publishes through the public API, runs the scenarios (burst, latency, …) with the raw-HTTP reference in the same
 * invocation, prints a table on stdout and writes a JSON file under bench/results/.
 * See docs/guides/benchmark.md.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { generateKeyEntry } from '../src/adapters/crypto/key-ring.ts';
import type { BenchContext } from './context.ts';
import { summarizeProfile } from './cpu-profile.ts';
import { parseOptions, SERVER_ONLY, USAGE, type Options, type Scenario } from './options.ts';
import type { ProbeDump } from './pg-probe.ts';
import { serverInfo, type ServerInfo } from './pg-stats.ts';
import { createFigureBook, figuresJson, formatTable } from './report.ts';
import { scenarioClaimBacklog } from './scenario-claim.ts';
import { scenarioLatency } from './scenario-latency.ts';
import { scenarioPeers } from './scenario-peers.ts';
import { formatPeerTable } from './peer/peer-table.ts';
import { scenarioSearch } from './scenario-search.ts';
import { scenarioTransports } from './scenario-transports.ts';
import { scenarioStatsReads } from './scenario-stats.ts';
import {
  scenarioBurst,
  scenarioSlowDrain,
  scenarioWideWindow,
  scenarioScaleOut,
  scenarioFanOut,
} from './scenarios-throughput.ts';
import { round } from './stats.ts';
import { startTraceSink, type TraceSink } from './trace-sink.ts';
import { databaseUrl, dropDatabase, type ClusterBase } from './tidings.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const SCENARIOS: Record<Scenario, { readonly title: string; readonly run: (ctx: BenchContext) => Promise<void> }> = {
  burst: { title: 'burst, 0 ms receiver, end to end', run: scenarioBurst },
  'slow-drain': { title: 'burst, 100 ms receiver, drain at the default window', run: scenarioSlowDrain },
  'wide-window': { title: '1 s receiver, large window over many endpoints and ports', run: scenarioWideWindow },
  latency: { title: 'publish → first attempt latency at paced rates', run: scenarioLatency },
  'scale-out': { title: '1, 2, 4 dispatcher processes on one database', run: scenarioScaleOut },
  'fan-out': { title: 'fan-out of each message to 10 endpoints, end to end', run: scenarioFanOut },
  'claim-backlog': { title: 'claim cost against backlog size (SQL)', run: scenarioClaimBacklog },
  'stats-reads': { title: 'statistics reads against timeline size (SQL)', run: scenarioStatsReads },
  search: { title: 'search and list routes against a 1,000,000-message log (HTTP API)', run: scenarioSearch },
  transports: { title: 'the transports (postgres, rabbitmq, nats) on the same workloads', run: scenarioTransports },
  peers: {
    title:
      'Tidings beside Fastify + BullMQ (two Redis setups), BullMQ alone, Fastify + graphile-worker and raw signed HTTP',
    run: scenarioPeers,
  },
};

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 19);
}

/** Statements per message (API) and per delivery (dispatchers), and the costliest statements, from the probes. */
function probeDigest(detail: Record<string, unknown>): Record<string, unknown> | undefined {
  const probes = detail.probes as Record<string, ProbeDump> | undefined;
  if (probes === undefined || Object.keys(probes).length === 0) return undefined;
  const messages = Number(detail.messages ?? 0);
  const deliveries = Number(detail.delivered ?? 0);
  const out: Record<string, unknown> = {};
  for (const [name, dump] of Object.entries(probes)) {
    const statements = Object.entries(dump.statements);
    const calls = statements.reduce((s, [, v]) => s + v.calls, 0);
    const totalMs = statements.reduce((s, [, v]) => s + v.totalMs, 0);
    const per = name.includes('dispatcher')
      ? deliveries
      : name.includes('api')
        ? messages
        : Math.max(messages, deliveries);
    out[name] = {
      statements: calls,
      statementsPer: per === 0 ? null : round(calls / per, 2),
      per: name.includes('dispatcher') ? 'delivery' : 'message',
      statementMs: round(totalMs, 1),
      poolWaitMs: dump.poolWait.totalMs,
      poolWaitP99Ms: dump.poolWait.p99Ms,
      top: statements
        .sort((a, b) => b[1].totalMs - a[1].totalMs)
        .slice(0, 8)
        .map(([sql, v]) => ({ sql, ...v, perCallMs: round(v.totalMs / Math.max(1, v.calls), 3) })),
    };
  }
  return out;
}

/**
 * Holds a session-level advisory lock named after the bench database for the whole run, so two benchmarks
 * cannot drop and recreate the same database under each other.
 * @throws Error when another benchmark holds it
 */
async function lockBenchDatabase(serverUrl: string, dbName: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl(serverUrl, 'postgres') });
  await client.connect();
  const got =
    (
      await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [
        `tidings-bench:${dbName}`,
      ])
    ).rows[0]?.ok === true;
  if (!got) {
    await client.end();
    throw new Error(
      `another benchmark is running with --db-name ${dbName} on this server; wait for it or pick another --db-name`,
    );
  }
  return client;
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const started = new Date();
  const startLoad = loadavg();
  const resultsDir = join(ROOT, 'bench', 'results');
  const out = options.out ?? join(resultsDir, `bench-${stamp()}.json`);
  if (options.out !== undefined) {
    try {
      await access(dirname(out), constants.W_OK);
    } catch {
      console.error(`--out: the folder ${dirname(out)} does not exist or is not writable`);
      return 2;
    }
  }
  const logDir = join(resultsDir, `logs-${stamp()}`);
  await mkdir(logDir, { recursive: true });
  const userEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if ((k.startsWith('TIDINGS_') || k.startsWith('OTEL_')) && v !== undefined) userEnv[k] = v;
  const traceSink: TraceSink | null = options.traces ? await startTraceSink() : null;
  if (traceSink !== null) userEnv.OTEL_EXPORTER_OTLP_ENDPOINT = traceSink.url;
  const base: ClusterBase = {
    serverUrl: options.databaseUrl,
    dbName: options.dbName,
    encryptionKeys: generateKeyEntry('bench'),
    apiToken: `bench_${randomBytes(24).toString('base64url')}`,
    logLevel: options.logLevel,
    logDir,
    probe: options.probe,
    cpuProf: options.cpuProf,
    userEnv,
  };
  const needsServer = options.engines.includes('server') || options.scenarios.some((s) => SERVER_ONLY.has(s));
  let server: ServerInfo | null = null;
  let benchLock: pg.Client | null = null;
  if (needsServer) {
    try {
      server = await serverInfo(options.databaseUrl);
      benchLock = await lockBenchDatabase(options.databaseUrl, options.dbName);
    } catch (error) {
      console.error(`cannot use PostgreSQL at ${options.databaseUrl}: ${(error as Error).message}`);
      return 1;
    }
  }
  const cpuList = cpus();
  const machine = {
    cores: cpuList.length,
    cpuModel: cpuList[0]?.model ?? 'unknown',
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    kernel: release(),
  };
  const log = (line: string): void => console.error(line);
  const book = createFigureBook();
  const details: Record<string, unknown>[] = [];
  const ctx: BenchContext = { options, base, book, details, log };
  const redactedUrl = (() => {
    const u = new URL(options.databaseUrl);
    if (u.password !== '') u.password = '***';
    return u.toString();
  })();

  const header = [
    `Tidings benchmark ${started.toISOString()}  commit ${gitCommit() ?? '?'}` +
      (options.size === 'full' ? '' : `  (--size ${options.size}: figures not comparable with full runs)`),
    `machine: ${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Linux ${machine.kernel}; ` +
      `Node ${process.version}; load average at start ${loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')} (other processes share the machine)`,
    server === null
      ? 'PostgreSQL: not used'
      : `PostgreSQL: ${server.version.split(' on ')[0]} at ${redactedUrl}; ${Object.entries(server.settings)
          .filter(([k]) => k !== 'server_version')
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}`,
    'receivers: node:http on 127.0.0.1, answer 200 with an empty body after 0 ms (burst, latency, scale-out, ' +
      `fan-out), 100 ms (slow-drain), 1 s (wide-window); payload ${options.payloadBytes} B; publish ` +
      `${options.sizes.publishInFlight} calls in ` +
      `flight${options.idempotencyKeys ? ', each with an Idempotency-Key' : ''}`,
    `runs: ${options.runs} per scenario; engines: ${options.engines.join(', ')}; Tidings log level ` +
      options.logLevel +
      (options.probe ? '; statement probe ON (adds a little client time)' : '') +
      (options.cpuProf ? '; CPU profiles ON' : '') +
      (traceSink !== null ? '; traces ON (OTLP to a local sink)' : '') +
      (Object.keys(userEnv).length > 0 ? `; from the environment: ${Object.keys(userEnv).join(', ')}` : ''),
  ];
  for (const line of header) console.log(line);
  console.log('');

  const failures: { scenario: string; error: string }[] = [];
  for (const scenario of options.scenarios) {
    log(`(${scenario}) ${SCENARIOS[scenario].title}`);
    const t0 = performance.now();
    try {
      await SCENARIOS[scenario].run(ctx);
    } catch (error) {
      failures.push({ scenario, error: (error as Error).stack ?? String(error) });
      log(`  (${scenario}) FAILED: ${(error as Error).message}`);
    }
    log(`  (${scenario}) took ${round((performance.now() - t0) / 1000, 1)} s`);
  }

  for (const d of details) {
    const digest = probeDigest(d);
    if (digest !== undefined) d.probeDigest = digest;
    const files = d.cpuProfiles as string[] | undefined;
    if (files !== undefined && files.length > 0) {
      const summaries = [];
      for (const f of files) {
        try {
          summaries.push(await summarizeProfile(f));
        } catch (error) {
          summaries.push({ file: f, error: (error as Error).message });
        }
      }
      d.cpuProfileSummaries = summaries;
    }
  }

  const traceFigures = traceSink?.figures() ?? null;
  await traceSink?.close();
  if (traceFigures !== null)
    console.error(`trace sink: ${traceFigures.exports} exports, ${round(traceFigures.bytes / 1024, 1)} KiB`);
  const loadAtEnd = loadavg();
  const results = book.results();
  console.log(formatTable(results));
  if (options.scenarios.includes('peers')) console.log(`\n${formatPeerTable(results, machine.cores)}`);
  console.log(
    `\nload average at end ${loadAtEnd.map((v) => v.toFixed(2)).join(' ')}; machine busy cores per workload ` +
      'are in the JSON (usage.machineBusyCores)',
  );
  for (const f of failures) console.log(`\nscenario (${f.scenario}) failed: ${f.error.split('\n')[0]}`);
  if (benchLock !== null) {
    await dropDatabase(options.databaseUrl, options.dbName).catch(() => undefined);
    await dropDatabase(options.databaseUrl, `${options.dbName}_claim`).catch(() => undefined);
    await dropDatabase(options.databaseUrl, `${options.dbName}_graphile`).catch(() => undefined);
    await benchLock.end().catch(() => undefined);
  }
  const json = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    commit: gitCommit(),
    machine: { ...machine, loadAverageAtStart: startLoad, loadAverageAtEnd: loadAtEnd },
    node: process.version,
    postgres: server === null ? null : { url: redactedUrl, ...server },
    options: { ...options, sizes: options.sizes },
    tidingsEnvFromUser: Object.keys(userEnv),
    traceSink: traceFigures,
    receivers: {
      kind:
        'node:http server in a child process on 127.0.0.1; reads the body, waits the delay, answers 200 with an ' +
        'empty body; counts requests and keeps the first arrival per webhook-id and path',
      delaysMs: {
        burst: 0,
        'slow-drain': 100,
        'wide-window': 1000,
        latency: 0,
        'scale-out': 0,
        'fan-out': 0,
        peers: [0, 100],
      },
    },
    figures: figuresJson(results),
    failures,
    runs: details,
    logDir: relative(ROOT, logDir),
  };
  await writeFile(out, JSON.stringify(json, null, 1));
  console.log(`\nJSON: ${relative(process.cwd(), out)}   logs: ${relative(process.cwd(), logDir)}`);
  return failures.length > 0 ? 1 : 0;
}

process.exitCode = await main();
