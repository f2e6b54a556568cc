import type { Health } from './types.ts';
import { Badge, Time } from './ui.tsx';

/**
 * The endpoint's circuit breaker while it holds deliveries back: what it holds and until when. (The
 * operator's "probe now" and "close breaker" buttons sit here.)
 */
export function BreakerControls({ health }: { path: string; health: Health; onDone: () => void }) {
  if (health.breaker.state === 'closed') return null;
  const held = health.deliveries.pending ?? 0;
  return (
    <section class="card" aria-labelledby="breaker-h">
      <h2 id="breaker-h">Circuit breaker <Badge state={health.breaker.state} /></h2>
      <p>
        {held} pending deliveries are held by the breaker{' '}
        {health.breaker.openUntil === null ? 'until its probe succeeds' : <>until <Time iso={health.breaker.openUntil} />, when one probe is let through</>}.
        They are not due now and spend no attempts while held.
      </p>
    </section>
  );
}
