/**
 * docs/reference/metrics.md stays true: every metric Tidings registers (apart from prom-client's process
 * metrics) is in its table with its type and label names, and the table names nothing else.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { registerBacklogGauges } from '../src/observability/backlog-gauges.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { registerReadReplicaMetrics } from '../src/observability/read-replica-metrics.ts';
import { registerBrokerMetrics } from '../src/observability/broker-metrics.ts';

test('docs/reference/metrics.md lists every metric with its type and labels, and only those', async () => {
  const { registry } = createMetrics({ defaultMetrics: false });
  registerBacklogGauges(registry, {
    read: async () => ({ due: 0, scheduled: 0, held: 0, leased: 0, breakersOpen: 0, oldestDueAgeMs: 0 }),
    cap: 1,
    cacheMs: 0,
    nowMs: () => 0,
  });
  registerReadReplicaMetrics(registry, { up: () => true, lagNowMs: () => 0 });
  registerBrokerMetrics(registry, { state: () => 'connected', depth: async () => null });
  const code = registry
    .getMetricsAsArray()
    .map((m) => {
      const labels = (m as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
      return `${m.name} ${(m as unknown as { type: string }).type} ${labels.length === 0 ? '—' : labels.join(',')}`;
    })
    .sort();
  const doc = await readFile(new URL('../docs/reference/metrics.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `(tidings_[a-z_]+)` \| (\w+) \| ([^|]+) \|/gm)]
    .map((m) => `${m[1]} ${m[2]} ${m[3]!.trim().replaceAll('`', '').replaceAll(' ', '')}`)
    .sort();
  assert.deepEqual(documented, code);
});
