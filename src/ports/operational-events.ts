import type { OperationalEvent } from '../domain/outcome-rules.ts';
import type { Tx } from './unit-of-work.ts';

/**
 * Operational webhooks (docs/adr/0004-endpoint-flow-control.md): events about the platform itself —
 * `endpoint.disabled`, `endpoint.breaker_opened`, `endpoint.recovered`, `message.attempt.exhausted`,
 * `message.attempt.failing` — published as ordinary signed messages into the application the operator
 * names with `TIDINGS_OPERATIONAL_APP`, whose endpoints subscribe to them like to any event type.
 */
export type { OperationalEvent } from '../domain/outcome-rules.ts';

/** Publishes operational events in the caller's transaction, so they commit with the change they report. */
export interface OperationalEvents {
  /** Id of the operational application, or null when none is configured or it does not exist. */
  applicationId(tx: Tx): Promise<string | null>;
  /**
   * Publishes `events` in `tx`. Never fails `tx` for a reason of its own: events the operational application
   * (deleted meanwhile) cannot take are not stored, and a statement of theirs that fails rolls back alone and
   * is reported by the adapter. Rejects only when `tx` itself is lost (the connection).
   */
  emit(tx: Tx, events: readonly OperationalEvent[], at: Date): Promise<void>;
}
