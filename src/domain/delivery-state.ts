/**
 * Delivery lifecycle states (docs/design.md#delivery-lifecycle).
 *
 * pending ─claim→ leased ─2xx→ succeeded; leased ─retryable failure→ pending; leased ─last attempt / 410 /
 * reclaimed N times→ dead; pending while the endpoint is disabled → skipped; pending when the endpoint is
 * deleted → canceled. replay moves dead, skipped or succeeded back to pending.
 */
export const DeliveryState = Object.freeze({
  pending: 'pending',
  leased: 'leased',
  succeeded: 'succeeded',
  dead: 'dead',
  skipped: 'skipped',
  canceled: 'canceled',
} as const);

/** One of the values of {@link DeliveryState}. */
export type DeliveryState = (typeof DeliveryState)[keyof typeof DeliveryState];

/** Why a delivery became a dead letter. */
export const DeadReason = Object.freeze({
  exhausted: 'exhausted',
  gone: 'gone',
  leaseLostRepeatedly: 'lease_lost_repeatedly',
  manualFailed: 'manual_attempt_failed',
} as const);
export type DeadReason = (typeof DeadReason)[keyof typeof DeadReason];
