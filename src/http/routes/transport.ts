import type { Registry } from 'prom-client';
import type { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { commonErrors } from '../schemas/common.ts';
import { transportOut } from '../schemas/transport.ts';

type TransportOut = z.infer<typeof transportOut>;
type BrokerState = NonNullable<TransportOut['state']>;
const BROKER_STATES: readonly string[] = ['connecting', 'connected', 'disconnected', 'stopped'];

/** The sum of a metric's values whose labels include `labels`; null when this process has no such metric. */
async function metricSum(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | null> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return null;
  const { values } = await metric.get();
  const matching = values.filter((v) => Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l));
  return matching.reduce((sum, v) => sum + (Number.isFinite(v.value) ? v.value : 0), 0);
}

/** The broker's depth and counters as this process's metrics hold them (docs/guides/transports.md). */
async function brokerFigures(registry: Registry): Promise<Pick<TransportOut, 'depth' | 'counts'>> {
  const depth = registry.getSingleMetric('tidings_broker_depth');
  let depthOut: TransportOut['depth'] = null;
  if (depth !== undefined) {
    const { values } = await depth.get();
    const of = (queue: string): number | null => {
      const value = values.find((v) => v.labels.queue === queue)?.value;
      return value === undefined || !Number.isFinite(value) ? null : value;
    };
    const waiting = of('deliveries');
    depthOut = waiting === null ? null : { waiting, deadLetters: of('dead_letters') };
  }
  const published = await metricSum(registry, 'tidings_broker_published_total');
  if (published === null) return { depth: depthOut, counts: null };
  const sum = async (name: string, labels?: Record<string, string>): Promise<number> =>
    (await metricSum(registry, name, labels)) ?? 0;
  return {
    depth: depthOut,
    counts: {
      published,
      swept: await sum('tidings_broker_swept_total'),
      publishFailed: await sum('tidings_broker_publish_failed_total'),
      redelivered: await sum('tidings_broker_received_total', { redelivered: 'true' }),
      deadLettered: await sum('tidings_broker_dead_lettered_total'),
      topologyRestored: await sum('tidings_broker_topology_restored_total'),
    },
  };
}

/**
 * Tidings: `GET /api/v1/stats/transport` (operator only) — TIDINGS_TRANSPORT and its health as this process knows it:
 * for postgres whether the process is ready; for a broker the state of this process's connection, the broker's depth
 * and the outbox's counters (the console's overview card). What `/readyz` and `/metrics` say, for a credential.
 */
export function registerTransport(app: Api, deps: Pick<HttpDeps, 'config' | 'ready' | 'readiness' | 'metrics'>): void {
  app.get(
    '/api/v1/stats/transport',
    {
      config: { adminOnly: true },
      schema: {
        tags: ['Stats'],
        summary: 'Transport and its health (Tidings)',
        response: { 200: transportOut, ...commonErrors },
      },
    },
    async (): Promise<TransportOut> => {
      const transport = deps.config.transport;
      if (transport === 'postgres') {
        const ready = await deps.ready().catch(() => false);
        return { transport, state: ready ? 'connected' : 'disconnected', depth: null, counts: null };
      }
      const broker = deps.readiness?.().broker;
      const state = broker !== undefined && BROKER_STATES.includes(broker) ? (broker as BrokerState) : null;
      if (state === null) return { transport, state, depth: null, counts: null };
      return { transport, state, ...(await brokerFigures(deps.metrics.registry)) };
    },
  );
}
