/**
 * transports (`npm run bench -- --transports`): the same workloads over each transport (docs/guides/transports.md):
 * TIDINGS_TRANSPORT=postgres (the claim and the publish hand-off), rabbitmq and nats (the outbox, the broker and the
 * fenced claim by id), on the machine's RabbitMQ and NATS servers, one API and one dispatcher process on the PostgreSQL
 * server. Workloads: a burst to the 0 ms receiver (deliveries/s; the burst's latency as the last attempt after the
 * burst's last 2xx), the same burst to the 100 ms receiver (the window drains it), and the PostgreSQL backends' CPU per
 * delivery of each: what the broker costs or saves the database. Each run's broker names are under a prefix of its
 * own, deleted at the end.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { deleteNatsTopology, NATS_URL } from '../test/support/nats.ts';
import { deleteTopology, RABBITMQ_URL } from '../test/support/rabbitmq.ts';
import { effectiveConfig, n0, type BenchContext } from './context.ts';
import { runDelivery, type DeliveryResult } from './delivery-run.ts';
import { startReceiver, type Receiver } from './receiver.ts';

/** The transports compared, with the settings that select each and how its broker names are deleted. */
const TRANSPORTS = [
  { name: 'postgres', env: () => ({ TIDINGS_TRANSPORT: 'postgres' }), cleanup: async () => undefined },
  {
    name: 'rabbitmq',
    env: (prefix: string) => ({
      TIDINGS_TRANSPORT: 'rabbitmq',
      TIDINGS_RABBITMQ_URL: process.env.BENCH_RABBITMQ_URL ?? RABBITMQ_URL,
      TIDINGS_BROKER_PREFIX: prefix,
    }),
    cleanup: (prefix: string, shards: number) => deleteTopology(prefix, shards),
  },
  {
    name: 'nats',
    env: (prefix: string) => ({
      TIDINGS_TRANSPORT: 'nats',
      TIDINGS_NATS_URL: process.env.BENCH_NATS_URL ?? NATS_URL,
      TIDINGS_BROKER_PREFIX: prefix,
    }),
    cleanup: (prefix: string) => deleteNatsTopology(prefix),
  },
] as const;

/** One workload on one transport: a fresh deployment, its broker names deleted afterwards. */
async function workload(
  ctx: BenchContext,
  transport: (typeof TRANSPORTS)[number],
  receiver: Receiver,
  tag: string,
  messages: number,
): Promise<DeliveryResult> {
  const prefix = `tidings-bench-${randomBytes(4).toString('hex')}`;
  const env = transport.env(prefix);
  const shards = effectiveConfig(ctx, env).brokerShards;
  try {
    return await runDelivery(ctx.base, {
      tag,
      engine: 'server',
      receiver,
      endpoints: 1,
      routing: 'spread',
      messages,
      mode: 'e2e',
      dispatchers: 1,
      env,
      publishInFlight: ctx.options.sizes.publishInFlight,
      payloadBytes: ctx.options.payloadBytes,
      idempotencyKeys: ctx.options.idempotencyKeys,
      waitTimeoutMs: ctx.options.sizes.waitTimeoutMs,
    });
  } finally {
    await transport.cleanup(prefix, shards).catch((error: unknown) => ctx.log(`  ${tag}: cleanup failed: ${error}`));
  }
}

/** Adds one workload's figures for its transport. */
function record(ctx: BenchContext, transport: string, part: string, run: number, r: DeliveryResult): void {
  const figure = (name: string, unit: string, better: 'higher' | 'lower', value: number): void =>
    ctx.book.add({ scenario: 'transports', engine: transport, name: `${part}: ${name}`, unit, better }, value);
  figure('deliveries/s', '/s', 'higher', r.deliveriesPerS);
  figure('missing deliveries', 'count', 'lower', r.expectedDeliveries - r.delivered);
  if (part === 'fast') figure('last attempt after burst end', 'ms', 'lower', r.lastAfterBurstMs);
  const pgCpuS = r.usage.cpuS.postgres ?? 0;
  figure('PostgreSQL CPU per delivery', 'µs', 'lower', (1e6 * pgCpuS) / Math.max(1, r.delivered));
  const allCpuS = Object.values(r.usage.cpuS).reduce((a, b) => a + b, 0);
  figure('CPU per delivery, every process', 'µs', 'lower', (1e6 * allCpuS) / Math.max(1, r.delivered));
  ctx.details.push({ scenario: 'transports', transport, part, run, ...r });
  ctx.log(
    `  transports ${transport} ${part} run ${run}: ${n0(r.deliveriesPerS)} deliveries/s, ` +
      `${r.delivered}/${r.expectedDeliveries} delivered, ${r.duplicates} duplicates, last after burst ` +
      `${n0(r.lastAfterBurstMs)} ms, PostgreSQL CPU ${n0((1e6 * pgCpuS) / Math.max(1, r.delivered))} µs/delivery`,
  );
}

/** transports: the fast and the 100 ms workloads on each transport, run by run, transports interleaved. */
export async function scenarioTransports(ctx: BenchContext): Promise<void> {
  const { sizes, runs } = ctx.options;
  const config = effectiveConfig(ctx, {});
  const slowMessages = Math.min(sizes.burstMessages, config.concurrency * 20);
  const fast = await startReceiver({ delayMs: 0, ports: 1 }, join(ctx.base.logDir, 'receiver-transports-0ms.log'));
  try {
    const slow = await startReceiver(
      { delayMs: 100, ports: 1 },
      join(ctx.base.logDir, 'receiver-transports-100ms.log'),
    );
    try {
      for (let run = 1; run <= runs; run += 1) {
        for (const t of TRANSPORTS) {
          const tag = `transports-${t.name}-${run}`;
          record(ctx, t.name, 'fast', run, await workload(ctx, t, fast, `${tag}-fast`, sizes.burstMessages));
          record(ctx, t.name, '100 ms', run, await workload(ctx, t, slow, `${tag}-slow`, slowMessages));
        }
      }
    } finally {
      await slow.stop();
    }
  } finally {
    await fast.stop();
  }
}
