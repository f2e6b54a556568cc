import type { Task } from './types.ts';

/** The counters a background task reports, in the order they are shown. */
const COUNTERS = ['messagesSent', 'scanned', 'alreadyQueued', 'unavailable', 'expunged'];

/** A task's progress counters as text (`messages sent: 3 · scanned: 10`), its error last; `—` when it says nothing. */
export function progress(t: Pick<Task, 'data'>): string {
  const d = t.data;
  const parts = COUNTERS.filter((k) => typeof d[k] === 'number').map(
    (k) => `${k.replace(/([A-Z])/g, ' $1').toLowerCase()}: ${String(d[k])}`,
  );
  if (typeof d.error === 'string') parts.push(`error: ${d.error}`);
  return parts.join(' · ') || '—';
}
