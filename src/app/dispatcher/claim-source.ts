import type { Clock } from '../../ports/clock.ts';
import type { DeliveryStore } from '../../ports/delivery-store.ts';
import type { WorkSource } from '../../ports/work-source.ts';

/** Options of {@link createClaimSource}. Durations in ms. */
export interface ClaimSourceOptions {
  /** The dispatcher's clock: the sweep's pace is measured on it. */
  readonly clock: Pick<Clock, 'nowMs'>;
  /**
   * Least time between two claims that sweep (dead-letter leases lost too often, free the leases of deleted, disabled
   * or paused endpoints) before claiming: the poll interval, so that wake-ups do not sweep on every claim.
   */
  readonly sweepEveryMs: number;
  /** Subscribes to publish wake-ups (a NOTIFY from another process, or a commit of this one); absent = none. */
  readonly onWake?: (listener: () => void) => () => void;
}

/**
 * The claim as a {@link WorkSource} (docs/design.md#the-protocol, step 1): each take is one claim statement
 * (`DeliveryStore.claim`) over the due rows, in the dispatcher's bounds. Its wake-ups are the publish wake-ups: a
 * commit that made work due ends the dispatcher's wait for the next claim.
 */
export function createClaimSource(store: Pick<DeliveryStore, 'claim'>, options: ClaimSourceOptions): WorkSource {
  // When the last claim that swept started, ms of the clock (a clock moved back sweeps at once).
  let lastSweepMs = Number.NEGATIVE_INFINITY;
  return {
    name: 'claim',
    async take(request) {
      const nowMs = options.clock.nowMs();
      const sweep = nowMs - lastSweepMs >= options.sweepEveryMs || nowMs < lastSweepMs;
      const { dispatcherId, excludeEndpoints, limit, window, leaseMs, maxReclaims, now } = request;
      const input = { dispatcherId, sweep, excludeEndpoints, limit, window, leaseMs, maxReclaims, now };
      const result = await store.claim(input);
      if (sweep) lastSweepMs = nowMs;
      return result;
    },
    connect(sink) {
      return options.onWake?.(() => sink.wake()) ?? (() => undefined);
    },
  };
}
