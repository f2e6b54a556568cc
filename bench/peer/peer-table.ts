import type { FigureResult } from '../report.ts';

const ROWS: readonly { readonly engine: string; readonly label: string }[] = [
  { engine: 'peer', label: 'Fastify + BullMQ (not durable)' },
  { engine: 'bullmq', label: 'BullMQ alone, no HTTP ingest' },
  { engine: 'tidings', label: 'Tidings (PostgreSQL server, `synchronous_commit=on`): API and dispatcher processes' },
  { engine: 'tidings one process', label: 'Tidings, API and dispatcher in one process (`npm start`)' },
  { engine: 'tidings keyed', label: 'Tidings, Idempotency-Key on every publish' },
  { engine: 'tidings window', label: 'Tidings, default window' },
  { engine: 'raw', label: 'raw signed HTTP, 50 in flight, no queue' },
];

function median(results: readonly FigureResult[], engine: string, name: string): number {
  return results.find((r) => r.scenario === 'p' && r.engine === engine && r.name === name)?.summary.median ?? Number.NaN;
}

const n0 = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—');
const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(v >= 10 ? 1 : 2) : '—');

/**
 * The peer table of scenario (p) as Markdown (medians of the runs): deliveries/s with the fast receiver
 * and the 100 ms receiver, each Tidings figure as a ratio to the peer's and to the raw ceiling, latency
 * p50 / p99 from before the publish call, and machine CPU per delivered message.
 */
export function formatPeerTable(results: readonly FigureResult[], cores: number): string {
  const peerFast = median(results, 'peer', 'fast: deliveries/s');
  const rawFast = median(results, 'raw', 'fast: deliveries/s');
  const peerSlow = median(results, 'peer', 'slow: deliveries/s');
  const ratio = (v: number, of: number): string => (Number.isFinite(v) && Number.isFinite(of) && of > 0 ? `${(v / of).toFixed(2)}×` : '—');
  const lines = [
    `Peers, medians of the runs (${cores} cores, all processes on this machine; receivers answer 200 after 0 ms / 100 ms):`,
    '',
    '| | fast receiver, deliveries/s (÷ peer, ÷ raw) | 100 ms receiver, 50 in flight (÷ peer) | before publish → first attempt at 20/s, p50 / p99 | machine CPU per message, fast |',
    '|---|---|---|---|---|',
  ];
  for (const row of ROWS) {
    const fast = median(results, row.engine, 'fast: deliveries/s');
    const slow = median(results, row.engine, 'slow: deliveries/s');
    const p50 = median(results, row.engine, 'latency: p50 @20/s');
    const p99 = median(results, row.engine, 'latency: p99 @20/s');
    const cpu = median(results, row.engine, 'fast: machine CPU ms per message');
    const isRaw = row.engine === 'raw';
    const fastCell = !Number.isFinite(fast) ? '—' : isRaw || row.engine === 'peer' ? `${n0(fast)}${isRaw ? ' req/s' : ''}` : `${n0(fast)} (${ratio(fast, peerFast)}, ${ratio(fast, rawFast)})`;
    const slowCell = !Number.isFinite(slow) ? '—' : isRaw || row.engine === 'peer' ? `${n0(slow)} (${((100 * slow) / 500).toFixed(0)} % of 500)` : `${n0(slow)} (${ratio(slow, peerSlow)}${row.engine === 'tidings window' ? '' : `, ${((100 * slow) / 500).toFixed(0)} % of 500`})`;
    const latCell = Number.isFinite(p50) ? `${ms(p50)} / ${ms(p99)} ms` : '—';
    lines.push(`| ${row.label} | ${fastCell} | ${slowCell} | ${latCell} | ${Number.isFinite(cpu) ? `${ms(cpu)} ms` : '—'} |`);
  }
  return lines.join('\n');
}
