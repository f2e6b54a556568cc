/** Charts drawn from numbers only (SVG and text; nothing from the payloads), each with its figures in words. */

/** Horizontal bars, one per row, with the value written out. */
export function Bars({
  title,
  rows,
  format,
  max,
  tone = 'accent',
}: {
  title: string;
  rows: { label: string; value: number | null; text?: string }[];
  format: (v: number) => string;
  max?: number;
  tone?: Tone;
}) {
  const top = max ?? Math.max(1, ...rows.map((r) => r.value ?? 0));
  return (
    <figure class="bars">
      <figcaption>{title}</figcaption>
      {rows.map((r) => (
        <div class="bar-row" key={r.label}>
          <span class="bar-label">{r.label}</span>
          <span class="bar-track">
            <span
              class={`bar-fill fill-${tone}`}
              style={{ width: `${r.value === null ? 0 : Math.min(100, (r.value / top) * 100)}%` }}
            />
          </span>
          <span class="bar-value">{r.value === null ? 'no data' : (r.text ?? format(r.value))}</span>
        </div>
      ))}
    </figure>
  );
}

/** The colour of a series (the name is always written too: colour is never the only cue). */
export type Tone = 'accent' | 'ok' | 'bad';

/** One series of a {@link TimeChart}: a value per bucket (null = no data). */
export interface Series {
  readonly name: string;
  readonly tone: Tone;
  readonly values: readonly (number | null)[];
}

/** A bucket's start as an axis label, in UTC: `14:05`, or `03-07 14:05` when the chart spans days. */
export function axisTime(iso: string, spanMs: number): string {
  return spanMs > 86_400_000 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

/**
 * Columns over time, one per bucket, the series stacked (e.g. succeeded under failed), with a time axis
 * (first, middle and last bucket, UTC), the scale's top value, a legend, and the latest and peak figures in
 * the caption.
 */
export function TimeChart({
  title,
  at,
  series,
  format,
  max,
}: {
  title: string;
  at: readonly string[];
  series: readonly Series[];
  format: (v: number) => string;
  max?: number;
}) {
  const totals = at.map((_, i) =>
    series.reduce<number | null>((sum, s) => {
      const v = s.values[i] ?? null;
      return v === null ? sum : (sum ?? 0) + v;
    }, null),
  );
  const known = totals.filter((v): v is number => v !== null);
  const top = max ?? Math.max(1e-9, ...known);
  const w = 600;
  const h = 120;
  const bw = w / Math.max(1, at.length);
  const first = at[0];
  const last = at.at(-1);
  const span = first === undefined || last === undefined ? 0 : new Date(last).getTime() - new Date(first).getTime();
  const ticks =
    at.length === 0
      ? []
      : [0, Math.floor((at.length - 1) / 2), at.length - 1].filter((v, i, all) => all.indexOf(v) === i);
  const latest = (s: Series): string => {
    const v = [...s.values].reverse().find((x) => x !== null);
    return v === undefined || v === null ? 'no data' : format(v);
  };
  const summary =
    series.length === 1
      ? `latest ${latest(series[0]!)}`
      : `latest ${series.map((s) => `${s.name} ${latest(s)}`).join(', ')}`;
  return (
    <figure class="series">
      <figcaption>
        {title}{' '}
        <span class="muted">
          — {summary}, peak {known.length === 0 ? 'no data' : format(Math.max(...known))} · times in UTC
        </span>
      </figcaption>
      {series.length > 1 ? (
        <ul class="legend">
          {series.map((s) => (
            <li key={s.name}>
              <span class={`swatch fill-${s.tone}`} aria-hidden="true" />
              {s.name}
            </li>
          ))}
        </ul>
      ) : null}
      <div class="plot">
        <div class="y-axis" aria-hidden="true">
          <span>{format(top)}</span>
          <span>0</span>
        </div>
        <svg
          viewBox={`0 0 ${w} ${h}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={`${title} over ${at.length} buckets from ${first ?? '—'} to ${last ?? '—'}: ${summary}`}
        >
          <line x1="0" y1={h - 0.5} x2={w} y2={h - 0.5} class="axis" />
          {at.map((t, i) => {
            let base = h;
            return series.map((s) => {
              const v = s.values[i] ?? null;
              if (v === null || v === 0) return null;
              const height = (v / top) * (h - 4);
              base -= height;
              return (
                <rect
                  key={`${t}-${s.name}`}
                  x={i * bw + 0.5}
                  width={Math.max(1, bw - 1)}
                  y={base}
                  height={height}
                  class={`col fill-${s.tone}`}
                >
                  <title>{`${t} ${s.name}: ${format(v)}`}</title>
                </rect>
              );
            });
          })}
        </svg>
        <span />
        <div class="x-axis" aria-hidden="true">
          {ticks.map((i, n) => (
            <span
              key={i}
              class={n === 0 ? 'first' : i === at.length - 1 ? 'last' : ''}
              style={{ left: `${((i + 0.5) / at.length) * 100}%` }}
            >
              {axisTime(at[i]!, span)}
            </span>
          ))}
        </div>
      </div>
      {known.every((v) => v === 0) ? <p class="muted">No attempts in this window.</p> : null}
    </figure>
  );
}
