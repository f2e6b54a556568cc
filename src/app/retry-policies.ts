import { AppError, notFound } from '../domain/errors.ts';
import {
  effectiveRetryPolicy,
  retryPolicyIssues,
  type EffectiveRetryPolicy,
  type InstallationRetry,
  type RetryPolicyFields,
  type RetryPolicyLimits,
} from '../domain/retry-policy.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { EndpointKey, RetryPolicyChange, RetryPolicyStore } from '../ports/retry-policy-store.ts';
import { requireAdmin, resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** Dependencies of {@link createRetryPolicies}. */
export interface RetryPoliciesDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  readonly endpoints: RetryPolicyStore<EndpointKey>;
  readonly eventTypes: RetryPolicyStore<string>;
  readonly clock: Clock;
  /** The installation's settings a policy falls back on. */
  readonly installation: InstallationRetry;
  /** The limits every policy is checked against. */
  readonly limits: RetryPolicyLimits;
}

/** An owner's own policy and what it resolves to. */
export interface RetryPolicyView {
  /** The owner's own fields (null = none set). */
  readonly policy: RetryPolicyFields | null;
  /**
   * Every field resolved. For an endpoint: endpoint → `eventType`'s policy (when one is named) → installation; for an
   * event type: event type → installation (what its messages get at an endpoint without a policy of its own).
   */
  readonly effective: EffectiveRetryPolicy;
  /** For an endpoint, the event type whose policy took part (null = none named). */
  readonly eventType?: string | null;
}

/**
 * Retry policies of endpoints and event types (Tidings-only routes; docs/reference/api.md, "Retry policies"). A
 * change applies to deliveries created after it: a delivery stores the policy it was created with
 * (docs/adr/0025-retry-policy-snapshot.md). Endpoints' policies are changed by who may change the endpoint; event
 * types' by the operator, as the event types themselves.
 */
export interface RetryPolicies {
  /**
   * The endpoint's policy and, resolved, what a message of `eventType` (null = a type without a policy) gets.
   * @throws AppError `not_found`
   */
  endpoint(
    principal: Principal,
    appRef: string,
    endpointRef: string,
    eventType: string | null,
  ): Promise<RetryPolicyView>;
  /**
   * Changes the endpoint's policy (PUT: `change.replace`; PATCH: only the named fields).
   * @throws AppError `not_found`; `validation` naming each field outside the installation's limits (nothing changed)
   */
  changeEndpoint(
    principal: Principal,
    appRef: string,
    endpointRef: string,
    change: RetryPolicyChange,
  ): Promise<RetryPolicyView>;
  /** The event type's policy. @throws AppError `not_found` */
  eventType(principal: Principal, name: string): Promise<RetryPolicyView>;
  /** Changes the event type's policy. @throws AppError `forbidden` (not the operator), `not_found`, `validation` */
  changeEventType(principal: Principal, name: string, change: RetryPolicyChange): Promise<RetryPolicyView>;
}

/** Makes the retry policy use cases. */
export function createRetryPolicies(deps: RetryPoliciesDeps): RetryPolicies {
  const endpointKey = async (principal: Principal, appRef: string, endpointRef: string): Promise<EndpointKey> => {
    const app = await resolveApplication(deps.lookups, principal, appRef);
    const ep = await deps.lookups.findEndpoint(app.id, endpointRef);
    if (ep === null) throw notFound('Endpoint');
    return { appId: app.id, endpointId: ep.id };
  };
  const check = (change: RetryPolicyChange): void => {
    const issues = retryPolicyIssues(change.set, deps.limits);
    if (issues.length > 0) throw new AppError('validation', issues);
  };
  const endpointView = async (policy: RetryPolicyFields | null, eventType: string | null): Promise<RetryPolicyView> => {
    const typePolicy = eventType === null ? null : ((await deps.eventTypes.read(eventType)) ?? null);
    return { policy, eventType, effective: effectiveRetryPolicy(policy, typePolicy, deps.installation) };
  };
  const typeView = (policy: RetryPolicyFields | null): RetryPolicyView => ({
    policy,
    effective: effectiveRetryPolicy(null, policy, deps.installation),
  });
  return {
    async endpoint(principal, appRef, endpointRef, eventType) {
      const key = await endpointKey(principal, appRef, endpointRef);
      const policy = await deps.endpoints.read(key);
      if (policy === undefined) throw notFound('Endpoint');
      return endpointView(policy, eventType);
    },
    async changeEndpoint(principal, appRef, endpointRef, change) {
      const key = await endpointKey(principal, appRef, endpointRef);
      check(change);
      const policy = await deps.endpoints.write(key, change, deps.clock.sqlNow());
      if (policy === undefined) throw notFound('Endpoint');
      return endpointView(policy, null);
    },
    async eventType(_principal, name) {
      const policy = await deps.eventTypes.read(name);
      if (policy === undefined) throw notFound('Event type');
      return typeView(policy);
    },
    async changeEventType(principal, name, change) {
      requireAdmin(principal);
      check(change);
      const policy = await deps.eventTypes.write(name, change, deps.clock.sqlNow());
      if (policy === undefined) throw notFound('Event type');
      return typeView(policy);
    },
  };
}
