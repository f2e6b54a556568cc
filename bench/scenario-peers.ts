/**
 * (p) Tidings beside what teams build instead, in the same run (`npm run bench -- --peers`): the peer
 * (Fastify + BullMQ, not durable; peer/), BullMQ alone without HTTP ingest, and the raw signed-HTTP
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
import { deleteKeys } from './peer/peer.ts';
import { runPeerDelivery, runPeerPaced, type PeerRunOptions } from './peer/peer-run.ts';
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

/** `tidings one process`: the API and the dispatcher in one `serve` process, as `npm start` runs them; the other Tidings variants run an API process beside one dispatcher process. */
type Variant = 'tidings' | 'tidings keyed' | 'tidings window' | 'tidings one process' | 'peer' | 'bullmq' | 'raw';

/** CPU per delivered message over the whole machine (/proc/stat) and per role (/proc/<pid>/stat), and shares. */
function addCpu(ctx: BenchContext, part: string, engine: Variant, usage: UsageReport, delivered: number): void {
  const per = Math.max(1, delivered);
  const machineMs = (1000 * usage.machineBusyCores * usage.wallS) / per;
  const rolesS = Object.values(usage.cpuS).reduce((a, b) => a + b, 0);
  ctx.book.add({ scenario: 'p', engine, name: `${part}: machine CPU ms per message`, unit: 'ms', better: 'lower', target: engine === 'tidings' && part === 'fast' ? '≤ 0.35' : null }, machineMs);
  ctx.book.add({ scenario: 'p', engine, name: `${part}: roles' CPU ms per message`, unit: 'ms', better: 'lower' }, (1000 * rolesS) / per);
  for (const [role, s] of Object.entries(usage.cpuS)) {
    ctx.book.add({ scenario: 'p', engine, name: `${part}:   share ${role}`, unit: '%', better: 'lower' }, (100 * s) / Math.max(1e-9, rolesS));
  }
}

function addRatio(ctx: BenchContext, part: string, engine: Variant, value: number, peer: number): void {
  if (Number.isFinite(value) && Number.isFinite(peer) && peer > 0) {
    ctx.book.add({ scenario: 'p', engine, name: `${part}: ÷ peer (same run)`, unit: '×', better: 'higher', target: part === 'fast' && engine === 'tidings' ? '≥ 1.3' : part === 'fast' && engine === 'tidings keyed' ? '≥ 1.1' : null }, value / peer);
  }
}

function recordTidings(ctx: BenchContext, part: string, engine: Variant, run: number, r: DeliveryResult): number {
  ctx.book.add({ scenario: 'p', engine, name: `${part}: deliveries/s`, unit: '/s', better: 'higher', ceiling: `${part}: deliveries/s` }, r.deliveriesPerS);
  ctx.book.add({ scenario: 'p', engine, name: `${part}: missing + duplicates`, unit: 'count', better: 'lower', target: '0' }, r.expectedDeliveries - r.delivered + r.duplicates + r.publish.failed);
  addCpu(ctx, part, engine, r.usage, r.delivered);
  ctx.details.push({ scenario: 'p', part, variant: engine, run, ...r });
  ctx.log(`  p ${part} ${engine} run ${run}: ${n0(r.deliveriesPerS)} deliveries/s, publish ${n0(r.publish.perS)}/s, ${r.delivered}/${r.expectedDeliveries} delivered, ${r.duplicates} duplicates, max open ${r.receiverMaxOpen}; machine ${r.usage.machineBusyCores.toFixed(2)} cores`);
  return r.deliveriesPerS;
}

async function peerBurst(ctx: BenchContext, o: PeerRunOptions, part: string, run: number, messages: number): Promise<number> {
  const engine: Variant = o.ingest ? 'peer' : 'bullmq';
  const r = await runPeerDelivery(o, messages);
  ctx.book.add({ scenario: 'p', engine, name: `${part}: deliveries/s`, unit: '/s', better: 'higher', ceiling: `${part}: deliveries/s` }, r.deliveriesPerS);
  ctx.book.add({ scenario: 'p', engine, name: `${part}: missing + duplicates`, unit: 'count', better: 'lower', target: '0' }, messages - r.delivered + r.duplicates + r.publishFailed);
  addCpu(ctx, part, engine, r.usage, r.delivered);
  ctx.details.push({ scenario: 'p', part, variant: engine, run, ...r });
  ctx.log(`  p ${part} ${engine} run ${run}: ${n0(r.deliveriesPerS)} deliveries/s, publish ${n0(r.publishPerS)}/s, ${r.delivered}/${messages} delivered, ${r.duplicates} duplicates, max open ${r.receiverMaxOpen}${r.publishFailed > 0 ? `; ${r.publishFailed} failed: ${r.firstError}` : ''}; machine ${r.usage.machineBusyCores.toFixed(2)} cores`);
  return r.deliveriesPerS;
}

async function rawBurst(ctx: BenchContext, receiver: Receiver, part: string, run: number, count: number): Promise<void> {
  const config = effectiveConfig(ctx, {});
  const raw = await rawReference(ctx, { receiver, paths: 1, inFlight: PEER_IN_FLIGHT, count, connectionsPerOrigin: config.maxSocketsPerOrigin, sign: true, idPrefix: `raw_p${part}${run}_` });
  ctx.book.add({ scenario: 'p', engine: 'raw', name: `${part}: deliveries/s`, unit: '/s', better: 'higher' }, raw.requestsPerS);
  ctx.log(`  p ${part} raw run ${run}: ${n0(raw.requestsPerS)} signed req/s, ${PEER_IN_FLIGHT} in flight, ${raw.result.ok}/${raw.result.sent} ok`);
}

/**
 * Records one paced run: `values`, before each publish call → the receiver's first byte; `calls`, before each
 * publish call → its answer (the publish call alone: what of the latency the ingest takes). ms. `cpuMs`: the
 * machine's CPU per message over the run (null: not measured).
 */
function addLatency(ctx: BenchContext, engine: Variant, run: number, values: readonly number[], calls: readonly number[], missing: number, cpuMs: number | null): void {
  const p50 = quantile(values, 0.5);
  const p99 = quantile(values, 0.99);
  const callP50 = quantile(calls, 0.5);
  ctx.book.add({ scenario: 'p', engine, name: `latency: p50 @${PACED_RATE}/s`, unit: 'ms', better: 'lower', target: engine === 'tidings' ? '≤ 3' : null }, p50);
  ctx.book.add({ scenario: 'p', engine, name: `latency: p99 @${PACED_RATE}/s`, unit: 'ms', better: 'lower', target: engine === 'tidings' ? '≤ peer' : null }, p99);
  ctx.book.add({ scenario: 'p', engine, name: `latency:   publish call p50 @${PACED_RATE}/s`, unit: 'ms', better: 'lower', target: null }, callP50);
  ctx.book.add({ scenario: 'p', engine, name: 'latency: missing', unit: 'count', better: 'lower', target: '0' }, missing);
  if (cpuMs !== null) ctx.book.add({ scenario: 'p', engine, name: `latency: machine CPU ms per message @${PACED_RATE}/s`, unit: 'ms', better: 'lower', target: null }, cpuMs);
  ctx.log(`  p latency ${engine} run ${run}: before publish → first byte p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms; publish call p50 ${callP50.toFixed(2)} ms (${values.length} messages, ${missing} missing)${cpuMs === null ? '' : `; machine CPU ${cpuMs.toFixed(2)} ms per message`}`);
}

/** Tidings at the paced rate, latency from before each publish call to the receiver's first byte. */
async function tidingsPaced(ctx: BenchContext, receiver: Receiver, run: number, oneProcess = false): Promise<void> {
  const { sizes } = ctx.options;
  const cluster = await startCluster(ctx.base, { engine: 'server', dispatchers: oneProcess ? 0 : 1, oneProcess, env: {}, tag: `p-lat${oneProcess ? '-one' : ''}-${run}` });
  try {
    const client = createApiClient(cluster.apiUrl, ctx.base.apiToken, 50, ctx.options.payloadBytes);
    try {
      const app = await client.createApplication('bench', `bench-p-${run}`);
      await client.createEndpoint(app, `http://127.0.0.1:${receiver.ports[0]}/ep0`);
      await client.publishPaced(app, PACED_RATE, sizes.paceWarmupMs, 50, 'bench.event', sizes.paceWarmupMs + 30_000);
      await receiver.waitForUnique(Math.round((PACED_RATE * sizes.paceWarmupMs) / 1000), 10_000, 5_000);
      await receiver.reset();
      const cpuBefore = machineCpu();
      const pub = await client.publishPaced(app, PACED_RATE, sizes.paceDurationMs, 50, 'bench.event', sizes.paceDurationMs + 30_000);
      const arrived = await receiver.waitForKeys(pub.acks.map((a) => `${a.id}@/ep0`), 60_000, 10_000);
      const cpuAfter = machineCpu();
      const values = pub.acks.flatMap((a) => { const at = arrived.get(`${a.id}@/ep0`); return at === undefined ? [] : [at - a.sentAt]; });
      addLatency(ctx, oneProcess ? 'tidings one process' : 'tidings', run, values, pub.acks.map((a) => a.ackAt - a.sentAt), pub.acks.length - values.length + pub.failed,
        machineCpuMsPerMessage(cpuBefore, cpuAfter, pub.acks.length));
    } finally {
      await client.close();
    }
  } finally {
    await cluster.stop();
  }
}

/** (p) See the file comment. Redis keys live under a prefix private to this invocation, deleted at start and end. */
export async function scenarioP(ctx: BenchContext): Promise<void> {
  const { sizes, runs, payloadBytes } = ctx.options;
  const redis = redisTarget(ctx.options.redisUrl);
  const prefix = `tidings-bench-peer-${randomBytes(4).toString('hex')}`;
  await deleteKeys(redis, prefix);
  const config = effectiveConfig(ctx, {});
  const peerOptions = (receiver: Receiver, ingest: boolean, tag: string): PeerRunOptions => ({
    redis, prefix, concurrency: PEER_IN_FLIGHT, connectionsPerOrigin: config.maxSocketsPerOrigin, ingest, tag, logDir: ctx.base.logDir,
    receiver, payloadBytes, publishInFlight: sizes.publishInFlight, waitTimeoutMs: sizes.waitTimeoutMs,
  });
  const tidings = (receiver: Receiver, tag: string, messages: number, env: Record<string, string>, keyed = false, oneProcess = false) => runDelivery(ctx.base, {
    tag, engine: 'server', receiver, endpoints: 1, routing: 'spread', messages, mode: 'e2e', dispatchers: oneProcess ? 0 : 1, oneProcess, env,
    publishInFlight: sizes.publishInFlight, payloadBytes, idempotencyKeys: keyed, waitTimeoutMs: sizes.waitTimeoutMs,
  });
  const withReceiver = async (delayMs: number, fn: (r: Receiver) => Promise<void>): Promise<void> => {
    const receiver = await startReceiver({ delayMs, ports: 1 }, join(ctx.base.logDir, `receiver-p-${delayMs}ms.log`));
    try {
      await fn(receiver);
    } finally {
      await receiver.stop();
    }
  };
  const parts = ctx.options.peerParts;
  try {
    if (parts.includes('fast')) await withReceiver(0, async (receiver) => {
      const n = sizes.burstMessages;
      for (let run = 1; run <= runs; run += 1) {
        await rawBurst(ctx, receiver, 'fast', run, n);
        const peer = await peerBurst(ctx, peerOptions(receiver, true, `fast-${run}`), 'fast', run, n);
        addRatio(ctx, 'fast', 'bullmq', await peerBurst(ctx, peerOptions(receiver, false, `fast-alone-${run}`), 'fast', run, n), peer);
        addRatio(ctx, 'fast', 'tidings', recordTidings(ctx, 'fast', 'tidings', run, await tidings(receiver, `p-fast-${run}`, n, {})), peer);
        addRatio(ctx, 'fast', 'tidings keyed', recordTidings(ctx, 'fast', 'tidings keyed', run, await tidings(receiver, `p-fast-keyed-${run}`, n, {}, true)), peer);
        addRatio(ctx, 'fast', 'tidings one process', recordTidings(ctx, 'fast', 'tidings one process', run, await tidings(receiver, `p-fast-one-${run}`, n, {}, false, true)), peer);
      }
    });
    if (parts.includes('slow')) await withReceiver(100, async (receiver) => {
      const n = Math.min(sizes.burstMessages, SLOW_MESSAGES_MAX);
      const bound = PEER_IN_FLIGHT / 0.1;
      for (let run = 1; run <= runs; run += 1) {
        await rawBurst(ctx, receiver, 'slow', run, Math.min(n, PEER_IN_FLIGHT * 20));
        const peer = await peerBurst(ctx, peerOptions(receiver, true, `slow-${run}`), 'slow', run, n);
        addRatio(ctx, 'slow', 'bullmq', await peerBurst(ctx, peerOptions(receiver, false, `slow-alone-${run}`), 'slow', run, n), peer);
        const narrow = recordTidings(ctx, 'slow', 'tidings', run, await tidings(receiver, `p-slow-${run}`, n, NARROW_WINDOW));
        addRatio(ctx, 'slow', 'tidings', narrow, peer);
        ctx.book.add({ scenario: 'p', engine: 'tidings', name: `slow: share of the ${bound}/s bound`, unit: '%', better: 'higher', target: '≥ 97' }, (100 * narrow) / bound);
        const wide = recordTidings(ctx, 'slow', 'tidings window', run, await tidings(receiver, `p-slow-window-${run}`, n, {}));
        addRatio(ctx, 'slow', 'tidings window', wide, peer);
      }
    });
    if (parts.includes('latency')) await withReceiver(0, async (receiver) => {
      for (let run = 1; run <= runs; run += 1) {
        for (const ingest of [true, false]) {
          const l = await runPeerPaced(peerOptions(receiver, ingest, `lat-${ingest ? 'peer' : 'alone'}-${run}`), PACED_RATE, sizes.paceWarmupMs, sizes.paceDurationMs);
          addLatency(ctx, ingest ? 'peer' : 'bullmq', run, l.sentAtToArrival, l.sentAtToAck, l.missing, l.machineCpuMsPerMessage);
        }
        await tidingsPaced(ctx, receiver, run);
        await tidingsPaced(ctx, receiver, run, true);
      }
    });
  } finally {
    const left = await deleteKeys(redis, prefix).catch(() => -1);
    ctx.log(`  p: deleted ${left < 0 ? 'no (Redis unreachable)' : left} leftover keys under ${prefix}:*`);
  }
}
