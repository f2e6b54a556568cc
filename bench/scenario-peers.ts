/**
 * peers: Tidings beside what teams build instead, in the same run (`npm run bench -- --peers`): Fastify +
 * BullMQ on the Redis of `--redis-url` (the peer) and on a private Redis that fsyncs every command, BullMQ alone
 * without HTTP ingest, Fastify + graphile-worker on the PostgreSQL server (peer/), and the raw signed-HTTP
 * ceiling at the same concurrency, on the same receiver, load generator, payload and in-flight counts.
 * Workloads: a burst to a fast receiver; a burst to a 100 ms receiver with 50 in flight (and Tidings with
 * its default window); publish → first attempt at 20 messages/s from before the publish call. Tidings runs an API
 * process beside one dispatcher process; the fast and latency workloads also run it as one `serve` process (the
 * API and a dispatcher in one process, what `npm start` runs: `tidings one process`).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { effectiveConfig, n0, rawReference, type BenchContext } from './context.ts';
import { runDelivery, type DeliveryResult } from './delivery-run.ts';
import { createApiClient } from './load.ts';
import type { UsageReport } from './monitor.ts';
import { runPeerDelivery, runPeerPaced, type PeerRunOptions } from './peer/peer-run.ts';
import { INGEST_PEERS, openPeerStores, type PeerStores, type PeerVariant } from './peer/peer-variants.ts';
import { redisTarget } from './peer/redis.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { machineCpu, machineCpuMsPerMessage } from './procs.ts';
import { quantile } from './stats.ts';
import { startCluster } from './tidings.ts';

/** Jobs / deliveries in flight of the peer's worker, the raw ceiling and Tidings' narrow window. */
export const PEER_IN_FLIGHT = 50;
/** The paced rate of the latency workload, messages/s. */
export const PACED_RATE = 20;
/**
 * Tidings with the peer's 50 in flight at its one endpoint: a window of 50 that the endpoint may fill
 * (by default one endpoint may hold half the window, ADR 0004, which would leave 25 in flight).
 */
const NARROW_WINDOW = { TIDINGS_CONCURRENCY: String(PEER_IN_FLIGHT), TIDINGS_ENDPOINT_WINDOW_SHARE: '1' } as const;
/** The 100 ms burst is capped (at 500/s, 5,000 messages take 10 s per variant). */
const SLOW_MESSAGES_MAX = 5_000;

/**
 * `tidings one process`: the API and the dispatcher in one `serve` process, as `npm start` runs them; the other Tidings
 * variants run an API process beside one dispatcher process.
 */
type Variant = 'tidings' | 'tidings keyed' | 'tidings window' | 'tidings one process' | PeerVariant | 'raw';
/** A peer's figure of one run, which the figures after it in that run are divided by. */
type PeerFigures = Partial<Record<PeerVariant, number>>;

/** CPU per delivered message over the whole machine (/proc/stat) and per role (/proc/<pid>/stat), and shares. */
function addCpu(ctx: BenchContext, part: string, engine: Variant, usage: UsageReport, delivered: number): void {
  const per = Math.max(1, delivered);
  const machineMs = (1000 * usage.machineBusyCores * usage.wallS) / per;
  const rolesS = Object.values(usage.cpuS).reduce((a, b) => a + b, 0);
  ctx.book.add(
    {
      scenario: 'peers',
      engine,
      name: `${part}: machine CPU ms per message`,
      unit: 'ms',
      better: 'lower',
      target: engine === 'tidings' && part === 'fast' ? '≤ 0.35' : null,
    },
    machineMs,
  );
  ctx.book.add(
    { scenario: 'peers', engine, name: `${part}: roles' CPU ms per message`, unit: 'ms', better: 'lower' },
    (1000 * rolesS) / per,
  );
  for (const [role, s] of Object.entries(usage.cpuS)) {
    ctx.book.add(
      { scenario: 'peers', engine, name: `${part}:   share ${role}`, unit: '%', better: 'lower' },
      (100 * s) / Math.max(1e-9, rolesS),
    );
  }
}

/**
 * Adds `value ÷ of` as `<part>: ÷ <against> (same run)`. The targets are the ones the peer figures were set
 * for: Tidings ÷ the BullMQ peer with the fast receiver.
 */
function addRatio(
  ctx: BenchContext,
  part: string,
  engine: Variant,
  value: number,
  of: number | undefined,
  against: PeerVariant = 'peer',
): void {
  if (!Number.isFinite(value) || of === undefined || !Number.isFinite(of) || of <= 0) return;
  const fastPeer = part === 'fast' && against === 'peer';
  const target = fastPeer && engine === 'tidings' ? '≥ 1.3' : fastPeer && engine === 'tidings keyed' ? '≥ 1.1' : null;
  ctx.book.add(
    { scenario: 'peers', engine, name: `${part}: ÷ ${against} (same run)`, unit: '×', better: 'higher', target },
    value / of,
  );
}

/** A Tidings figure of one run divided by each peer with an ingest of the same run. */
function addRatios(ctx: BenchContext, part: string, engine: Variant, value: number, peers: PeerFigures): void {
  for (const against of INGEST_PEERS) addRatio(ctx, part, engine, value, peers[against], against);
}

function recordTidings(ctx: BenchContext, part: string, engine: Variant, run: number, r: DeliveryResult): number {
  ctx.book.add(
    {
      scenario: 'peers',
      engine,
      name: `${part}: deliveries/s`,
      unit: '/s',
      better: 'higher',
      ceiling: `${part}: deliveries/s`,
    },
    r.deliveriesPerS,
  );
  ctx.book.add(
    { scenario: 'peers', engine, name: `${part}: missing + duplicates`, unit: 'count', better: 'lower', target: '0' },
    r.expectedDeliveries - r.delivered + r.duplicates + r.publish.failed,
  );
  addCpu(ctx, part, engine, r.usage, r.delivered);
  ctx.details.push({ scenario: 'peers', part, variant: engine, run, ...r });
  ctx.log(
    `  peers ${part} ${engine} run ${run}: ${n0(r.deliveriesPerS)} deliveries/s, publish ` +
      `${n0(r.publish.perS)}/s, ${r.delivered}/${r.expectedDeliveries} delivered, ${r.duplicates} duplicates, ` +
      `max open ${r.receiverMaxOpen}; machine ${r.usage.machineBusyCores.toFixed(2)} cores`,
  );
  return r.deliveriesPerS;
}

async function peerBurst(
  ctx: BenchContext,
  engine: PeerVariant,
  o: PeerRunOptions,
  part: string,
  run: number,
  messages: number,
): Promise<number> {
  const r = await runPeerDelivery(o, messages);
  ctx.book.add(
    {
      scenario: 'peers',
      engine,
      name: `${part}: deliveries/s`,
      unit: '/s',
      better: 'higher',
      ceiling: `${part}: deliveries/s`,
    },
    r.deliveriesPerS,
  );
  ctx.book.add(
    { scenario: 'peers', engine, name: `${part}: missing + duplicates`, unit: 'count', better: 'lower', target: '0' },
    messages - r.delivered + r.duplicates + r.publishFailed,
  );
  addCpu(ctx, part, engine, r.usage, r.delivered);
  ctx.details.push({ scenario: 'peers', part, variant: engine, run, ...r });
  ctx.log(
    `  peers ${part} ${engine} run ${run}: ${n0(r.deliveriesPerS)} deliveries/s, publish ` +
      `${n0(r.publishPerS)}/s, ${r.delivered}/${messages} delivered, ${r.duplicates} duplicates, max open ` +
      `${r.receiverMaxOpen}${r.publishFailed > 0 ? `; ${r.publishFailed} failed: ${r.firstError}` : ''}; machine ` +
      `${r.usage.machineBusyCores.toFixed(2)} cores`,
  );
  return r.deliveriesPerS;
}

async function rawBurst(
  ctx: BenchContext,
  receiver: Receiver,
  part: string,
  run: number,
  count: number,
): Promise<void> {
  const config = effectiveConfig(ctx, {});
  const raw = await rawReference(ctx, {
    receiver,
    paths: 1,
    inFlight: PEER_IN_FLIGHT,
    count,
    connectionsPerOrigin: config.maxSocketsPerOrigin,
    sign: true,
    idPrefix: `raw_p${part}${run}_`,
  });
  ctx.book.add(
    { scenario: 'peers', engine: 'raw', name: `${part}: deliveries/s`, unit: '/s', better: 'higher' },
    raw.requestsPerS,
  );
  ctx.log(
    `  peers ${part} raw run ${run}: ${n0(raw.requestsPerS)} signed req/s, ${PEER_IN_FLIGHT} in flight, ` +
      `${raw.result.ok}/${raw.result.sent} ok`,
  );
}

/**
 * Records one paced run: `values`, before each publish call → the receiver's first byte; `calls`, before each
 * publish call → its answer (the publish call alone: what of the latency the ingest takes). ms. `cpuMs`: the
 * machine's CPU per message over the run (null: not measured).
 */
function addLatency(
  ctx: BenchContext,
  engine: Variant,
  run: number,
  values: readonly number[],
  calls: readonly number[],
  missing: number,
  cpuMs: number | null,
): void {
  const p50 = quantile(values, 0.5);
  const p99 = quantile(values, 0.99);
  const callP50 = quantile(calls, 0.5);
  ctx.book.add(
    {
      scenario: 'peers',
      engine,
      name: `latency: p50 @${PACED_RATE}/s`,
      unit: 'ms',
      better: 'lower',
      target: engine === 'tidings' ? '≤ 3' : null,
    },
    p50,
  );
  ctx.book.add(
    {
      scenario: 'peers',
      engine,
      name: `latency: p99 @${PACED_RATE}/s`,
      unit: 'ms',
      better: 'lower',
      target: engine === 'tidings' ? '≤ peer' : null,
    },
    p99,
  );
  ctx.book.add(
    {
      scenario: 'peers',
      engine,
      name: `latency:   publish call p50 @${PACED_RATE}/s`,
      unit: 'ms',
      better: 'lower',
      target: null,
    },
    callP50,
  );
  ctx.book.add(
    { scenario: 'peers', engine, name: 'latency: missing', unit: 'count', better: 'lower', target: '0' },
    missing,
  );
  if (cpuMs !== null)
    ctx.book.add(
      {
        scenario: 'peers',
        engine,
        name: `latency: machine CPU ms per message @${PACED_RATE}/s`,
        unit: 'ms',
        better: 'lower',
        target: null,
      },
      cpuMs,
    );
  ctx.log(
    `  peers latency ${engine} run ${run}: before publish → first byte p50 ${p50.toFixed(2)} ms, p99 ` +
      `${p99.toFixed(2)} ms; publish call p50 ${callP50.toFixed(2)} ms (${values.length} messages, ${missing} ` +
      `missing)${cpuMs === null ? '' : `; machine CPU ${cpuMs.toFixed(2)} ms per message`}`,
  );
}

/** Tidings at the paced rate, latency from before each publish call to the receiver's first byte. */
async function tidingsPaced(ctx: BenchContext, receiver: Receiver, run: number, oneProcess = false): Promise<void> {
  const { sizes } = ctx.options;
  const cluster = await startCluster(ctx.base, {
    engine: 'server',
    dispatchers: oneProcess ? 0 : 1,
    oneProcess,
    env: {},
    tag: `p-lat${oneProcess ? '-one' : ''}-${run}`,
  });
  try {
    const client = createApiClient(cluster.apiUrl, ctx.base.apiToken, 50, ctx.options.payloadBytes);
    try {
      const app = await client.createApplication('bench', `bench-p-${run}`);
      await client.createEndpoint(app, `http://127.0.0.1:${receiver.ports[0]}/ep0`);
      await client.publishPaced(app, PACED_RATE, sizes.paceWarmupMs, 50, 'bench.event', sizes.paceWarmupMs + 30_000);
      await receiver.waitForUnique(Math.round((PACED_RATE * sizes.paceWarmupMs) / 1000), 10_000, 5_000);
      await receiver.reset();
      const cpuBefore = machineCpu();
      const pub = await client.publishPaced(
        app,
        PACED_RATE,
        sizes.paceDurationMs,
        50,
        'bench.event',
        sizes.paceDurationMs + 30_000,
      );
      const arrived = await receiver.waitForKeys(
        pub.acks.map((a) => `${a.id}@/ep0`),
        60_000,
        10_000,
      );
      const cpuAfter = machineCpu();
      const values = pub.acks.flatMap((a) => {
        const at = arrived.get(`${a.id}@/ep0`);
        return at === undefined ? [] : [at - a.sentAt];
      });
      addLatency(
        ctx,
        oneProcess ? 'tidings one process' : 'tidings',
        run,
        values,
        pub.acks.map((a) => a.ackAt - a.sentAt),
        pub.acks.length - values.length + pub.failed,
        machineCpuMsPerMessage(cpuBefore, cpuAfter, pub.acks.length),
      );
    } finally {
      await client.close();
    }
  } finally {
    await cluster.stop();
  }
}

/**
 * Runs one workload and returns its result; a workload that fails (a process that exits or is stopped before it
 * is ready, on a shared machine) is logged and noted in `failed`, and the others still run: its run has no figure.
 */
type Attempt = <T>(label: string, fn: () => Promise<T>) => Promise<T | undefined>;

function attempts(ctx: BenchContext, failed: string[]): Attempt {
  return async (label, fn) => {
    try {
      return await fn();
    } catch (error) {
      failed.push(`${label}: ${(error as Error).message}`);
      ctx.log(`  peers ${label} FAILED: ${(error as Error).message}`);
      return undefined;
    }
  };
}

/** Runs every peer of `stores` on one burst, in order, and returns each one's deliveries/s; the others ÷ the peer. */
async function peerBursts(
  ctx: BenchContext,
  stores: PeerStores,
  receiver: Receiver,
  part: string,
  run: number,
  messages: number,
  attempt: Attempt,
): Promise<PeerFigures> {
  const connections = effectiveConfig(ctx, {}).maxSocketsPerOrigin;
  const figures: PeerFigures = {};
  for (const variant of stores.variants) {
    const o = stores.options(
      variant,
      receiver,
      `${part}-${variant.replace(' ', '-')}-${run}`,
      PEER_IN_FLIGHT,
      connections,
    );
    const value = await attempt(`${part} ${variant} run ${run}`, () => peerBurst(ctx, variant, o, part, run, messages));
    if (value === undefined) continue;
    figures[variant] = value;
    if (variant !== 'peer') addRatio(ctx, part, variant, value, figures.peer);
  }
  return figures;
}

/**
 * peers: see the file comment. Redis keys live under a prefix private to this invocation, deleted at start and end.
 * @throws Error naming every workload that failed, once the others have run
 */
export async function scenarioPeers(ctx: BenchContext): Promise<void> {
  const { sizes, runs, payloadBytes } = ctx.options;
  const prefix = `tidings-bench-peer-${randomBytes(4).toString('hex')}`;
  const stores = await openPeerStores(ctx, redisTarget(ctx.options.redisUrl), prefix);
  const connections = effectiveConfig(ctx, {}).maxSocketsPerOrigin;
  const failed: string[] = [];
  const attempt = attempts(ctx, failed);
  /** One Tidings burst, recorded and divided by each peer's figure of the same run; undefined when it failed. */
  const tidings = async (
    part: string,
    engine: Variant,
    run: number,
    receiver: Receiver,
    messages: number,
    env: Record<string, string>,
    peers: PeerFigures,
    keyed = false,
    oneProcess = false,
  ): Promise<number | undefined> => {
    const tag = `p-${part}${engine === 'tidings' ? '' : `-${engine.replace('tidings ', '').replace(' ', '-')}`}-${run}`;
    const spec = {
      tag,
      engine: 'server',
      receiver,
      endpoints: 1,
      routing: 'spread',
      messages,
      mode: 'e2e',
      dispatchers: oneProcess ? 0 : 1,
      oneProcess,
      env,
      publishInFlight: sizes.publishInFlight,
      payloadBytes,
      idempotencyKeys: keyed,
      waitTimeoutMs: sizes.waitTimeoutMs,
    } as const;
    const value = await attempt(`${part} ${engine} run ${run}`, async () =>
      recordTidings(ctx, part, engine, run, await runDelivery(ctx.base, spec)),
    );
    if (value !== undefined) addRatios(ctx, part, engine, value, peers);
    return value;
  };
  const withReceiver = async (delayMs: number, fn: (r: Receiver) => Promise<void>): Promise<void> => {
    const receiver = await startReceiver(
      { delayMs, ports: 1 },
      join(ctx.base.logDir, `receiver-peers-${delayMs}ms.log`),
    );
    try {
      await fn(receiver);
    } finally {
      await receiver.stop();
    }
  };
  const parts = ctx.options.peerParts;
  try {
    if (parts.includes('fast'))
      await withReceiver(0, async (receiver) => {
        const n = sizes.burstMessages;
        for (let run = 1; run <= runs; run += 1) {
          await attempt(`fast raw run ${run}`, () => rawBurst(ctx, receiver, 'fast', run, n));
          const peers = await peerBursts(ctx, stores, receiver, 'fast', run, n, attempt);
          await tidings('fast', 'tidings', run, receiver, n, {}, peers);
          await tidings('fast', 'tidings keyed', run, receiver, n, {}, peers, true);
          await tidings('fast', 'tidings one process', run, receiver, n, {}, peers, false, true);
        }
      });
    if (parts.includes('slow'))
      await withReceiver(100, async (receiver) => {
        const n = Math.min(sizes.burstMessages, SLOW_MESSAGES_MAX);
        const bound = PEER_IN_FLIGHT / 0.1;
        for (let run = 1; run <= runs; run += 1) {
          await attempt(`slow raw run ${run}`, () =>
            rawBurst(ctx, receiver, 'slow', run, Math.min(n, PEER_IN_FLIGHT * 20)),
          );
          const peers = await peerBursts(ctx, stores, receiver, 'slow', run, n, attempt);
          const narrow = await tidings('slow', 'tidings', run, receiver, n, NARROW_WINDOW, peers);
          if (narrow !== undefined) {
            const name = `slow: share of the ${bound}/s bound`;
            ctx.book.add(
              { scenario: 'peers', engine: 'tidings', name, unit: '%', better: 'higher', target: '≥ 97' },
              (100 * narrow) / bound,
            );
          }
          await tidings('slow', 'tidings window', run, receiver, n, {}, peers);
        }
      });
    if (parts.includes('latency'))
      await withReceiver(0, async (receiver) => {
        for (let run = 1; run <= runs; run += 1) {
          for (const variant of stores.variants) {
            const o = stores.options(
              variant,
              receiver,
              `lat-${variant.replace(' ', '-')}-${run}`,
              PEER_IN_FLIGHT,
              connections,
            );
            const l = await attempt(`latency ${variant} run ${run}`, () =>
              runPeerPaced(o, PACED_RATE, sizes.paceWarmupMs, sizes.paceDurationMs),
            );
            if (l !== undefined)
              addLatency(ctx, variant, run, l.sentAtToArrival, l.sentAtToAck, l.missing, l.machineCpuMsPerMessage);
          }
          await attempt(`latency tidings run ${run}`, () => tidingsPaced(ctx, receiver, run));
          await attempt(`latency tidings one process run ${run}`, () => tidingsPaced(ctx, receiver, run, true));
        }
      });
  } finally {
    await stores.close();
  }
  if (failed.length > 0) throw new Error(`${failed.length} workload(s) failed, the others ran: ${failed.join('; ')}`);
}
