import { AppError } from '../../domain/errors.ts';
import type { ReplayStore } from '../../ports/replay-store.ts';
import type { Db } from './db.ts';
import { WAKE_CHANNEL } from './message-store.ts';

/*
 * RESEND — $1 app id, $2 message id, $3 endpoint id, $4 now. Makes the pair's delivery due now (creating it
 * if missing) and appends a timeline row. Returns the endpoint status and the delivery state after.
 */
const RESEND = `
WITH target AS (
  SELECT m.id AS message_id, e.id AS endpoint_id, e.status
  FROM messages m JOIN endpoints e ON e.app_id = m.app_id
  WHERE m.app_id = $1 AND m.id = $2 AND e.id = $3 AND e.deleted_at IS NULL
), made AS (
  INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, manual, manual_return, created_at, updated_at)
  SELECT $1, message_id, endpoint_id, 'pending', coalesce($4::timestamptz, clock_timestamp()), true, 'dead',
         coalesce($4::timestamptz, clock_timestamp()), coalesce($4::timestamptz, clock_timestamp())
  FROM target WHERE status = 'active'
  ON CONFLICT (message_id, endpoint_id) DO UPDATE
  SET manual = CASE WHEN deliveries.state IN ('dead', 'succeeded', 'skipped') THEN true ELSE deliveries.manual END,
      manual_return = CASE WHEN deliveries.state IN ('dead', 'succeeded', 'skipped') THEN deliveries.state ELSE deliveries.manual_return END,
      state = CASE WHEN deliveries.state = 'leased' THEN 'leased' ELSE 'pending' END,
      next_attempt_at = CASE WHEN deliveries.state = 'leased' THEN deliveries.next_attempt_at ELSE coalesce($4::timestamptz, clock_timestamp()) END,
      updated_at = coalesce($4::timestamptz, clock_timestamp())
  RETURNING id, state
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, reason, at)
  SELECT id, state, 'resend_requested', coalesce($4::timestamptz, clock_timestamp()) FROM made
)
SELECT t.status, (SELECT count(*)::int FROM made) AS queued FROM target t`;

/** The PostgreSQL {@link ReplayStore}. `wake` wakes in-process dispatchers after a change. */
export function createPgReplayStore(db: Db, wake: () => void): ReplayStore {
  return {
    async resend(input) {
      const res = await db.tx(async (client) => {
        const r = await client.query<{ status: string; queued: number }>(RESEND, [input.appId, input.messageId, input.endpointId, input.now]);
        if ((r.rows[0]?.queued ?? 0) > 0 && db.engine === 'server') await client.query(`SELECT pg_notify('${WAKE_CHANNEL}', '')`);
        return r.rows[0];
      });
      if (res === undefined) return false;
      if (res.status !== 'active') throw new AppError('conflict', `The endpoint is ${res.status}; enable it before resending`);
      wake();
      return true;
    },
  };
}
