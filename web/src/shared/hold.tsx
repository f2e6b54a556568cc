import type { Hold } from './types.ts';
import { Time } from './ui.tsx';

const HOLDER = {
  paused: "the endpoint's pause",
  breaker: 'the circuit breaker',
  throttled: "the receiver's Retry-After",
} as const;
const NO_END = {
  paused: 'until resumed',
  breaker: 'until its probe succeeds',
  throttled: 'until the throttle ends',
} as const;

/**
 * When a pending delivery goes next: "held by the circuit breaker until <time>" while its endpoint holds it
 * back (its scheduled time may be long past then, and it is not due now), else the scheduled time.
 */
export function NextAttempt({ hold, next }: { hold: Hold; next: string | null }) {
  if (hold.heldBy === undefined || hold.heldBy === null) return <Time iso={next} />;
  const until = hold.heldUntil ?? null;
  const end =
    until === null ? (
      NO_END[hold.heldBy]
    ) : (
      <>
        until <Time iso={until} />
      </>
    );
  return (
    <span class="held">
      held by {HOLDER[hold.heldBy]} {end}
    </span>
  );
}
