import { round, summarize, type Summary } from './stats.ts';

/** Whether a larger value of a figure is better (throughput) or a smaller one (latency, memory). */
export type Better = 'higher' | 'lower';

/** The identity and meaning of one figure; its values are added run by run. */
export interface FigureDef {
  readonly scenario: string;
  /** `server`, `embedded`, or `raw` for the raw-HTTP reference (the ceiling). */
  readonly engine: string;
  readonly name: string;
  readonly unit: string;
  readonly better: Better;
  /** The target, as text (e.g. "≥ 7500"), or null. */
  readonly target?: string | null;
  /** Name of the `raw` figure of the same scenario that is this figure's ceiling, or null. */
  readonly ceiling?: string | null;
}

/** One figure with the values of every run and their summary. */
export interface FigureResult extends FigureDef {
  readonly summary: Summary;
  /** The ceiling's summary, and this figure's median over the ceiling's median. */
  readonly ceilingSummary: Summary | null;
  readonly ratio: number | null;
}

/** Collects figures across runs, keeping the order in which they were first added. */
export interface FigureBook {
  add(def: FigureDef, value: number): void;
  results(): FigureResult[];
}

const keyOf = (scenario: string, engine: string, name: string): string => `${scenario}|${engine}|${name}`;

/** Makes an empty {@link FigureBook}. */
export function createFigureBook(): FigureBook {
  const defs = new Map<string, FigureDef>();
  const values = new Map<string, number[]>();
  return {
    add(def, value) {
      const key = keyOf(def.scenario, def.engine, def.name);
      if (!defs.has(key)) {
        defs.set(key, def);
        values.set(key, []);
      }
      values.get(key)!.push(value);
    },
    results() {
      const out: FigureResult[] = [];
      for (const [key, def] of defs) {
        const summary = summarize(values.get(key) ?? []);
        const ceilingValues = def.ceiling == null ? undefined : values.get(keyOf(def.scenario, 'raw', def.ceiling));
        const ceilingSummary = ceilingValues === undefined ? null : summarize(ceilingValues);
        // A ratio of a value at or below zero means nothing (a `latency` figure can be negative: the delivery
        // started before the 2xx reached the load generator).
        const ratio =
          ceilingSummary === null ||
          !Number.isFinite(ceilingSummary.median) ||
          ceilingSummary.median <= 0 ||
          summary.median <= 0
            ? null
            : summary.median / ceilingSummary.median;
        out.push({ ...def, target: def.target ?? null, ceiling: def.ceiling ?? null, summary, ceilingSummary, ratio });
      }
      return out;
    },
  };
}

function fmt(value: number, unit: string): string {
  if (!Number.isFinite(value)) return '—';
  if (unit === 'ms' || unit === 'KiB')
    return value >= 100 ? String(Math.round(value)) : value.toFixed(value >= 10 ? 1 : 2);
  if (Math.abs(value) >= 100) return String(Math.round(value));
  return value.toFixed(2);
}

function ratioText(r: FigureResult): string {
  if (r.ratio === null || !Number.isFinite(r.ratio)) return '';
  return r.better === 'higher' ? `${(r.ratio * 100).toFixed(1)} %` : `${r.ratio.toFixed(1)} ×`;
}

/**
 * The stdout table: one line per figure with median, min–max over the runs, the raw-HTTP ceiling's median,
 * the ratio to it (a percentage for throughput, a multiple for latency and memory) and the target
 * docs/guides/benchmark.md states.
 */
export function formatTable(results: readonly FigureResult[]): string {
  const header = ['scen', 'engine', 'figure', 'unit', 'median', 'min–max', 'runs', 'raw ceiling', 'ratio', 'target'];
  const rows = results.map((r) => [
    r.scenario,
    r.engine,
    r.name,
    r.unit,
    fmt(r.summary.median, r.unit),
    `${fmt(r.summary.min, r.unit)}–${fmt(r.summary.max, r.unit)}`,
    String(r.summary.runs.length),
    r.ceilingSummary === null ? '' : fmt(r.ceilingSummary.median, r.unit),
    ratioText(r),
    r.target ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i >= 4 && i <= 8 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The figures as JSON-ready objects, values rounded for reading. */
export function figuresJson(results: readonly FigureResult[]): unknown[] {
  const s = (x: Summary | null) =>
    x === null
      ? null
      : {
          median: round(x.median, 3),
          min: round(x.min, 3),
          max: round(x.max, 3),
          runs: x.runs.map((v) => round(v, 3)),
        };
  return results.map((r) => ({
    scenario: r.scenario,
    engine: r.engine,
    figure: r.name,
    unit: r.unit,
    better: r.better,
    target: r.target,
    ...s(r.summary),
    ceiling: r.ceiling,
    ceilingValue: s(r.ceilingSummary),
    ratioToCeiling: r.ratio === null ? null : round(r.ratio, 4),
  }));
}
