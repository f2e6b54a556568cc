/**
 * Whether a pending delivery waits behind its endpoint rather than its own schedule: the rule, written once
 * in SQL for every read that shows it (the delivery lists, the timeline, the overview, a replay task's
 * summary). The claim (src/adapters/postgres/delivery/claim.sql) is what enforces these holds; this only
 * says which one applies and until when (docs/adr/0004-endpoint-flow-control.md).
 *
 * A pending delivery is held:
 * - by `paused` when its endpoint is paused (its due time is 'infinity'); no end: until it is resumed;
 * - by `breaker` when the endpoint's breaker is open with a cool-down that ends after the delivery's due
 *   time (until the cool-down's end), or when the breaker is half-open, or open with its cool-down over,
 *   and the delivery is due (no end: until the probe's outcome; exactly one delivery of the endpoint is
 *   the probe);
 * - by `throttled` when a receiver's Retry-After holds the endpoint back past the delivery's due time
 *   (until `throttled_until`).
 * Otherwise it is not held (null), whatever its state.
 */
import type { DeliveryHold, HoldKind } from '../../ports/delivery-query-store.ts';

/**
 * The hold of the delivery on alias `d` (state, next_attempt_at) whose endpoint is alias `e`, at `now` (an
 * SQL expression of type timestamptz): `held_by` text (a {@link HoldKind} or NULL) and `held_until`
 * timestamptz (NULL when the hold has no set end or there is none). Two select-list items.
 */
export function holdColumnsSql(now: string): string {
  const breakerUntil = `e.breaker_state = 'open' AND e.breaker_open_until > ${now}
                        AND d.next_attempt_at < e.breaker_open_until`;
  const probing = `e.breaker_state <> 'closed' AND d.next_attempt_at <= ${now}`;
  const throttled = `e.throttled_until > ${now} AND d.next_attempt_at < e.throttled_until`;
  return `CASE WHEN d.state <> 'pending' THEN NULL
            WHEN e.status = 'paused' OR d.next_attempt_at = 'infinity'::timestamptz THEN 'paused'
            WHEN (${breakerUntil}) OR (${probing}) THEN 'breaker'
            WHEN ${throttled} THEN 'throttled' END AS held_by,
       CASE WHEN d.state <> 'pending' OR e.status = 'paused' OR d.next_attempt_at = 'infinity'::timestamptz THEN NULL
            WHEN ${breakerUntil} THEN e.breaker_open_until
            WHEN ${probing} THEN NULL
            WHEN ${throttled} THEN e.throttled_until END AS held_until`;
}

/**
 * The hold of the endpoint `e` over its deliveries that are due at `now` (an SQL timestamptz expression):
 * `'breaker'` when its breaker is not closed, `'throttled'` when a Retry-After holds it back, else NULL. A
 * due delivery of such an endpoint is held by that (the same answer as {@link holdColumnsSql} gives it);
 * a paused endpoint has no due deliveries (they wait at 'infinity'). One expression.
 */
export function dueHoldSql(now: string): string {
  return `CASE WHEN e.breaker_state <> 'closed' THEN 'breaker' WHEN e.throttled_until > ${now} THEN 'throttled' END`;
}

/** The {@link DeliveryHold} of a row that selected {@link holdColumnsSql}. */
export function holdOf(row: { readonly held_by: string | null; readonly held_until: Date | null }): DeliveryHold {
  return { heldBy: row.held_by as HoldKind | null, heldUntil: row.held_until };
}
