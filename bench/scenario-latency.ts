import { join } from 'node:path';
import { effectiveConfig, n0, type BenchContext } from './context.ts';
import { benchPayload, createApiClient } from './load.ts';
import { runRawHttp } from './raw-http.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { quantile, round } from './stats.ts';
import { deliveryStates } from './pg-stats.ts';
import { startCluster, type Engine } from './tidings.ts';

/** Most publish calls (or raw requests) outstanding in the paced runs; more would no longer be paced. */
const PACED_IN_FLIGHT = 500;

/** Latency percentiles of one paced run, ms. */
interface LatencyFigures {
  readonly count: number;
  readonly missing: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

function latencies(sent: ReadonlyMap<string, number>, arrived: ReadonlyMap<string, number>): LatencyFigures {
  const values: number[] = [];
  let missing = 0;
  for (const [key, at] of sent) {
    const first = arrived.get(key);
    if (first === undefined) missing += 1;
    else values.push(first - at);
  }
  return { count: values.length, missing, p50: round(quantile(values, 0.5), 3), p99: round(quantile(values, 0.99), 3), max: round(quantile(values, 1), 3) };
}

function addLatency(ctx: BenchContext, engine: string, rate: number, l: LatencyFigures, ceiling: boolean): void {
  const target = engine === 'server' && rate <= 200;
  ctx.book.add({ scenario: 'd', engine, name: `p50 @${rate}/s`, unit: 'ms', better: 'lower', ceiling: ceiling ? `p50 @${rate}/s` : null, target: target ? '≤ 5' : null }, l.p50);
  ctx.book.add({ scenario: 'd', engine, name: `p99 @${rate}/s`, unit: 'ms', better: 'lower', ceiling: ceiling ? `p99 @${rate}/s` : null, target: target ? '≤ 20' : null }, l.p99);
  if (ceiling) ctx.book.add({ scenario: 'd', engine, name: `missing @${rate}/s`, unit: 'count', better: 'lower', target: '0' }, l.missing);
}

/** Raw reference: undici → receiver at the paced rate; latency from handing the request to undici to the receiver's first byte. */
async function rawPaced(ctx: BenchContext, receiver: Receiver, rate: number, run: number): Promise<LatencyFigures> {
  await receiver.reset();
  const config = effectiveConfig(ctx, {});
  const r = await runRawHttp({
    urls: [`http://127.0.0.1:${receiver.ports[0]}/ep0`], inFlight: PACED_IN_FLIGHT, connectionsPerOrigin: config.maxSocketsPerOrigin, sign: true,
    body: benchPayload(ctx.options.payloadBytes, 0), idPrefix: `raw_d${run}_${rate}_`, mode: 'paced', count: 0, rate,
    durationMs: ctx.options.sizes.paceDurationMs, timeoutMs: ctx.options.sizes.paceDurationMs + 30_000,
  });
  const sent = new Map(r.result.ids.map((id, i) => [`${id}@/ep0`, r.result.sentAt[i]!]));
  return latencies(sent, await receiver.waitForKeys([...sent.keys()], 30_000, 5_000));
}

/** One engine: for each rate, a warm-up then a measured paced run; latency from the API's 2xx to the receiver's first byte. */
async function tidingsPaced(ctx: BenchContext, receiver: Receiver, engine: Engine, run: number): Promise<void> {
  const { sizes } = ctx.options;
  const cluster = await startCluster(ctx.base, { engine, dispatchers: 1, env: {}, tag: `d-${engine}-${run}` });
  const acked: string[] = [];
  let stopped = false;
  try {
    const client = createApiClient(cluster.apiUrl, ctx.base.apiToken, PACED_IN_FLIGHT, ctx.options.payloadBytes);
    const app = await client.createApplication('bench', `bench-d-${run}`);
    await client.createEndpoint(app, `http://127.0.0.1:${receiver.ports[0]}/ep0`);
    try {
      for (const rate of sizes.paceRates) {
        await client.publishPaced(app, rate, sizes.paceWarmupMs, PACED_IN_FLIGHT, 'bench.event', sizes.paceWarmupMs + 30_000);
        await receiver.waitForUnique(Math.round((rate * sizes.paceWarmupMs) / 1000), 10_000, 5_000);
        await receiver.reset();
        const pub = await client.publishPaced(app, rate, sizes.paceDurationMs, PACED_IN_FLIGHT, 'bench.event', sizes.paceDurationMs + 30_000);
        for (const a of pub.acks) acked.push(a.id);
        const sent = new Map(pub.acks.map((a) => [`${a.id}@/ep0`, a.ackAt]));
        const l = latencies(sent, await receiver.waitForKeys([...sent.keys()], 120_000, 30_000));
        addLatency(ctx, engine, rate, l, true);
        const achieved = round(pub.acks.length / Math.max(1e-6, (pub.endedAt - pub.startedAt) / 1000), 1);
        ctx.book.add({ scenario: 'd', engine, name: `achieved msgs/s @${rate}/s`, unit: '/s', better: 'higher', target: String(rate) }, achieved);
        ctx.book.add({ scenario: 'd', engine, name: `publish calls failed @${rate}/s`, unit: 'count', better: 'lower', target: '0' }, pub.failed);
        const states = cluster.databaseUrl === null ? null : await deliveryStates(cluster.databaseUrl);
        const calls = pub.acks.map((a) => a.ackAt - a.sentAt);
        const apiP50 = round(quantile(calls, 0.5), 3);
        const apiP99 = round(quantile(calls, 0.99), 3);
        ctx.book.add({ scenario: 'd', engine, name: `publish call p50 @${rate}/s`, unit: 'ms', better: 'lower' }, apiP50);
        ctx.details.push({ scenario: 'd', run, engine, rate, achievedPerS: achieved, states, published: pub.acks.length, failed: pub.failed, firstError: pub.firstError, late: pub.late, maxInFlight: pub.maxInFlight, latency: l, publishCallP50Ms: apiP50, publishCallP99Ms: apiP99 });
        ctx.log(`  d ${engine} run ${run} @${rate}/s (achieved ${achieved}/s): 2xx→first byte p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms; ${l.count}/${pub.acks.length} arrived${states === null ? '' : ` (states ${JSON.stringify(states)})`}; publish call p50 ${apiP50} ms p99 ${apiP99} ms; ${pub.late} late sends${pub.failed > 0 ? `; ${pub.failed} failed: ${pub.firstError}` : ''}`);
      }
    } finally {
      await client.close();
    }
    stopped = true;
    const report = await cluster.stop(acked);
    if (report.final !== null) {
      ctx.book.add({ scenario: 'd', engine, name: 'lost: 2xx but not stored', unit: 'count', better: 'lower', target: '0' }, report.final.ackedChecked - report.final.ackedStored);
      ctx.details.push({ scenario: 'd', run, engine, source: cluster.source, final: report.final });
      ctx.log(`  d ${engine} run ${run}: final states ${JSON.stringify(report.final.states)}; ${report.final.ackedStored}/${report.final.ackedChecked} acknowledged messages stored${report.final.error === undefined ? '' : ` (${report.final.error})`}`);
    }
  } finally {
    if (!stopped) await cluster.stop();
  }
}

/** (d) Publish → first attempt latency at paced rates, beside the raw-HTTP request latency at the same rates. */
export async function scenarioD(ctx: BenchContext): Promise<void> {
  const { sizes, engines, runs } = ctx.options;
  const receiver = await startReceiver({ delayMs: 0, ports: 1 }, join(ctx.base.logDir, 'receiver-d.log'));
  try {
    for (let run = 1; run <= runs; run += 1) {
      for (const rate of sizes.paceRates) {
        const l = await rawPaced(ctx, receiver, rate, run);
        addLatency(ctx, 'raw', rate, l, false);
        ctx.details.push({ scenario: 'd', run, raw: true, rate, latency: l });
        ctx.log(`  d raw run ${run} @${rate}/s: send→first byte p50 ${l.p50} ms, p99 ${l.p99} ms (${n0(l.count)} requests)`);
      }
      for (const engine of engines) await tidingsPaced(ctx, receiver, engine, run);
    }
  } finally {
    await receiver.stop();
  }
}
