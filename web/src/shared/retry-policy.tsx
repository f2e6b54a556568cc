import { get } from './api.ts';
import { Show, useLoad } from './ui.tsx';

type Field = 'schedule' | 'attemptTimeout' | 'maxAttempts';

/** `GET …/endpoint/{ep}/retry-policy` (docs/reference/api.md, "Retry policies"). */
interface RetryPolicyView {
  policy: { schedule: number[] | null; attemptTimeout: number | null; maxAttempts: number | null };
  effective: { schedule: number[]; attemptTimeout: number; maxAttempts: number; sources: Record<Field, string> };
}

/** Where an effective field came from, as a person reads it. */
const SOURCE: Readonly<Record<string, string>> = {
  endpoint: 'this endpoint',
  eventType: 'its event type',
  installation: 'the installation',
  schedule: 'schedule + 1',
};

/** Milliseconds in the largest unit that writes them whole: 1 d, 30 min, 5 s, 50 ms. */
function duration(ms: number): string {
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

/**
 * The endpoint's retry policy, read only: each field as it applies to a message whose event type sets none, and where
 * it comes from (the endpoint, or the installation's settings). Set through the API's `…/retry-policy` routes.
 */
export function RetryPolicyCard({ path }: { path: string }) {
  const loaded = useLoad(() => get<RetryPolicyView>(`${path}/retry-policy`), [path]);
  const from = (view: RetryPolicyView, field: Field) => (
    <span class="muted"> ({SOURCE[view.effective.sources[field]] ?? view.effective.sources[field]})</span>
  );
  return (
    <section class="card" aria-labelledby="retry-h">
      <h2 id="retry-h">Retry policy</h2>
      <Show of={loaded} label="Loading retry policy…">
        {(view) => (
          <dl class="facts">
            <dt>Delays</dt>
            <dd>
              {view.effective.schedule.map(duration).join(', ')}
              {from(view, 'schedule')}
            </dd>
            <dt>Attempt timeout</dt>
            <dd>
              {duration(view.effective.attemptTimeout)}
              {from(view, 'attemptTimeout')}
            </dd>
            <dt>Attempts</dt>
            <dd>
              {view.effective.maxAttempts}
              {from(view, 'maxAttempts')}
            </dd>
          </dl>
        )}
      </Show>
      <p class="muted">
        An event type with a policy of its own fills the fields this endpoint leaves unset. A change applies to
        deliveries created after it.
      </p>
    </section>
  );
}
