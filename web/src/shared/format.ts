/** Formatters of the console's and portal's figures: plain functions of their input (unit tests beside them). */

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];
const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "3 minutes ago" / "in 5 seconds" for an instant. */
export function relative(iso: string, now = Date.now()): string {
  const delta = new Date(iso).getTime() - now;
  for (const [unit, ms] of UNITS)
    if (Math.abs(delta) >= ms || unit === 'second') return rtf.format(Math.round(delta / ms), unit);
  return '';
}

/** A duration in ms as `850 ms`, `12.5 s` (under 2 min) or `3.0 min`; `—` for null. */
export function millis(v: number | null): string {
  if (v === null) return '—';
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 120_000) return `${(v / 1000).toFixed(1)} s`;
  return `${(v / 60_000).toFixed(1)} min`;
}

/** JSON text pretty-printed when it parses (kept as given otherwise). */
export function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Milliseconds in the largest unit that writes them whole: 1 d, 30 min, 5 s, 50 ms. */
export function wholeDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  }
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A health window's length in seconds as `15 min` or `1 h`. */
export const windowName = (s: number): string => (s >= 3600 ? `${s / 3600} h` : `${s / 60} min`);
