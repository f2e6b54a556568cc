import type { RetryPolicyFields } from '../domain/retry-policy.ts';

/**
 * A change of one retry policy (src/domain/retry-policy.ts): `replace` starts from nothing (PUT) or from the stored
 * policy (PATCH); then the fields of `set` are set and those named in `clear` removed. A policy left with no field
 * is stored as none (NULL).
 */
export interface RetryPolicyChange {
  readonly replace: boolean;
  readonly set: RetryPolicyFields;
  readonly clear: readonly (keyof RetryPolicyFields)[];
}

/**
 * The retry policies of one kind of owner: endpoints (key: application id and endpoint id, live endpoints only) or
 * event types (key: the name). Each change is one statement, so two changes at once never lose a field.
 */
export interface RetryPolicyStore<K> {
  /** The owner's own policy (null = none), or undefined when there is no such owner. */
  read(key: K): Promise<RetryPolicyFields | null | undefined>;
  /**
   * Applies `change` and returns the policy after it (null = none), or undefined when there is no such owner.
   * `now` follows the Clock seam (null = the database clock): the owner's `updated_at`.
   */
  write(key: K, change: RetryPolicyChange, now: Date | null): Promise<RetryPolicyFields | null | undefined>;
}

/** The key of an endpoint's policy. */
export interface EndpointKey {
  readonly appId: string;
  readonly endpointId: string;
}
