import type { RetryPolicyChange } from '../../ports/retry-policy-store.ts';

/*
 * The one expression that changes a stored retry policy (migration 1764000012000), shared by the endpoint's and the
 * event type's stores: `(base || set) - clear`, NULL when no field is left. The merge happens in the statement, so
 * two changes at once never lose a field.
 */

/**
 * The new value of a `retry_policy` column: `$replace` (boolean) starts from nothing, else from the column; `$set`
 * (jsonb text) is laid over it; the keys of `$clear` (text[]) are removed.
 */
export function changedPolicySql(replace: number, set: number, clear: number): string {
  return `nullif((CASE WHEN $${replace}::boolean THEN '{}'::jsonb ELSE coalesce(retry_policy, '{}'::jsonb) END
                  || $${set}::jsonb) - $${clear}::text[], '{}'::jsonb)`;
}

/** The parameters of {@link changedPolicySql}, in its order (replace, set, clear). */
export function changedPolicyParams(change: RetryPolicyChange): [boolean, string, string[]] {
  return [change.replace, JSON.stringify(change.set), [...change.clear]];
}
