import type { FigureResult } from '../report.ts';

const ROWS: readonly { readonly engine: string; readonly label: string }[] = [
  { engine: 'peer', label: 'Fastify + BullMQ, Redis of --redis-url' },
  { engine: 'peer fsync', label: 'Fastify + BullMQ, private Redis with `appendfsync always`' },
  { engine: 'bullmq', label: 'BullMQ alone, no HTTP ingest' },
  { engine: 'graphile', label: 'Fastify + graphile-worker (PostgreSQL, `synchronous_commit=on`)' },
  { engine: 'tidings', label: 'Tidings (PostgreSQL server, `synchronous_commit=on`): API and dispatcher processes' },
  { engine: 'tidings one process', label: 'Tidings, API and dispatcher in one process (`npm start`)' },
  { engine: 'tidings keyed', label: 'Tidings, Idempotency-Key on every publish' },
  { engine: 'tidings window', label: 'Tidings, default window' },
  { engine: 'raw', label: 'raw signed HTTP, 50 in flight, no queue' },
];

/** The peers each Tidings figure is divided by in the second table, with their column titles. */
const AGAINST: readonly { readonly engine: string; readonly title: string }[] = [
  { engine: 'peer', title: '÷ Fastify + BullMQ' },
  { engine: 'peer fsync', title: '÷ the same, Redis `appendfsync always`' },
  { engine: 'graphile', title: '÷ Fastify + graphile-worker' },
];

function median(results: readonly FigureResult[], engine: string, name: string): number {
  const found = results.find((r) => r.scenario === 'peers' && r.engine === engine && r.name === name);
  return found?.summary.median ?? Number.NaN;
}

const n0 = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—');
const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(v >= 10 ? 1 : 2) : '—');
const times = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '—');
const ratio = (v: number, of: number): string => (Number.isFinite(of) && of > 0 ? times(v / of) : '—');

function fastCell(results: readonly FigureResult[], engine: string): string {
  const fast = median(results, engine, 'fast: deliveries/s');
  if (!Number.isFinite(fast)) return '—';
  if (engine === 'raw') return `${n0(fast)} req/s`;
  if (engine === 'peer') return n0(fast);
  const peer = median(results, 'peer', 'fast: deliveries/s');
  return `${n0(fast)} (${ratio(fast, peer)}, ${ratio(fast, median(results, 'raw', 'fast: deliveries/s'))})`;
}

function slowCell(results: readonly FigureResult[], engine: string): string {
  const slow = median(results, engine, 'slow: deliveries/s');
  if (!Number.isFinite(slow)) return '—';
  const share = `${((100 * slow) / 500).toFixed(0)} % of 500`;
  if (engine === 'raw' || engine === 'peer') return `${n0(slow)} (${share})`;
  const peer = median(results, 'peer', 'slow: deliveries/s');
  return `${n0(slow)} (${ratio(slow, peer)}${engine === 'tidings window' ? '' : `, ${share}`})`;
}

/**
 * The peer tables of the `peers` scenario as Markdown. The first (medians of the runs): deliveries/s with the
 * fast receiver and the 100 ms receiver, each figure as a ratio to the Fastify + BullMQ peer's and to the raw
 * ceiling (ratios of the medians), latency p50 / p99 from before the publish call, and machine CPU per
 * delivered message. The second: each Tidings variant's deliveries/s ÷ each peer's of the same run, the median
 * of those per-run ratios.
 */
export function formatPeerTable(results: readonly FigureResult[], cores: number): string {
  const lines = [
    `Peers, medians of the runs (${cores} cores, all processes on this machine; ` +
      'receivers answer 200 after 0 ms / 100 ms):',
    '',
    '| | fast receiver, deliveries/s (÷ peer, ÷ raw) | 100 ms receiver, 50 in flight (÷ peer) ' +
      '| before publish → first attempt at 20/s, p50 / p99 | machine CPU per message, fast |',
    '|---|---|---|---|---|',
  ];
  for (const row of ROWS) {
    const p50 = median(results, row.engine, 'latency: p50 @20/s');
    const p99 = median(results, row.engine, 'latency: p99 @20/s');
    const cpu = median(results, row.engine, 'fast: machine CPU ms per message');
    const latCell = Number.isFinite(p50) ? `${ms(p50)} / ${ms(p99)} ms` : '—';
    const cpuCell = Number.isFinite(cpu) ? `${ms(cpu)} ms` : '—';
    const cells = [row.label, fastCell(results, row.engine), slowCell(results, row.engine), latCell, cpuCell];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push('', 'Tidings ÷ each peer, fast receiver / 100 ms receiver (medians of the same-run ratios):', '');
  lines.push(`| | ${AGAINST.map((a) => a.title).join(' | ')} |`, `|---|${AGAINST.map(() => '---').join('|')}|`);
  for (const row of ROWS.filter((r) => r.engine.startsWith('tidings'))) {
    const cells = AGAINST.map((a) => {
      const fast = median(results, row.engine, `fast: ÷ ${a.engine} (same run)`);
      const slow = median(results, row.engine, `slow: ÷ ${a.engine} (same run)`);
      return `${times(fast)} / ${times(slow)}`;
    });
    lines.push(`| ${row.label} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
