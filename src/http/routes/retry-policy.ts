import { z } from 'zod';
import type { RetryPolicyFields } from '../../domain/retry-policy.ts';
import type { RetryPolicyView } from '../../app/retry-policies.ts';
import type { RetryPolicyChange } from '../../ports/retry-policy-store.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { commonErrors, refParam } from '../schemas/common.ts';
import { endpointRetryPolicyQuery, retryPolicyIn, retryPolicyOut, retryPolicyPatch } from '../schemas/retry-policy.ts';

const endpointParams = z.object({ appId: refParam, endpointId: refParam });
const typeParams = z.object({ eventTypeName: refParam });
type Body = z.output<typeof retryPolicyIn>;
type Out = z.infer<typeof retryPolicyOut>;

/** A body as a change: PUT replaces (absent and null fall back); PATCH sets the given fields, clears the null ones. */
function changeOf(body: Body, replace: boolean): RetryPolicyChange {
  const set: { -readonly [K in keyof RetryPolicyFields]: RetryPolicyFields[K] } = {};
  const clear: (keyof RetryPolicyFields)[] = [];
  if (body.schedule != null) set.scheduleMs = body.schedule;
  else if (body.schedule === null) clear.push('scheduleMs');
  if (body.attemptTimeout != null) set.attemptTimeoutMs = body.attemptTimeout;
  else if (body.attemptTimeout === null) clear.push('attemptTimeoutMs');
  if (body.maxAttempts != null) set.maxAttempts = body.maxAttempts;
  else if (body.maxAttempts === null) clear.push('maxAttempts');
  return { replace, set, clear };
}

const CLEARED: RetryPolicyChange = { replace: true, set: {}, clear: [] };

function present(view: RetryPolicyView): Out {
  const p = view.policy;
  const e = view.effective;
  return {
    policy: {
      schedule: p?.scheduleMs === undefined ? null : [...p.scheduleMs],
      attemptTimeout: p?.attemptTimeoutMs ?? null,
      maxAttempts: p?.maxAttempts ?? null,
    },
    ...(view.eventType === undefined ? {} : { eventType: view.eventType }),
    effective: {
      schedule: [...e.scheduleMs],
      attemptTimeout: e.attemptTimeoutMs,
      maxAttempts: e.maxAttempts,
      sources: { ...e.sources },
    },
  };
}

const DESCRIPTION =
  "Tidings only. Each field falls back on its own: the endpoint's policy, then the event type's, " +
  "then the installation's settings (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE; attempts = the schedule's " +
  'entries + 1). A change applies to deliveries created after it; a delivery keeps the policy it was created with. ' +
  "A field outside the installation's limits is 422 naming it (TIDINGS_RETRY_POLICY_*, and TIDINGS_LEASE for " +
  'attemptTimeout).';

const WRITES = [
  ['put', retryPolicyIn, true],
  ['patch', retryPolicyPatch, false],
] as const;
const cleared = { 204: z.null().describe('Cleared'), ...commonErrors };
const answered = { 200: retryPolicyOut, ...commonErrors };

/**
 * Retry policies (Tidings-only routes, beside the Svix models, which stay strict): `GET|PUT|PATCH|DELETE
 * /api/v1/app/{app}/endpoint/{ep}/retry-policy` and `/api/v1/event-type/{name}/retry-policy`. GET, PUT and PATCH
 * answer the policy and its resolved values; DELETE clears it (204).
 */
export function registerRetryPolicy(app: Api, deps: Pick<HttpDeps, 'retryPolicies'>): void {
  const policies = deps.retryPolicies;
  const path = '/api/v1/app/:appId/endpoint/:endpointId/retry-policy';
  const common = { tags: ['Endpoint'], description: DESCRIPTION, params: endpointParams };
  app.get(
    path,
    {
      schema: {
        ...common,
        summary: 'Endpoint retry policy (Tidings)',
        querystring: endpointRetryPolicyQuery,
        response: answered,
      },
    },
    async (request) => {
      const { appId, endpointId } = request.params;
      return present(
        await policies.endpoint(principalOf(request), appId, endpointId, request.query.event_type ?? null),
      );
    },
  );
  for (const [method, body, replace] of WRITES) {
    app[method](
      path,
      {
        schema: {
          ...common,
          summary: `${replace ? 'Set' : 'Patch'} endpoint retry policy (Tidings)`,
          body,
          response: answered,
        },
      },
      async (request) => {
        const { appId, endpointId } = request.params;
        const change = changeOf(request.body, replace);
        return present(await policies.changeEndpoint(principalOf(request), appId, endpointId, change));
      },
    );
  }
  app.delete(
    path,
    {
      schema: { ...common, summary: 'Clear endpoint retry policy (Tidings)', response: cleared },
    },
    async (request, reply) => {
      await policies.changeEndpoint(principalOf(request), request.params.appId, request.params.endpointId, CLEARED);
      return reply.code(204).send(null);
    },
  );

  const typePath = '/api/v1/event-type/:eventTypeName/retry-policy';
  const typeCommon = { tags: ['Event Type'], description: DESCRIPTION, params: typeParams };
  app.get(
    typePath,
    {
      schema: { ...typeCommon, summary: 'Event type retry policy (Tidings)', response: answered },
    },
    async (request) => present(await policies.eventType(principalOf(request), request.params.eventTypeName)),
  );
  for (const [method, body, replace] of WRITES) {
    app[method](
      typePath,
      {
        schema: {
          ...typeCommon,
          summary: `${replace ? 'Set' : 'Patch'} event type retry policy (Tidings)`,
          body,
          response: answered,
        },
      },
      async (request) => {
        const change = changeOf(request.body, replace);
        return present(await policies.changeEventType(principalOf(request), request.params.eventTypeName, change));
      },
    );
  }
  app.delete(
    typePath,
    {
      schema: { ...typeCommon, summary: 'Clear event type retry policy (Tidings)', response: cleared },
    },
    async (request, reply) => {
      await policies.changeEventType(principalOf(request), request.params.eventTypeName, CLEARED);
      return reply.code(204).send(null);
    },
  );
}
