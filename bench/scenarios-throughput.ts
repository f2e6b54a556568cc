import { effectiveConfig, n0, rawReference, type BenchContext } from './context.ts';
import { runDelivery, type DeliveryResult, type DeliverySpec } from './delivery-run.ts';
import type { RawHttpRun } from './raw-http.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { join } from 'node:path';

/** Adds the figures every delivery workload has, and its details; prints one progress line. */
function recordDelivery(
  ctx: BenchContext,
  scenario: string,
  run: number,
  r: DeliveryResult,
  extra: { ceiling: string; deliveriesTarget?: string | null; suffix?: string },
): void {
  const suffix = extra.suffix ?? '';
  const engine = r.engine;
  ctx.book.add(
    {
      scenario,
      engine,
      name: `deliveries/s${suffix}`,
      unit: '/s',
      better: 'higher',
      ceiling: extra.ceiling,
      target: engine === 'server' ? (extra.deliveriesTarget ?? null) : null,
    },
    r.deliveriesPerS,
  );
  ctx.book.add(
    { scenario, engine, name: `missing deliveries${suffix}`, unit: 'count', better: 'lower', target: '0' },
    r.expectedDeliveries - r.delivered,
  );
  // CPU per delivery over every process involved (API, dispatchers, their database backends, receiver, load
  // generator): less sensitive to other load on the machine than a rate.
  const cpuS =
    Object.values(r.usage.cpuS).reduce((a, b) => a + b, 0) +
    (r.publishUsage === null ? 0 : Object.values(r.publishUsage.cpuS).reduce((a, b) => a + b, 0));
  ctx.book.add(
    {
      scenario,
      engine,
      name: `CPU ms per delivery${suffix}`,
      unit: 'ms',
      better: 'lower',
      ceiling: `CPU ms per request${suffix.replace(/^ ×\d+$/, '')}`,
    },
    (1000 * cpuS) / Math.max(1, r.delivered),
  );
  ctx.book.add(
    { scenario, engine, name: `publish calls failed${suffix}`, unit: 'count', better: 'lower', target: '0' },
    r.publish.failed,
  );
  if (r.final !== null)
    ctx.book.add(
      { scenario, engine, name: `lost: 2xx but not stored${suffix}`, unit: 'count', better: 'lower', target: '0' },
      r.final.ackedChecked - r.final.ackedStored,
    );
  ctx.details.push({ scenario, run, ...r });
  const c = r.usage.cores;
  const cores = Object.entries(c)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
  ctx.log(
    `  ${scenario} ${engine}${suffix} run ${run}: ${n0(r.deliveriesPerS)} deliveries/s (${r.mode}), publish ` +
      `${n0(r.publish.perS)}/s` +
      ` (p99 call ${r.publish.callP99Ms} ms), ${r.delivered}/${r.expectedDeliveries} delivered, ` +
      `${r.duplicates} duplicates, max open ${r.receiverMaxOpen};` +
      ' final states ' +
      `${JSON.stringify(r.final?.states ?? null)}${r.final?.error === undefined ? '' : ` (${r.final.error})`};` +
      ` cores: ${cores}; machine ` +
      `${r.usage.machineBusyCores.toFixed(2)}/${r.usage.machineCores}` +
      (r.publish.failed > 0 ? `; ${r.publish.failed} publish failures: ${r.publish.firstError}` : ''),
  );
}

function recordRaw(
  ctx: BenchContext,
  scenario: string,
  run: number,
  name: string,
  raw: RawHttpRun,
  cpuFigure = true,
): void {
  ctx.book.add({ scenario, engine: 'raw', name, unit: '/s', better: 'higher' }, raw.requestsPerS);
  if (cpuFigure && raw.receiverCpuS !== null) {
    ctx.book.add(
      { scenario, engine: 'raw', name: 'CPU ms per request', unit: 'ms', better: 'lower' },
      (1000 * (raw.cpuS + raw.receiverCpuS)) / Math.max(1, raw.result.ok),
    );
  }
  ctx.details.push({ scenario, run, raw: name, ...raw, result: { ...raw.result, ids: undefined, sentAt: undefined } });
  ctx.log(
    `  ${scenario} raw ${name} run ${run}: ${n0(raw.requestsPerS)} req/s, ${raw.result.ok}/${raw.result.sent} ` +
      'ok, max in flight ' +
      `${raw.result.maxInFlight}${raw.result.failed > 0 ? `, first error ${raw.result.firstError}` : ''}`,
  );
}

function spec(
  ctx: BenchContext,
  partial: Omit<DeliverySpec, 'publishInFlight' | 'payloadBytes' | 'idempotencyKeys' | 'waitTimeoutMs'>,
): DeliverySpec {
  return {
    ...partial,
    publishInFlight: ctx.options.sizes.publishInFlight,
    payloadBytes: ctx.options.payloadBytes,
    idempotencyKeys: ctx.options.idempotencyKeys,
    waitTimeoutMs: ctx.options.sizes.waitTimeoutMs,
  };
}

async function withReceiver<T>(
  ctx: BenchContext,
  delayMs: number,
  ports: number,
  fn: (r: Receiver) => Promise<T>,
): Promise<T> {
  const receiver = await startReceiver({ delayMs, ports }, join(ctx.base.logDir, `receiver-${delayMs}ms.log`));
  try {
    return await fn(receiver);
  } finally {
    await receiver.stop();
  }
}

/** burst: a burst of messages, fast receiver (0 ms), publishing and dispatching at once (end to end). */
export async function scenarioBurst(ctx: BenchContext): Promise<void> {
  const { sizes, engines, runs } = ctx.options;
  const config = effectiveConfig(ctx, {});
  await withReceiver(ctx, 0, 1, async (receiver) => {
    for (let run = 1; run <= runs; run += 1) {
      const raw = {
        receiver,
        paths: 1,
        inFlight: config.concurrency,
        count: sizes.burstMessages,
        connectionsPerOrigin: config.maxSocketsPerOrigin,
      };
      recordRaw(
        ctx,
        'burst',
        run,
        'req/s signed',
        await rawReference(ctx, { ...raw, sign: true, idPrefix: `raw_a${run}s_` }),
      );
      recordRaw(
        ctx,
        'burst',
        run,
        'req/s unsigned',
        await rawReference(ctx, { ...raw, sign: false, idPrefix: `raw_a${run}u_` }),
        false,
      );
      for (const engine of engines) {
        const r = await runDelivery(
          ctx.base,
          spec(ctx, {
            tag: `burst-${engine}-${run}`,
            engine,
            receiver,
            endpoints: 1,
            routing: 'spread',
            messages: sizes.burstMessages,
            mode: 'e2e',
            dispatchers: 1,
            env: {},
          }),
        );
        recordDelivery(ctx, 'burst', run, r, { ceiling: 'req/s signed', deliveriesTarget: '≥ 7500 (floor 5000)' });
        ctx.book.add(
          {
            scenario: 'burst',
            engine,
            name: 'publish msgs/s',
            unit: '/s',
            better: 'higher',
            ceiling: 'req/s unsigned',
          },
          r.publish.perS,
        );
        ctx.book.add(
          {
            scenario: 'burst',
            engine,
            name: 'last attempt after burst end',
            unit: 'ms',
            better: 'lower',
            target: engine === 'server' ? '≤ 3000' : null,
          },
          r.lastAfterBurstMs,
        );
      }
    }
  });
}

/**
 * slow-drain: the same burst with the 100 ms receiver: the in-flight window is the limit (drain of the accepted
 * backlog).
 */
export async function scenarioSlowDrain(ctx: BenchContext): Promise<void> {
  const { sizes, engines, runs } = ctx.options;
  const config = effectiveConfig(ctx, {});
  const bound = config.concurrency / 0.1;
  await withReceiver(ctx, 100, 1, async (receiver) => {
    for (let run = 1; run <= runs; run += 1) {
      const count = Math.min(sizes.burstMessages, config.concurrency * 20);
      recordRaw(
        ctx,
        'slow-drain',
        run,
        'req/s signed',
        await rawReference(ctx, {
          receiver,
          paths: 1,
          inFlight: config.concurrency,
          count,
          connectionsPerOrigin: config.maxSocketsPerOrigin,
          sign: true,
          idPrefix: `raw_b${run}_`,
        }),
      );
      ctx.book.add(
        {
          scenario: 'slow-drain',
          engine: 'raw',
          name: 'in-flight bound (window ÷ 0.1 s)',
          unit: '/s',
          better: 'higher',
        },
        bound,
      );
      for (const engine of engines) {
        const r = await runDelivery(
          ctx.base,
          spec(ctx, {
            tag: `slow-drain-${engine}-${run}`,
            engine,
            receiver,
            endpoints: 1,
            routing: 'spread',
            messages: sizes.burstMessages,
            mode: 'drain',
            dispatchers: 1,
            env: {},
          }),
        );
        recordDelivery(ctx, 'slow-drain', run, r, { ceiling: 'req/s signed', deliveriesTarget: '≥ 4500' });
        ctx.book.add(
          {
            scenario: 'slow-drain',
            engine,
            name: 'share of in-flight bound',
            unit: '%',
            better: 'higher',
            target: engine === 'server' ? '≥ 97' : null,
          },
          (100 * r.deliveriesPerS) / bound,
        );
        ctx.book.add(
          {
            scenario: 'slow-drain',
            engine,
            name: 'in flight reached',
            unit: 'count',
            better: 'higher',
            target: String(config.concurrency),
          },
          r.receiverMaxOpen,
        );
      }
    }
  });
}

/** The smallest divisor of `endpoints` that is at least `atLeast` (so endpoints spread evenly over ports). */
function portsFor(endpoints: number, atLeast: number): number {
  for (let d = Math.max(1, atLeast); d <= endpoints; d += 1) if (endpoints % d === 0) return d;
  return Math.max(1, atLeast);
}

/**
 * wide-window: 1 s receiver, a large in-flight window spread over many endpoints and several receiver ports; memory per
 * in-flight.
 */
export async function scenarioWideWindow(ctx: BenchContext): Promise<void> {
  const { sizes, engines, runs } = ctx.options;
  const env = { TIDINGS_CONCURRENCY: String(sizes.slowInFlight) };
  const config = effectiveConfig(ctx, env);
  const ports = portsFor(sizes.slowEndpoints, Math.max(2, Math.ceil(sizes.slowInFlight / config.maxSocketsPerOrigin)));
  const bound = sizes.slowInFlight / 1;
  await withReceiver(ctx, 1000, ports, async (receiver) => {
    for (let run = 1; run <= runs; run += 1) {
      const raw = await rawReference(ctx, {
        receiver,
        paths: sizes.slowEndpoints,
        inFlight: sizes.slowInFlight,
        count: sizes.slowInFlight * 5,
        connectionsPerOrigin: config.maxSocketsPerOrigin,
        sign: true,
        idPrefix: `raw_c${run}_`,
      });
      recordRaw(ctx, 'wide-window', run, 'req/s signed', raw);
      const rawPerInFlight = (raw.rssPeakBytes - raw.rssIdleBytes) / 1024 / Math.max(1, raw.result.maxInFlight);
      ctx.book.add(
        { scenario: 'wide-window', engine: 'raw', name: 'memory per in-flight', unit: 'KiB', better: 'lower' },
        rawPerInFlight,
      );
      for (const engine of engines) {
        const r = await runDelivery(
          ctx.base,
          spec(ctx, {
            tag: `wide-window-${engine}-${run}`,
            engine,
            receiver,
            endpoints: sizes.slowEndpoints,
            routing: 'spread',
            messages: sizes.slowMessages,
            mode: 'drain',
            dispatchers: 1,
            env,
          }),
        );
        recordDelivery(ctx, 'wide-window', run, r, {
          ceiling: 'req/s signed',
          deliveriesTarget: `≥ ${Math.round(0.95 * bound)}`,
        });
        ctx.book.add(
          {
            scenario: 'wide-window',
            engine,
            name: 'share of in-flight bound',
            unit: '%',
            better: 'higher',
            target: engine === 'server' ? '≥ 95' : null,
          },
          (100 * r.deliveriesPerS) / bound,
        );
        ctx.book.add(
          {
            scenario: 'wide-window',
            engine,
            name: 'in flight reached',
            unit: 'count',
            better: 'higher',
            target: String(sizes.slowInFlight),
          },
          r.receiverMaxOpen,
        );
        const perInFlight =
          (r.dispatcherRssPeakBytes - r.dispatcherRssIdleBytes) / 1024 / Math.max(1, r.receiverMaxOpen);
        ctx.book.add(
          {
            scenario: 'wide-window',
            engine,
            name: 'memory per in-flight',
            unit: 'KiB',
            better: 'lower',
            ceiling: 'memory per in-flight',
            target: engine === 'server' ? '≤ 1.5 × raw' : null,
          },
          perInFlight,
        );
      }
    }
  });
}

/** scale-out: 1, 2, 4 dispatcher processes on one database draining the same backlog (server only). */
export async function scenarioScaleOut(ctx: BenchContext): Promise<void> {
  const { sizes, runs } = ctx.options;
  if (!ctx.options.engines.includes('server')) return;
  const config = effectiveConfig(ctx, {});
  await withReceiver(ctx, 0, 1, async (receiver) => {
    for (let run = 1; run <= runs; run += 1) {
      let single = Number.NaN;
      for (const k of sizes.dispatcherCounts) {
        const raw = await rawReference(ctx, {
          receiver,
          paths: 1,
          inFlight: config.concurrency * k,
          count: sizes.burstMessages,
          connectionsPerOrigin: config.maxSocketsPerOrigin * k,
          sign: true,
          idPrefix: `raw_e${run}_${k}_`,
        });
        recordRaw(ctx, 'scale-out', run, `req/s signed ×${k}`, raw, k === sizes.dispatcherCounts[0]);
        const r = await runDelivery(
          ctx.base,
          spec(ctx, {
            tag: `scale-out-${k}-${run}`,
            engine: 'server',
            receiver,
            endpoints: 1,
            routing: 'spread',
            messages: sizes.burstMessages,
            mode: 'drain',
            dispatchers: k,
            env: {},
          }),
        );
        recordDelivery(ctx, 'scale-out', run, r, { ceiling: `req/s signed ×${k}`, suffix: ` ×${k}` });
        ctx.book.add(
          {
            scenario: 'scale-out',
            engine: 'server',
            name: `machine busy cores ×${k}`,
            unit: 'cores',
            better: 'lower',
            target: `of ${r.usage.machineCores}`,
          },
          r.usage.machineBusyCores,
        );
        for (const [role, cores] of Object.entries(r.usage.cores)) {
          ctx.book.add(
            { scenario: 'scale-out', engine: 'server', name: `cores ${role} ×${k}`, unit: 'cores', better: 'lower' },
            cores,
          );
        }
        if (k === 1) single = r.deliveriesPerS;
        else
          ctx.book.add(
            {
              scenario: 'scale-out',
              engine: 'server',
              name: `speed-up ×${k} vs ×1`,
              unit: '×',
              better: 'higher',
              target: k === 2 ? '≥ 1.6' : null,
            },
            r.deliveriesPerS / single,
          );
      }
    }
  });
}

/** fan-out: every message to 10 endpoints, published and dispatched at once (end to end). */
export async function scenarioFanOut(ctx: BenchContext): Promise<void> {
  const { sizes, engines, runs } = ctx.options;
  const config = effectiveConfig(ctx, {});
  await withReceiver(ctx, 0, 1, async (receiver) => {
    for (let run = 1; run <= runs; run += 1) {
      const count = sizes.fanOutMessages * sizes.fanOutEndpoints;
      recordRaw(
        ctx,
        'fan-out',
        run,
        'req/s signed',
        await rawReference(ctx, {
          receiver,
          paths: sizes.fanOutEndpoints,
          inFlight: config.concurrency,
          count,
          connectionsPerOrigin: config.maxSocketsPerOrigin,
          sign: true,
          idPrefix: `raw_f${run}_`,
        }),
      );
      for (const engine of engines) {
        const r = await runDelivery(
          ctx.base,
          spec(ctx, {
            tag: `fan-out-${engine}-${run}`,
            engine,
            receiver,
            endpoints: sizes.fanOutEndpoints,
            routing: 'fanOut',
            messages: sizes.fanOutMessages,
            mode: 'e2e',
            dispatchers: 1,
            env: {},
          }),
        );
        recordDelivery(ctx, 'fan-out', run, r, { ceiling: 'req/s signed' });
        ctx.book.add(
          { scenario: 'fan-out', engine, name: 'publish msgs/s (×10 deliveries)', unit: '/s', better: 'higher' },
          r.publish.perS,
        );
      }
    }
  });
}
