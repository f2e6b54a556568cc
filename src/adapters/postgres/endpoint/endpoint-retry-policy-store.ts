import type { RetryPolicyFields } from '../../../domain/retry-policy.ts';
import type { EndpointKey, RetryPolicyStore } from '../../../ports/retry-policy-store.ts';
import type { Db } from '../db.ts';
import { changedPolicyParams, changedPolicySql } from '../retry-policy-sql.ts';
import { nowSql } from '../sql.ts';

/*
 * WRITE_POLICY — $1 app id, $2 endpoint id, $3 replace, $4 fields to set (jsonb text), $5 fields to clear, $6 now.
 * Changes a live endpoint's retry policy and its updated_at; returns the policy after. Index endpoints_pkey.
 * Deliveries already created keep theirs (they store a snapshot: migration 1764000012000).
 */
const WRITE_POLICY = `
UPDATE endpoints SET retry_policy = ${changedPolicySql(3, 4, 5)}, updated_at = ${nowSql(6)}
WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL
RETURNING retry_policy`;

interface Row {
  retry_policy: RetryPolicyFields | null;
}

/** READ_POLICY — $1 app id, $2 endpoint id: a live endpoint's retry policy (endpoints_pkey). */
const READ_POLICY = 'SELECT retry_policy FROM endpoints WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL';

/** The PostgreSQL retry policies of endpoints (column endpoints.retry_policy). */
export function createPgEndpointRetryPolicyStore(db: Db): RetryPolicyStore<EndpointKey> {
  return {
    async read(key) {
      const res = await db.query<Row>(READ_POLICY, [key.appId, key.endpointId]);
      return res.rows[0] === undefined ? undefined : res.rows[0].retry_policy;
    },
    async write(key, change, now) {
      const res = await db.query<Row>(WRITE_POLICY, [key.appId, key.endpointId, ...changedPolicyParams(change), now]);
      return res.rows[0] === undefined ? undefined : res.rows[0].retry_policy;
    },
  };
}
