import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createApiClient, type PublishRun } from './load.ts';
import { startMonitor, type UsageReport } from './monitor.ts';
import type { ProbeDump } from './pg-probe.ts';
import { backendPids, counterDelta, dbCounters, deliveryStates, type DbCounters } from './pg-stats.ts';
import { procUsage, sleep } from './procs.ts';
import type { Receiver } from './receiver.ts';
import { quantile, round } from './stats.ts';
import { startCluster, type ClusterBase, type Engine, type FinalState } from './tidings.ts';

/** One Tidings delivery workload (scenarios burst, slow-drain, wide-window, scale-out, fan-out, peers). */
export interface DeliverySpec {
  readonly tag: string;
  readonly engine: Engine;
  readonly receiver: Receiver;
  /** Endpoints of the one application; spread over the receiver's ports round-robin. */
  readonly endpoints: number;
  /** `fanOut`: every endpoint gets every message; `spread`: message i goes to endpoint i mod n only. */
  readonly routing: 'fanOut' | 'spread';
  readonly messages: number;
  readonly publishInFlight: number;
  readonly payloadBytes: number;
  /** Publish with an Idempotency-Key per call (`--idempotency-keys`). */
  readonly idempotencyKeys: boolean;
  /**
   * `e2e`: dispatchers run while the burst is published; the rate counts from the first publish call.
   * `drain`: the backlog is published while the dispatchers are stopped (SIGSTOP), then they continue;
   * the rate counts from that moment. The embedded engine (one process) always runs `e2e`.
   */
  readonly mode: 'e2e' | 'drain';
  readonly dispatchers: number;
  /**
   * Server engine: one `serve` process (API and dispatcher) instead of an API beside dispatchers
   * (ClusterOptions.oneProcess).
   */
  readonly oneProcess?: boolean;
  /** Settings the scenario needs (TIDINGS_CONCURRENCY …). */
  readonly env: Readonly<Record<string, string>>;
  readonly waitTimeoutMs: number;
}

/** What one delivery workload measured. Instants are Unix ms; rates per second. */
export interface DeliveryResult {
  readonly tag: string;
  readonly engine: Engine;
  /** Commit of the engine source, and whether src/ or migrations/ had uncommitted changes. */
  readonly source: { readonly commit: string | null; readonly dirty: boolean | null };
  readonly mode: 'e2e' | 'drain';
  readonly dispatchers: number;
  readonly concurrency: number;
  readonly claimBatch: number;
  readonly dbPoolSize: number;
  readonly maxSocketsPerOrigin: number;
  readonly messages: number;
  readonly expectedDeliveries: number;
  readonly delivered: number;
  readonly duplicates: number;
  /** Most requests open at the receiver at once: the in-flight count reached. */
  readonly receiverMaxOpen: number;
  readonly publish: {
    readonly accepted: number;
    readonly failed: number;
    readonly firstError: string | null;
    readonly perS: number;
    readonly callP50Ms: number;
    readonly callP99Ms: number;
  };
  /**
   * Deliveries per second: from the first publish call (e2e) or from the dispatchers' continue (drain) to the last new
   * delivery.
   */
  readonly deliveriesPerS: number;
  /** The last new delivery's arrival minus the burst's last 2xx, ms (e2e). */
  readonly lastAfterBurstMs: number;
  /** CPU and memory while delivering (drain) or over the whole workload (e2e). */
  readonly usage: UsageReport;
  /** Drain mode: CPU and memory while the backlog was published (dispatchers stopped). */
  readonly publishUsage: UsageReport | null;
  /** Resident memory of the dispatching processes, summed: idle before the workload, and peak. */
  readonly dispatcherRssIdleBytes: number;
  readonly dispatcherRssPeakBytes: number;
  /** The database after the processes stopped: deliveries per state, acknowledged messages stored. */
  readonly final: FinalState | null;
  /** Server engine: database counters over the workload (WAL counters are cluster-wide). */
  readonly db: DbCounters | null;
  /** Statement timings per process (with --probe). */
  readonly probes: Readonly<Record<string, ProbeDump>>;
  /** Files of the CPU profiles (with --cpu-prof). */
  readonly cpuProfiles: readonly string[];
}

/**
 * Runs one delivery workload on a fresh Tidings deployment: creates the application and endpoints through
 * the API, publishes the burst (one message per call, `publishInFlight` calls at a time), waits until the
 * receiver has seen every expected `webhook-id` (bounded by `waitTimeoutMs`, or 30 s without progress),
 * checks the final states in the database (server), stops the processes and collects their probes.
 */
export async function runDelivery(base: ClusterBase, spec: DeliverySpec): Promise<DeliveryResult> {
  const mode = spec.engine === 'embedded' ? 'e2e' : spec.mode;
  await spec.receiver.reset();
  const cluster = await startCluster(base, {
    engine: spec.engine,
    dispatchers: spec.dispatchers,
    oneProcess: spec.oneProcess === true,
    env: spec.env,
    tag: spec.tag,
  });
  const dbUrl = cluster.databaseUrl;
  let probeFiles: readonly string[] = [];
  let stopped = false;
  try {
    const client = createApiClient(
      cluster.apiUrl,
      base.apiToken,
      spec.publishInFlight,
      spec.payloadBytes,
      spec.idempotencyKeys,
    );
    const app = await client.createApplication('bench', `bench-${spec.tag}`);
    const ports = spec.receiver.ports;
    for (let i = 0; i < spec.endpoints; i += 1) {
      await client.createEndpoint(
        app,
        `http://127.0.0.1:${ports[i % ports.length]}/ep${i}`,
        spec.routing === 'spread' ? [`bench.e${i}`] : undefined,
      );
    }
    const eventType = spec.routing === 'spread' ? (i: number) => `bench.e${i % spec.endpoints}` : () => 'bench.event';
    const expected = spec.routing === 'fanOut' ? spec.messages * spec.endpoints : spec.messages;

    await sleep(500);
    const dispatching = cluster.dispatching();
    const rssIdle = dispatching.reduce((sum, c) => sum + (procUsage(c.pid)?.rssBytes ?? 0), 0);
    if (mode === 'drain') for (const c of dispatching) process.kill(c.pid, 'SIGSTOP');
    const counters0 = dbUrl === null ? null : await dbCounters(dbUrl, base.dbName);
    const roles = async () => ({
      api: [cluster.api.pid],
      ...(spec.engine === 'server' && spec.oneProcess !== true
        ? { dispatcher: cluster.dispatchers.map((d) => d.pid) }
        : {}),
      receiver: [spec.receiver.child.pid],
      loadgen: [process.pid],
      ...(dbUrl === null ? {} : { postgres: await backendPids(dbUrl, base.dbName) }),
    });
    // e2e: one window over publishing and delivering. drain: the publish window, then the delivery window.
    const publishMonitor = startMonitor(roles);
    let pub: PublishRun;
    let publishUsage: UsageReport | null = null;
    try {
      pub = await client.publishBurst(app, spec.messages, spec.publishInFlight, eventType, spec.waitTimeoutMs);
    } finally {
      if (mode === 'drain') {
        publishUsage = await publishMonitor.stop();
        for (const c of dispatching) process.kill(c.pid, 'SIGCONT');
      }
    }
    const monitor = mode === 'drain' ? startMonitor(roles) : publishMonitor;
    const countFrom = mode === 'drain' ? performance.timeOrigin + performance.now() : pub.startedAt;
    await client.close();

    const stats = await spec.receiver.waitForUnique(pub.acks.length * (expected / spec.messages), spec.waitTimeoutMs);
    const usage = await monitor.stop();
    if (dbUrl !== null) {
      // Outcomes are recorded after the receiver answered: wait (bounded) until nothing is leased or pending.
      const until = Date.now() + 15_000;
      while (Date.now() < until) {
        const states = await deliveryStates(dbUrl);
        if ((states.leased ?? 0) + (states.pending ?? 0) === 0) break;
        await sleep(200);
      }
    }
    stopped = true;
    const report = await cluster.stop(pub.acks.map((a) => a.id));
    probeFiles = report.probeFiles;
    const counters1 = dbUrl === null ? null : await dbCounters(dbUrl, base.dbName);
    const calls = pub.acks.map((a) => a.ackAt - a.sentAt);
    const end = stats.lastNewAt ?? Number.NaN;
    const profiles = base.cpuProf
      ? [cluster.api, ...cluster.dispatchers].map((c) => join(base.logDir, `${c.name}.cpuprofile`))
      : [];
    return {
      tag: spec.tag,
      engine: spec.engine,
      source: cluster.source,
      mode,
      dispatchers: spec.engine === 'server' ? spec.dispatchers : 1,
      concurrency: cluster.config.concurrency,
      claimBatch: cluster.config.claimBatch,
      dbPoolSize: cluster.config.dbPoolSize,
      maxSocketsPerOrigin: cluster.config.maxSocketsPerOrigin,
      messages: spec.messages,
      expectedDeliveries: expected,
      delivered: stats.unique,
      duplicates: stats.duplicates,
      receiverMaxOpen: stats.maxOpen,
      publish: {
        accepted: pub.acks.length,
        failed: pub.failed,
        firstError: pub.firstError,
        perS: round(pub.acks.length / Math.max(1e-6, (pub.endedAt - pub.startedAt) / 1000), 1),
        callP50Ms: round(quantile(calls, 0.5), 3),
        callP99Ms: round(quantile(calls, 0.99), 3),
      },
      deliveriesPerS: round(stats.unique / Math.max(1e-6, (end - countFrom) / 1000), 1),
      lastAfterBurstMs: round(end - pub.endedAt, 1),
      usage,
      publishUsage,
      dispatcherRssIdleBytes: rssIdle,
      dispatcherRssPeakBytes: usage.rssPeakBytes[spec.engine === 'server' ? 'dispatcher' : 'api'] ?? 0,
      final: report.final,
      db: counters0 === null || counters1 === null ? null : counterDelta(counters0, counters1),
      probes: await readProbes(probeFiles),
      cpuProfiles: profiles,
    };
  } finally {
    if (!stopped) await cluster.stop();
  }
}

/** Reads the probe dumps that exist, keyed by file name without folder and suffix. */
export async function readProbes(files: readonly string[]): Promise<Record<string, ProbeDump>> {
  const out: Record<string, ProbeDump> = {};
  for (const file of files) {
    try {
      const name = file
        .split('/')
        .pop()!
        .replace(/\.probe\.json$/, '');
      out[name] = JSON.parse(await readFile(file, 'utf8')) as ProbeDump;
    } catch {
      // the process did not exit cleanly: no dump
    }
  }
  return out;
}
