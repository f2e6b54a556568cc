import type { Logger } from '../../ports/logger.ts';

/** Which store call failed. */
export type StoreCall = 'claim' | 'record' | 'heartbeat' | 'release';

/**
 * The store's health as one dispatcher sees it: store calls of any kind (claim, record, heartbeat, release) failed
 * since the last successful take, and the takes among them. A dispatcher holding its most leases does not take during
 * an outage, so "claims resumed" is logged at the first successful take after any store failure; until then a
 * failed take leaves the dispatcher unhealthy (readiness).
 */
export interface StoreHealth {
  /** A store call failed: counted, and told to `onError`; a failed take makes the dispatcher unhealthy. */
  failed(error: unknown, during: StoreCall): void;
  /** A take succeeded: healthy again; after failures, logs "claims resumed" with their counts and calls `onResumed`. */
  tookWork(): void;
  /** False after a failed take until the next successful one. */
  healthy(): boolean;
}

/** Makes the {@link StoreHealth} of one dispatcher. */
export function createStoreHealth(options: {
  readonly logger: Pick<Logger, 'info'>;
  readonly onError: (error: unknown, during: StoreCall) => void;
  /** The store answers again after failures (the recorder retries at once what it held back). */
  readonly onResumed: () => void;
}): StoreHealth {
  let healthy = true;
  let failedStoreCalls = 0;
  let failedClaims = 0;
  return {
    failed(error, during) {
      failedStoreCalls += 1;
      if (during === 'claim') {
        failedClaims += 1;
        healthy = false;
      }
      options.onError(error, during);
    },
    tookWork() {
      healthy = true;
      if (failedStoreCalls === 0) return;
      options.logger.info({ failedClaims, failedStoreCalls }, 'claims resumed');
      options.onResumed();
      failedStoreCalls = 0;
      failedClaims = 0;
    },
    healthy: () => healthy,
  };
}
