/*
 * The carrier protocol of the process's wake-up NOTIFY (docs/adr/0006-round-trips-and-wake-ups.md, "The process's
 * NOTIFY rides on a publish statement"): the hub (wakeups.ts) decides which statement carries the NOTIFY, the publish
 * statement (../message/message-store.ts) carries it. Both sides import these names from here, and nothing else of
 * each other.
 */

/** Channel of the NOTIFY that wakes idle dispatchers after a commit that made work due (docs/design.md#publishing). */
export const WAKE_CHANNEL = 'tidings_due';

/**
 * Whether a publish statement sends the NOTIFY on {@link WAKE_CHANNEL}: `none` (another NOTIFY of the process is
 * in flight, or the statement runs inside a caller's transaction), `own` (when it makes a delivery due now),
 * `always` (whatever it makes: the process owes a wake-up to a commit that may have come after the last NOTIFY).
 */
export type CarriedMode = 'none' | 'own' | 'always';

/** One statement's part in the process's NOTIFY, from {@link NotifyCarrier.begin}. */
export interface CarriedNotify {
  readonly mode: CarriedMode;
  /** The statement ended: `notified` = it committed with its NOTIFY; false after a failure or with nothing sent. */
  end(notified: boolean): void;
}

/**
 * The process's wake-up NOTIFY as publish statements carry it (the hub of wakeups.ts, ADR 0006): at most one
 * NOTIFY of the process in flight, carried by a statement or sent by a statement of its own.
 */
export interface NotifyCarrier {
  /** Called as a publish statement outside a caller's transaction starts; its `end` must be called once. */
  begin(): CarriedNotify;
  /** Wakes this process's dispatchers only, after a commit that carried the NOTIFY. Never throws. */
  woken(): void;
}
