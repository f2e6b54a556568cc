import { join } from 'node:path';
import { effectiveConfig, n0, type BenchContext } from './context.ts';
import { benchPayload, createApiClient } from './load.ts';
import { runRawHttp } from './raw-http.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { quantile, round } from './stats.ts';
import pg from 'pg';
import { deliveryStates } from './pg-stats.ts';
import { machineCpu, machineCpuMsPerMessage } from './procs.ts';
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
  return {
    count: values.length,
    missing,
    p50: round(quantile(values, 0.5), 3),
    p99: round(quantile(values, 0.99), 3),
    max: round(quantile(values, 1), 3),
  };
}

function addLatency(ctx: BenchContext, engine: string, rate: number, l: LatencyFigures, ceiling: boolean): void {
  const target = engine === 'server' && rate <= 200;
  ctx.book.add(
    {
      scenario: 'latency',
      engine,
      name: `p50 @${rate}/s`,
      unit: 'ms',
      better: 'lower',
      ceiling: ceiling ? `p50 @${rate}/s` : null,
      target: target ? '≤ 5' : null,
    },
    l.p50,
  );
  ctx.book.add(
    {
      scenario: 'latency',
      engine,
      name: `p99 @${rate}/s`,
      unit: 'ms',
      better: 'lower',
      ceiling: ceiling ? `p99 @${rate}/s` : null,
      target: target ? '≤ 20' : null,
    },
    l.p99,
  );
  if (ceiling)
    ctx.book.add(
      { scenario: 'latency', engine, name: `missing @${rate}/s`, unit: 'count', better: 'lower', target: '0' },
      l.missing,
    );
}

/*
 * STAGES — the database's own timestamps of each message's first delivery: the timeline rows of the
 * publish (`published`) and of the first claim (`leased`), and the first attempt's record. $1 message ids.
 */
const STAGES = `
SELECT d.message_id AS id,
       extract(epoch FROM min(e.at) FILTER (WHERE e.reason = 'published')) * 1000 AS published_ms,
       extract(epoch FROM min(e.at) FILTER (WHERE e.state = 'leased')) * 1000 AS leased_ms,
       extract(epoch FROM min(a.created_at)) * 1000 AS recorded_ms
FROM deliveries d
JOIN delivery_events e ON e.delivery_id = d.id
LEFT JOIN attempts a ON a.delivery_id = d.id AND a.attempt_number = 1
WHERE d.message_id = ANY($1::text[])
GROUP BY d.message_id`;

/**
 * p50 of each stage of the first delivery, ms (server engine; database and load generator share this machine's clock).
 */
interface Stages {
  /** The load generator's send → publish statement start: request, authentication, parsing, lookups. */
  readonly sentToPublish: number;
  /** Publish statement start → 2xx at the load generator: commit and answer. */
  readonly publishToAck: number;
  /** Publish statement start → claim statement: commit, NOTIFY, wake-up, claim round trips. */
  readonly publishToClaim: number;
  /** Claim statement → receiver's first byte: claim commit, decrypt, sign, send. */
  readonly claimToFirstByte: number;
  /** Receiver's first byte → attempt recorded. */
  readonly firstByteToRecord: number;
}

async function stages(
  url: string,
  acks: readonly { id: string; sentAt: number; ackAt: number }[],
  arrived: ReadonlyMap<string, number>,
): Promise<Stages> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = (
      await client.query<{
        id: string;
        published_ms: string | null;
        leased_ms: string | null;
        recorded_ms: string | null;
      }>(STAGES, [acks.map((a) => a.id)])
    ).rows;
    const ackAt = new Map(acks.map((a) => [a.id, a.ackAt]));
    const sentAt = new Map(acks.map((a) => [a.id, a.sentAt]));
    const toPublish: number[] = [];
    const toAck: number[] = [];
    const toClaim: number[] = [];
    const toByte: number[] = [];
    const toRecord: number[] = [];
    for (const r of rows) {
      const published = Number(r.published_ms);
      const leased = Number(r.leased_ms);
      const recorded = Number(r.recorded_ms);
      const first = arrived.get(`${r.id}@/ep0`);
      const ack = ackAt.get(r.id);
      const sent = sentAt.get(r.id);
      if (r.published_ms !== null && sent !== undefined) toPublish.push(published - sent);
      if (r.published_ms !== null && ack !== undefined) toAck.push(ack - published);
      if (r.published_ms !== null && r.leased_ms !== null) toClaim.push(leased - published);
      if (r.leased_ms !== null && first !== undefined) toByte.push(first - leased);
      if (r.recorded_ms !== null && first !== undefined) toRecord.push(recorded - first);
    }
    const p50 = (v: number[]) => round(quantile(v, 0.5), 3);
    return {
      sentToPublish: p50(toPublish),
      publishToAck: p50(toAck),
      publishToClaim: p50(toClaim),
      claimToFirstByte: p50(toByte),
      firstByteToRecord: p50(toRecord),
    };
  } finally {
    await client.end();
  }
}

/**
 * Raw reference: undici → receiver at the paced rate; latency from handing the request to undici to the receiver's
 * first byte.
 */
async function rawPaced(ctx: BenchContext, receiver: Receiver, rate: number, run: number): Promise<LatencyFigures> {
  await receiver.reset();
  const config = effectiveConfig(ctx, {});
  const r = await runRawHttp({
    urls: [`http://127.0.0.1:${receiver.ports[0]}/ep0`],
    inFlight: PACED_IN_FLIGHT,
    connectionsPerOrigin: config.maxSocketsPerOrigin,
    sign: true,
    body: benchPayload(ctx.options.payloadBytes, 0),
    idPrefix: `raw_d${run}_${rate}_`,
    mode: 'paced',
    count: 0,
    rate,
    durationMs: ctx.options.sizes.paceDurationMs,
    timeoutMs: ctx.options.sizes.paceDurationMs + 30_000,
  });
  const sent = new Map(r.result.ids.map((id, i) => [`${id}@/ep0`, r.result.sentAt[i]!]));
  return latencies(sent, await receiver.waitForKeys([...sent.keys()], 30_000, 5_000));
}

/**
 * One engine: for each rate, a warm-up then a measured paced run; latency from the API's 2xx to the receiver's first
 * byte.
 */
async function tidingsPaced(ctx: BenchContext, receiver: Receiver, engine: Engine, run: number): Promise<void> {
  const { sizes } = ctx.options;
  const cluster = await startCluster(ctx.base, { engine, dispatchers: 1, env: {}, tag: `latency-${engine}-${run}` });
  const acked: string[] = [];
  let stopped = false;
  try {
    const client = createApiClient(
      cluster.apiUrl,
      ctx.base.apiToken,
      PACED_IN_FLIGHT,
      ctx.options.payloadBytes,
      ctx.options.idempotencyKeys,
    );
    const app = await client.createApplication('bench', `bench-d-${run}`);
    await client.createEndpoint(app, `http://127.0.0.1:${receiver.ports[0]}/ep0`);
    try {
      for (const rate of sizes.paceRates) {
        await client.publishPaced(
          app,
          rate,
          sizes.paceWarmupMs,
          PACED_IN_FLIGHT,
          'bench.event',
          sizes.paceWarmupMs + 30_000,
        );
        await receiver.waitForUnique(Math.round((rate * sizes.paceWarmupMs) / 1000), 10_000, 5_000);
        await receiver.reset();
        const cpuBefore = machineCpu();
        const pub = await client.publishPaced(
          app,
          rate,
          sizes.paceDurationMs,
          PACED_IN_FLIGHT,
          'bench.event',
          sizes.paceDurationMs + 30_000,
        );
        for (const a of pub.acks) acked.push(a.id);
        const sent = new Map(pub.acks.map((a) => [`${a.id}@/ep0`, a.ackAt]));
        const arrived = await receiver.waitForKeys([...sent.keys()], 120_000, 30_000);
        // Every process of the machine (load generator and receiver included) from the first publish to the
        // last first attempt, per message: what a message costs at this rate, not at saturation.
        const cpuAfter = machineCpu();
        const perMessage = machineCpuMsPerMessage(cpuBefore, cpuAfter, pub.acks.length);
        const cpuPerMessage = perMessage === null ? null : round(perMessage, 3);
        if (cpuPerMessage !== null)
          ctx.book.add(
            { scenario: 'latency', engine, name: `machine CPU ms per message @${rate}/s`, unit: 'ms', better: 'lower' },
            cpuPerMessage,
          );
        const l = latencies(sent, arrived);
        const stage = cluster.databaseUrl === null ? null : await stages(cluster.databaseUrl, pub.acks, arrived);
        if (stage !== null) {
          for (const [name, ms] of Object.entries(stage))
            ctx.book.add(
              { scenario: 'latency', engine, name: `  stage ${name} p50 @${rate}/s`, unit: 'ms', better: 'lower' },
              ms,
            );
        }
        addLatency(ctx, engine, rate, l, true);
        const achieved = round(pub.acks.length / Math.max(1e-6, (pub.endedAt - pub.startedAt) / 1000), 1);
        ctx.book.add(
          {
            scenario: 'latency',
            engine,
            name: `achieved msgs/s @${rate}/s`,
            unit: '/s',
            better: 'higher',
            target: String(rate),
          },
          achieved,
        );
        ctx.book.add(
          {
            scenario: 'latency',
            engine,
            name: `publish calls failed @${rate}/s`,
            unit: 'count',
            better: 'lower',
            target: '0',
          },
          pub.failed,
        );
        const states = cluster.databaseUrl === null ? null : await deliveryStates(cluster.databaseUrl);
        const calls = pub.acks.map((a) => a.ackAt - a.sentAt);
        const apiP50 = round(quantile(calls, 0.5), 3);
        const apiP99 = round(quantile(calls, 0.99), 3);
        ctx.book.add(
          { scenario: 'latency', engine, name: `publish call p50 @${rate}/s`, unit: 'ms', better: 'lower' },
          apiP50,
        );
        ctx.details.push({
          scenario: 'latency',
          run,
          engine,
          rate,
          achievedPerS: achieved,
          cpuPerMessageMs: cpuPerMessage,
          states,
          stages: stage,
          published: pub.acks.length,
          failed: pub.failed,
          firstError: pub.firstError,
          late: pub.late,
          maxInFlight: pub.maxInFlight,
          latency: l,
          publishCallP50Ms: apiP50,
          publishCallP99Ms: apiP99,
        });
        const stageText =
          stage === null
            ? ''
            : ` stages p50: ${Object.entries(stage)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ')};`;
        ctx.log(
          `  latency ${engine} run ${run} @${rate}/s (achieved ${achieved}/s): ` +
            `2xx→first byte p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms; ` +
            `${l.count}/${pub.acks.length} arrived` +
            (states === null ? '' : ` (states ${JSON.stringify(states)})`) +
            `; publish call p50 ${apiP50} ms p99 ${apiP99} ms;` +
            (cpuPerMessage === null ? '' : ` machine CPU ${cpuPerMessage} ms per message;`) +
            `${stageText} ${pub.late} late sends` +
            (pub.failed > 0 ? `; ${pub.failed} failed: ${pub.firstError}` : ''),
        );
      }
    } finally {
      await client.close();
    }
    stopped = true;
    const report = await cluster.stop(acked);
    if (report.final !== null) {
      ctx.book.add(
        { scenario: 'latency', engine, name: 'lost: 2xx but not stored', unit: 'count', better: 'lower', target: '0' },
        report.final.ackedChecked - report.final.ackedStored,
      );
      ctx.details.push({ scenario: 'latency', run, engine, source: cluster.source, final: report.final });
      ctx.log(
        `  latency ${engine} run ${run}: final states ${JSON.stringify(report.final.states)}; ` +
          `${report.final.ackedStored}/${report.final.ackedChecked} acknowledged messages ` +
          `stored${report.final.error === undefined ? '' : ` (${report.final.error})`}`,
      );
    }
  } finally {
    if (!stopped) await cluster.stop();
  }
}

/** latency: publish → first attempt latency at paced rates, beside the raw-HTTP request latency at the same rates. */
export async function scenarioLatency(ctx: BenchContext): Promise<void> {
  const { sizes, engines, runs } = ctx.options;
  const receiver = await startReceiver({ delayMs: 0, ports: 1 }, join(ctx.base.logDir, 'receiver-d.log'));
  try {
    for (let run = 1; run <= runs; run += 1) {
      for (const rate of sizes.paceRates) {
        const l = await rawPaced(ctx, receiver, rate, run);
        addLatency(ctx, 'raw', rate, l, false);
        ctx.details.push({ scenario: 'latency', run, raw: true, rate, latency: l });
        ctx.log(
          `  latency raw run ${run} @${rate}/s: send→first byte p50 ${l.p50} ms, p99 ${l.p99} ms ` +
            `(${n0(l.count)} requests)`,
        );
      }
      for (const engine of engines) await tidingsPaced(ctx, receiver, engine, run);
    }
  } finally {
    await receiver.stop();
  }
}
