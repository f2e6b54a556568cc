import { DeadReason } from './delivery-state.ts';

/**
 * Every `reason` a delivery's timeline row (`delivery_events.reason`) can carry, as written by the SQL of
 * the adapters (src/adapters/postgres/**) and by the use cases that pass one in. A row without a reason
 * (NULL) is a scheduled attempt that succeeded. The meaning of each, with the state its row records, is in
 * docs/reference/timeline.md; test/timeline-reasons.test.ts keeps this catalogue, that page and every
 * literal written by a timeline statement in step.
 */
export const TimelineReason = Object.freeze({
  /** pending: created by a publish, due at once. */
  published: 'published',
  /** pending: created by a publish with `deliverAt` in the future. */
  scheduled: 'scheduled',
  /** pending: created by the endpoint's send-example call. */
  exampleSent: 'example_sent',
  /** leased: claimed by a dispatcher. */
  claimed: 'claimed',
  /** leased: an expired lease taken over by a dispatcher. */
  reclaimed: 'reclaimed',
  /** pending: a lease given back by a dispatcher that stopped, no attempt charged. */
  released: 'released',
  /** pending: an attempt failed and another one is scheduled. */
  retryScheduled: 'retry_scheduled',
  /** pending/leased: a resend asked for (one manual attempt now). */
  resendRequested: 'resend_requested',
  /** the state before the resend: the outcome of a manual attempt (resend). */
  resent: 'resent',
  /** skipped: the endpoint is disabled (at publish, when disabled, or a lease of a disabled endpoint). */
  endpointDisabled: 'endpoint_disabled',
  /** canceled: the endpoint was deleted. */
  endpointDeleted: 'endpoint_deleted',
  /** pending: a lease of a paused endpoint expired; held until the endpoint is resumed. */
  endpointPaused: 'endpoint_paused',
  /** dead: the retry schedule is used up. */
  exhausted: DeadReason.exhausted,
  /** dead: the receiver answered 410 Gone. */
  gone: DeadReason.gone,
  /** dead: the lease was reclaimed too many times without any recorded outcome. */
  leaseLostRepeatedly: DeadReason.leaseLostRepeatedly,
  /** dead: a manual attempt failed (a resend is never retried). */
  manualAttemptFailed: DeadReason.manualFailed,
  /** pending: moved back by a recover task. */
  recoverRequested: 'recover_requested',
  /** pending: queued by a replay-missing task. */
  replayMissingRequested: 'replay_missing_requested',
  /** pending: moved back by a bulk replay task. */
  bulkReplayRequested: 'bulk_replay_requested',
  /** pending: moved back by a dead-letter replay task. */
  deadLetterReplayRequested: 'dead_letter_replay_requested',
} as const);

/** One of the values of {@link TimelineReason}. */
export type TimelineReason = (typeof TimelineReason)[keyof typeof TimelineReason];
