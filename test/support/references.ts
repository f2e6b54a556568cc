import type { Db } from '../../src/adapters/postgres/db.ts';

/** Rows whose reference points at nothing, per kind (docs/adr/0016-hot-path-cost.md, decision 13). */
export interface DanglingRows {
  /** Deliveries whose message, endpoint or application is gone. */
  readonly deliveries: number;
  /** Timeline rows whose delivery is gone. */
  readonly events: number;
  /** Attempts whose delivery is gone. */
  readonly attempts: number;
}

/**
 * Counts the rows of the delivery path whose reference holds by construction rather than by a foreign key
 * (migration 1764000009500): each count must be 0 in every state the database can reach.
 */
export async function danglingRows(db: Db): Promise<DanglingRows> {
  const row = (
    await db.query<DanglingRows>(`
    SELECT (SELECT count(*)::int FROM deliveries d
            WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = d.message_id AND m.app_id = d.app_id)
               OR NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = d.endpoint_id
                 AND e.app_id = d.app_id)) AS deliveries,
           (SELECT count(*)::int FROM delivery_events v
             WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = v.delivery_id)) AS events,
           (SELECT count(*)::int FROM attempts a WHERE NOT EXISTS
             (SELECT 1 FROM deliveries d WHERE d.id = a.delivery_id)) AS attempts`)
  ).rows[0]!;
  return row;
}
