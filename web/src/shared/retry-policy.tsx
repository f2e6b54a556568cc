import { client, ok } from './api.ts';
import { wholeDuration } from './format.ts';
import type { EndpointRef, RetryPolicy } from './types.ts';
import { Show, useLoad } from './ui.tsx';

type Field = 'schedule' | 'attemptTimeout' | 'maxAttempts';

/** `GET …/endpoint/{ep}/retry-policy` (docs/reference/api.md, "Retry policies"). */
type RetryPolicyView = RetryPolicy;

/** Where an effective field came from, as a person reads it. */
const SOURCE: Readonly<Record<string, string>> = {
  endpoint: 'this endpoint',
  eventType: 'its event type',
  installation: 'the installation',
  schedule: 'schedule + 1',
};

/**
 * The endpoint's retry policy, read only: each field as it applies to a message whose event type sets none, and where
 * it comes from (the endpoint, or the installation's settings). Set through the API's `…/retry-policy` routes.
 */
export function RetryPolicyCard({ endpoint }: { endpoint: EndpointRef }) {
  const loaded = useLoad(
    () => ok(client.GET('/api/v1/app/{appId}/endpoint/{endpointId}/retry-policy', { params: { path: endpoint } })),
    [endpoint.appId, endpoint.endpointId],
  );
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
              {view.effective.schedule.map(wholeDuration).join(', ')}
              {from(view, 'schedule')}
            </dd>
            <dt>Attempt timeout</dt>
            <dd>
              {wholeDuration(view.effective.attemptTimeout)}
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
