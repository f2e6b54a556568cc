import { AppError } from '../../../domain/errors.ts';
import type { Tx } from '../../../ports/unit-of-work.ts';
import type { ReplayBatchResult, ReplayStore } from '../../../ports/replay-store.ts';
import type { Db } from '../db.ts';
import { SETTLED } from '../delivery-reads.ts';
import { holdColumnsSql } from '../delivery-holds.ts';
import { nowSql } from '../sql.ts';
import { onCommit, txClient } from '../tx.ts';

/*
 * RESEND — $1 app id, $2 message id, $3 endpoint id, $4 now. Makes the pair's delivery due now (creating it
 * if missing) and appends a timeline row. Returns the endpoint status and the delivery state after.
 */
const RESEND = `
WITH target AS (
  SELECT m.id AS message_id, e.id AS endpoint_id, e.status,
         m.payload IS NULL OR m.payload_expunged_at IS NOT NULL AS expunged,
         -- A delivery made here keeps the retry policy of its creation (migration 1764000012000).
         tidings_retry_policy(e.retry_policy, (SELECT t.retry_policy FROM event_types t WHERE t.name = m.event_type))
           AS retry_policy
  FROM messages m JOIN endpoints e ON e.app_id = m.app_id
  WHERE m.app_id = $1 AND m.id = $2 AND e.id = $3 AND e.deleted_at IS NULL
  -- The message's row lock stands for the delivery's references, which have no foreign key: its
  -- application's deletion waits for this commit, or this finds the message gone (ADR 0016, decision 13).
  FOR KEY SHARE OF m
), made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, manual, manual_return, created_at,
                          updated_at, retry_policy)
  SELECT $1, message_id, endpoint_id, 'pending', coalesce($4::timestamptz, clock_timestamp()), true, 'dead',
         coalesce($4::timestamptz, clock_timestamp()), coalesce($4::timestamptz, clock_timestamp()), retry_policy
  FROM target WHERE status = 'active' AND NOT expunged
  ON CONFLICT (message_id, endpoint_id) DO UPDATE
  SET manual = CASE WHEN deliveries.state IN ('dead', 'succeeded', 'skipped') THEN true ELSE deliveries.manual END,
      manual_return = CASE WHEN deliveries.state IN ('dead', 'succeeded', 'skipped') THEN deliveries.state
        ELSE deliveries.manual_return END,
      state = CASE WHEN deliveries.state = 'leased' THEN 'leased' ELSE 'pending' END,
      next_attempt_at = CASE WHEN deliveries.state = 'leased' THEN deliveries.next_attempt_at
        ELSE coalesce($4::timestamptz, clock_timestamp()) END,
      updated_at = coalesce($4::timestamptz, clock_timestamp())
  RETURNING id, state
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, reason, at)
  SELECT id, state, 'resend_requested', coalesce($4::timestamptz, clock_timestamp()) FROM made
)
SELECT t.status, t.expunged, (SELECT count(*)::int FROM made) AS queued FROM target t`;

/**
 * The SET list of a replay (docs/design.md#delivery-lifecycle): pending, a fresh schedule, nothing left of the previous
 * round's lease or resend.
 */
const REPLAY_SET = `state = 'pending', attempt_count = 0, reclaim_count = 0, manual = false, manual_return = NULL,
      dead_reason = NULL, dispatcher_id = NULL, lease_expires_at = NULL`;

/*
 * REPLAY_DELIVERIES — one batch of recover / bulk replay / dead-letter replay. Reads deliveries in id order
 * after the cursor (index deliveries_app_state, the endpoint, when given, as a filter; every replayable state is
 * settled, and the query says so in the index's predicate, SETTLED), filtered by their message (window on
 * messages.created_at at the millisecond precision the API shows; event types, channel, tag) and
 * by the last attempt's status class; queues the eligible ones (content not expunged, endpoint live and not
 * disabled) at the pace, each endpoint from its slot; a paused endpoint's wait at 'infinity' like its other
 * pending deliveries (docs/design.md#delivery-lifecycle), until it is resumed. The UPDATE re-checks the state, so a
 * delivery that a resend or a dispatcher changed meanwhile is left alone.
 * $1 app id, $2 endpoint id (NULL = all), $3 states, $4 cursor (delivery id, NULL = start), $5 since,
 * $6 until (NULL = unbounded), $7 event types (NULL = all), $8 channel, $9 tag, $10 status code class,
 * $11 limit, $12 interval ms, $13 slot endpoint ids, $14 slot instants, $15 reason, $16 now.
 */
const REPLAY_DELIVERIES = `
WITH clock AS (
  SELECT coalesce($16::timestamptz, clock_timestamp()) AS now
), cand AS (
  SELECT d.id, d.endpoint_id, (m.payload_expunged_at IS NOT NULL OR m.payload IS NULL) AS expunged
  FROM deliveries d JOIN messages m ON m.id = d.message_id
  WHERE d.app_id = $1 AND ($2::text IS NULL OR d.endpoint_id = $2) AND d.state = ANY ($3::text[]) AND ${SETTLED}
    AND ($4::bigint IS NULL OR d.id > $4::bigint)
    AND date_trunc('milliseconds', m.created_at) >= $5::timestamptz
      AND ($6::timestamptz IS NULL OR date_trunc('milliseconds', m.created_at) < $6::timestamptz)
    AND ($7::text[] IS NULL OR m.event_type = ANY ($7::text[]))
    AND ($8::text IS NULL OR $8::text = ANY (m.channels))
    AND ($9::text IS NULL OR $9::text = ANY (m.tags))
    AND ($10::int IS NULL OR CASE WHEN $10::int = 0 THEN d.last_status_code IS NULL
                                  ELSE d.last_status_code >= $10::int AND d.last_status_code < $10::int + 100 END)
  ORDER BY d.id
  LIMIT $11
), usable AS (
  SELECT c.id, c.endpoint_id, e.status = 'paused' AS paused FROM cand c JOIN endpoints e ON e.id = c.endpoint_id
  WHERE NOT c.expunged AND e.deleted_at IS NULL AND e.status <> 'disabled'
), ranked AS (
  SELECT u.id, u.endpoint_id, u.paused, row_number() OVER (PARTITION BY u.endpoint_id ORDER BY u.id) AS rank,
         greatest(clock.now, coalesce(s.slot, clock.now)) AS base
  FROM usable u CROSS JOIN clock
  LEFT JOIN unnest($13::text[], $14::timestamptz[]) AS s(endpoint_id, slot) ON s.endpoint_id = u.endpoint_id
), moved AS (
  UPDATE deliveries d
  SET ${REPLAY_SET},
      next_attempt_at = CASE WHEN r.paused THEN 'infinity'::timestamptz
                             ELSE r.base + (r.rank - 1) * $12::double precision * interval '1 millisecond' END,
      updated_at = (SELECT now FROM clock)
  FROM ranked r
  WHERE d.id = r.id AND d.state = ANY ($3::text[])
  RETURNING d.id, d.endpoint_id, d.next_attempt_at, d.fencing_token
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, fencing_token, reason, at)
  SELECT id, 'pending', fencing_token, $15, (SELECT now FROM clock) FROM moved
)
SELECT (SELECT max(id)::text FROM cand) AS cursor,
       (SELECT count(*)::int FROM cand) AS scanned,
       (SELECT count(*)::int FROM cand WHERE expunged) AS expunged,
       (SELECT count(*)::int FROM cand) - (SELECT count(*)::int FROM cand WHERE expunged) -
         (SELECT count(*)::int FROM usable) AS unavailable,
       (SELECT count(*)::int FROM usable) - (SELECT count(*)::int FROM moved) AS already_queued,
       (SELECT count(*)::int FROM moved) AS queued,
       (SELECT coalesce(json_object_agg(endpoint_id, last), '{}'::json)
          FROM (SELECT endpoint_id, max(next_attempt_at) AS last FROM moved
            WHERE next_attempt_at <> 'infinity'::timestamptz GROUP BY endpoint_id) x) AS last_due,
       (SELECT now FROM clock) AS at`;

/*
 * REPLAY_MISSING — one batch of replay-missing for endpoint $2 of application $1. Reads the application's
 * messages in id order after the cursor (index messages_app_created) in the window, with the endpoint's
 * delivery of each (unique index (message_id, endpoint_id)); a message without one counts only when the
 * endpoint's current subscription matches it and its payload filter did not skip it at publish (filtered_out).
 * Skipped deliveries go back to pending; missing ones are made
 * pending (ON CONFLICT: a fan-out or another batch that made it meanwhile wins); both at the pace.
 * $1 app id, $2 endpoint id, $3 cursor (message id, NULL = start), $4 since, $5 until (NULL = unbounded),
 * $6 limit, $7 interval ms, $8 the endpoint's slot (NULL = none), $9 reason, $10 now.
 */
const REPLAY_MISSING = `
WITH clock AS (
  SELECT coalesce($10::timestamptz, clock_timestamp()) AS now
), ep AS (
  SELECT id, filter_types, channels, status <> 'disabled' AND deleted_at IS NULL AS usable, status = 'paused' AS paused,
         retry_policy
  FROM endpoints WHERE id = $2 AND app_id = $1
), cand AS (
  SELECT m.id AS message_id, d.id AS delivery_id, d.state, m.event_type,
         (m.payload_expunged_at IS NOT NULL OR m.payload IS NULL) AS expunged
  FROM messages m CROSS JOIN ep
  LEFT JOIN deliveries d ON d.message_id = m.id AND d.endpoint_id = ep.id
  WHERE m.app_id = $1 AND ($3::text IS NULL OR m.id > $3::text)
    AND date_trunc('milliseconds', m.created_at) >= $4::timestamptz
      AND ($5::timestamptz IS NULL OR date_trunc('milliseconds', m.created_at) < $5::timestamptz)
    AND (d.id IS NOT NULL OR (
          (ep.filter_types IS NULL OR cardinality(ep.filter_types) = 0 OR m.event_type = ANY (ep.filter_types))
      AND (ep.channels IS NULL OR cardinality(ep.channels) = 0 OR ep.channels && coalesce(m.channels, '{}'::text[]))
      -- A message the endpoint's payload filter skipped is not missing (docs/adr/0029-endpoint-payload-filters.md).
      AND (m.filtered_out IS NULL OR ep.id <> ALL (m.filtered_out))))
  ORDER BY m.id
  LIMIT $6
  -- As RESEND: the messages' row locks stand for the references of the deliveries made (ADR 0016, decision 13).
  FOR KEY SHARE OF m
), todo AS (
  SELECT c.message_id, c.delivery_id, c.event_type, row_number() OVER (ORDER BY c.message_id) AS rank,
         greatest(clock.now, coalesce($8::timestamptz, clock.now)) AS base
  FROM cand c CROSS JOIN clock CROSS JOIN ep
  WHERE ep.usable AND NOT c.expunged AND (c.delivery_id IS NULL OR c.state = 'skipped')
), made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, updated_at, retry_policy)
  SELECT $1, t.message_id, $2, 'pending',
         CASE WHEN (SELECT paused FROM ep) THEN 'infinity'::timestamptz
           ELSE t.base + (t.rank - 1) * $7::double precision * interval '1 millisecond' END,
         (SELECT now FROM clock), (SELECT now FROM clock),
         -- A delivery made here keeps the retry policy of its creation (migration 1764000012000).
         tidings_retry_policy((SELECT retry_policy FROM ep),
                              (SELECT et.retry_policy FROM event_types et WHERE et.name = t.event_type))
  FROM todo t WHERE t.delivery_id IS NULL
  ON CONFLICT (message_id, endpoint_id) DO NOTHING
  RETURNING id, next_attempt_at, fencing_token
), moved AS (
  UPDATE deliveries d
  SET ${REPLAY_SET},
      next_attempt_at = CASE WHEN (SELECT paused FROM ep) THEN 'infinity'::timestamptz
                             ELSE t.base + (t.rank - 1) * $7::double precision * interval '1 millisecond' END,
      updated_at = (SELECT now FROM clock)
  FROM todo t
  WHERE d.id = t.delivery_id AND d.state = 'skipped'
  RETURNING d.id, d.next_attempt_at, d.fencing_token
), changed AS (
  SELECT * FROM made UNION ALL SELECT * FROM moved
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, fencing_token, reason, at)
  SELECT id, 'pending', fencing_token, $9, (SELECT now FROM clock) FROM changed
)
SELECT (SELECT max(message_id) FROM cand) AS cursor,
       (SELECT count(*)::int FROM cand) AS scanned,
       (SELECT count(*)::int FROM cand WHERE expunged) AS expunged,
       CASE WHEN (SELECT usable FROM ep) THEN 0 ELSE
         (SELECT count(*)::int FROM cand WHERE NOT expunged) END AS unavailable,
       (SELECT count(*)::int FROM cand) - (SELECT count(*)::int FROM cand WHERE expunged)
         - CASE WHEN (SELECT usable FROM ep) THEN 0 ELSE (SELECT count(*)::int FROM cand WHERE NOT expunged) END
         - (SELECT count(*)::int FROM changed) AS already_queued,
       (SELECT count(*)::int FROM changed) AS queued,
       (SELECT CASE WHEN count(*) = 0 THEN '{}'::json ELSE json_build_object($2::text, max(next_attempt_at)) END
          FROM changed WHERE next_attempt_at <> 'infinity'::timestamptz) AS last_due,
       (SELECT now FROM clock) AS at`;

/*
 * COUNT_HELD — the pending deliveries of endpoint $2 (application $1) for messages created in [$3, $4)
 * ($4 NULL = unbounded) that their endpoint holds back at $5 (NULL = now), by hold (../delivery-holds.ts),
 * with the latest end of those holds. Reads deliveries_endpoint_due and messages_pkey.
 */
const COUNT_HELD = `
SELECT count(*) FILTER (WHERE h.held_by = 'paused')::int AS paused,
       count(*) FILTER (WHERE h.held_by = 'breaker')::int AS breaker,
       count(*) FILTER (WHERE h.held_by = 'throttled')::int AS throttled,
       max(h.held_until) AS held_until
FROM deliveries d JOIN messages m ON m.id = d.message_id JOIN endpoints e ON e.id = d.endpoint_id
CROSS JOIN LATERAL (SELECT ${holdColumnsSql(nowSql(5))}) h
WHERE d.app_id = $1 AND d.endpoint_id = $2 AND d.state = 'pending'
  AND date_trunc('milliseconds', m.created_at) >= $3::timestamptz
  AND ($4::timestamptz IS NULL OR date_trunc('milliseconds', m.created_at) < $4::timestamptz)`;

interface BatchRow {
  cursor: string | null;
  scanned: number;
  expunged: number;
  unavailable: number;
  already_queued: number;
  queued: number;
  last_due: Record<string, string>;
  at: Date;
}

/**
 * Turns a batch row into the result: the next free slot of each endpoint is its last due instant plus one
 * interval. Wakes dispatchers at commit when anything was queued.
 */
async function finishBatch(
  db: Db,
  tx: Tx,
  row: BatchRow,
  previousCursor: string | null,
  intervalMs: number,
  wake: () => void,
): Promise<ReplayBatchResult> {
  if (row.queued > 0) onCommit(tx, wake);
  const slots: Record<string, Date> = {};
  for (const [endpointId, last] of Object.entries(row.last_due))
    slots[endpointId] = new Date(new Date(last).valueOf() + intervalMs);
  return {
    cursor: row.cursor ?? previousCursor,
    scanned: row.scanned,
    queued: row.queued,
    alreadyQueued: row.already_queued,
    expunged: row.expunged,
    unavailable: row.unavailable,
    slots,
    at: row.at,
  };
}

/**
 * The PostgreSQL {@link ReplayStore}. `wake` wakes dispatchers (this process's, and others by NOTIFY) after a commit
 * that queued work.
 */
export function createPgReplayStore(db: Db, wake: () => void): ReplayStore {
  return {
    async resend(tx, input) {
      const r = await txClient(tx).query<{ status: string; expunged: boolean; queued: number }>(RESEND, [
        input.appId,
        input.messageId,
        input.endpointId,
        input.now,
      ]);
      const res = r.rows[0];
      if (res === undefined) return false;
      // Thrown inside the transaction: anything the statement queued is rolled back with it.
      if (res.status !== 'active')
        throw new AppError('conflict', `The endpoint is ${res.status}; enable it before resending`);
      if (res.expunged) throw new AppError('conflict', 'The message content was expunged; there is nothing to send');
      onCommit(tx, wake);
      return true;
    },

    async replayDeliveries(tx, b) {
      const slots = Object.entries(b.slots);
      const res = await txClient(tx).query<BatchRow>(REPLAY_DELIVERIES, [
        b.appId,
        b.endpointId,
        b.states,
        b.after,
        b.since,
        b.until,
        b.eventTypes,
        b.channel,
        b.tag,
        b.statusCodeClass,
        b.limit,
        b.intervalMs,
        slots.map(([id]) => id),
        slots.map(([, at]) => at.toISOString()),
        b.reason,
        b.now,
      ]);
      return finishBatch(db, tx, res.rows[0]!, b.after, b.intervalMs, wake);
    },

    async countHeld(tx, input) {
      type Row = { paused: number; breaker: number; throttled: number; held_until: Date | null };
      const r = (
        await txClient(tx).query<Row>(COUNT_HELD, [input.appId, input.endpointId, input.since, input.until, input.now])
      ).rows[0]!;
      const byKind = { paused: r.paused, breaker: r.breaker, throttled: r.throttled };
      return { held: r.paused + r.breaker + r.throttled, byKind, heldUntil: r.held_until };
    },

    async replayMissing(tx, b) {
      const slot = b.slots[b.endpointId];
      const res = await txClient(tx).query<BatchRow>(REPLAY_MISSING, [
        b.appId,
        b.endpointId,
        b.after,
        b.since,
        b.until,
        b.limit,
        b.intervalMs,
        slot?.toISOString() ?? null,
        b.reason,
        b.now,
      ]);
      return finishBatch(db, tx, res.rows[0]!, b.after, b.intervalMs, wake);
    },
  };
}
