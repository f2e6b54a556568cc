import type { RetryPolicyFields } from '../../../domain/retry-policy.ts';
import type { RetryPolicyStore } from '../../../ports/retry-policy-store.ts';
import type { Db } from '../db.ts';
import { changedPolicyParams, changedPolicySql } from '../retry-policy-sql.ts';
import { nowSql } from '../sql.ts';

/*
 * WRITE_POLICY — $1 name, $2 replace, $3 fields to set (jsonb text), $4 fields to clear, $5 now. Changes an event
 * type's retry policy and its updated_at (and, by the trigger, its revision); returns the policy after. Index
 * event_types_pkey. Deliveries already created keep theirs (they store a snapshot: migration 1764000012000).
 */
const WRITE_POLICY = `
UPDATE event_types SET retry_policy = ${changedPolicySql(2, 3, 4)}, updated_at = ${nowSql(5)}
WHERE name = $1
RETURNING retry_policy`;

interface Row {
  retry_policy: RetryPolicyFields | null;
}

/** The PostgreSQL retry policies of event types (column event_types.retry_policy). */
export function createPgEventTypeRetryPolicyStore(db: Db): RetryPolicyStore<string> {
  return {
    async read(name) {
      const res = await db.query<Row>('SELECT retry_policy FROM event_types WHERE name = $1', [name]);
      return res.rows[0] === undefined ? undefined : res.rows[0].retry_policy;
    },
    async write(name, change, now) {
      const res = await db.query<Row>(WRITE_POLICY, [name, ...changedPolicyParams(change), now]);
      return res.rows[0] === undefined ? undefined : res.rows[0].retry_policy;
    },
  };
}
