import { client, ok } from './api.ts';
import type { EndpointRef, Health } from './types.ts';
import { Action, Badge, Time } from './ui.tsx';

/**
 * The endpoint's circuit breaker while it holds deliveries back: what it holds and until when, and the
 * two ways out — "Probe now" (ends the cool-down: one delivery goes as the probe; an open breaker only)
 * and "Close breaker" (every held delivery goes again), each calling its route and refreshing the page.
 */
export function BreakerControls({
  endpoint,
  health,
  canWrite,
  onDone,
}: {
  endpoint: EndpointRef;
  health: Health;
  canWrite: boolean;
  onDone: () => void;
}) {
  const b = health.breaker;
  if (b.state === 'closed') return null;
  const held = health.deliveries.pending ?? 0;
  const what =
    held === 0 ? (
      'No delivery is waiting now; new ones are held'
    ) : (
      <>
        <strong>{held}</strong> pending {held === 1 ? 'delivery is' : 'deliveries are'} held
      </>
    );
  const until =
    b.state === 'half_open' ? (
      ' while its probe is in flight (the outcome closes or reopens it)'
    ) : b.openUntil === null ? (
      ' until its probe succeeds'
    ) : (
      <>
        {' '}
        until <Time iso={b.openUntil} />, when one probe is let through
      </>
    );
  const opened = b.openedInARow === 1 ? 'once' : `${b.openedInARow} times`;
  const streak = `${b.consecutiveFailures} attempts failed in a row; it opened ${opened} in a row.`;
  const probe = async (): Promise<void> => {
    await ok(client.POST('/api/v1/app/{appId}/endpoint/{endpointId}/breaker/probe', { params: { path: endpoint } }));
    onDone();
  };
  const close = async (): Promise<void> => {
    await ok(client.POST('/api/v1/app/{appId}/endpoint/{endpointId}/breaker/close', { params: { path: endpoint } }));
    onDone();
  };
  return (
    <section class="card" aria-labelledby="breaker-h">
      <h2 id="breaker-h">
        Circuit breaker <Badge state={b.state} />
      </h2>
      <p>
        {what} by the breaker{until}. Held deliveries are not due and spend no attempts; {streak}
      </p>
      {canWrite ? (
        <div class="toolbar">
          {b.state === 'open' ? <Action label="Probe now" run={probe} /> : null}
          <Action
            label="Close breaker"
            danger
            run={close}
            confirm={{
              title: 'Close the circuit breaker?',
              yes: 'Close breaker',
              body: (
                <p>
                  Its {held} held deliveries are sent again as soon as a dispatcher has room, without a probe first; the
                  failure streak starts from zero.
                </p>
              ),
            }}
          />
        </div>
      ) : null}
    </section>
  );
}
