import { SECRET_READERS, type Capability } from '../domain/capabilities.ts';

/**
 * What a credential scoped to one application needs for each route (docs/adr/0011-credential-capabilities.md):
 * - a list: one of these capabilities (an empty list = any credential, e.g. asking who it is);
 * - `'operator'`: only the operator (admin token or operator key), whatever the route names.
 * A route's HEAD form needs what its GET needs. A route missing from this table is refused to every scoped
 * credential (403), and test/integration/api-capabilities.test.ts fails until it is added: one table,
 * reviewed in one place, rather than a flag in each route file.
 */
export type RouteRequirement = readonly Capability[] | 'operator';

const VIEW: readonly Capability[] = ['ViewBase'];
const ENDPOINT: readonly Capability[] = ['ManageEndpoint'];
const ATTEMPTS: readonly Capability[] = ['CreateAttempts'];
const MESSAGES: readonly Capability[] = ['ManageMessages'];

/** `METHOD /route/:template` → requirement. */
export const ROUTE_REQUIREMENTS: Readonly<Record<string, RouteRequirement>> = Object.freeze<
  Record<string, RouteRequirement>
>({
  'GET /api/v1/auth/me': [],
  'POST /api/v1/auth/logout': [],
  'POST /api/v1/auth/app-portal-access/:appId': 'operator',
  'POST /api/v1/auth/app/:appId/expire-all': 'operator',
  'POST /api/v1/api-key': 'operator',
  'GET /api/v1/api-key': 'operator',
  'DELETE /api/v1/api-key/:keyId': 'operator',

  // Applications: a scoped credential reads its own; its fields are the operator's (ADR 0011): one that
  // manages endpoints may send them unchanged (a PUT echoing what it read), and a PUT or PATCH that would
  // change one is 403 `field_forbidden`; deleting it is the operator's alone.
  'POST /api/v1/app': 'operator',
  'GET /api/v1/app': 'operator',
  'GET /api/v1/app/:appId': VIEW,
  'PUT /api/v1/app/:appId': ENDPOINT,
  'PATCH /api/v1/app/:appId': ENDPOINT,
  'DELETE /api/v1/app/:appId': 'operator',

  // Event types are shared by every application: read by anyone, written by the operator.
  'GET /api/v1/event-type': VIEW,
  'GET /api/v1/event-type/:eventTypeName': VIEW,
  'POST /api/v1/event-type': 'operator',
  // An event type's retry policy is the operator's, as the event type is; an endpoint's is its writers'.
  'GET /api/v1/event-type/:eventTypeName/retry-policy': VIEW,
  'PUT /api/v1/event-type/:eventTypeName/retry-policy': 'operator',
  'PATCH /api/v1/event-type/:eventTypeName/retry-policy': 'operator',
  'DELETE /api/v1/event-type/:eventTypeName/retry-policy': 'operator',
  'PUT /api/v1/event-type/:eventTypeName': 'operator',
  'PATCH /api/v1/event-type/:eventTypeName': 'operator',
  'DELETE /api/v1/event-type/:eventTypeName': 'operator',

  'GET /api/v1/app/:appId/endpoint': VIEW,
  'GET /api/v1/app/:appId/endpoint/:endpointId': VIEW,
  'GET /api/v1/app/:appId/endpoint/:endpointId/headers': VIEW,
  'GET /api/v1/app/:appId/endpoint/:endpointId/stats': VIEW,
  'GET /api/v1/app/:appId/endpoint/:endpointId/health': VIEW,
  'GET /api/v1/app/:appId/endpoint/:endpointId/msg': VIEW,
  'GET /api/v1/app/:appId/endpoint/:endpointId/dead-letter': VIEW,
  'GET /api/v1/dead-letter': 'operator',
  // A secret lets its holder sign requests the receiver accepts: only who may write the endpoint or its
  // secret, or was granted it by name, reads it.
  'GET /api/v1/app/:appId/endpoint/:endpointId/secret': SECRET_READERS,
  'POST /api/v1/app/:appId/endpoint/:endpointId/secret/rotate': ['ManageEndpointSecret', 'ManageEndpoint'],
  'POST /api/v1/app/:appId/endpoint': ENDPOINT,
  'PUT /api/v1/app/:appId/endpoint/:endpointId': ENDPOINT,
  'PATCH /api/v1/app/:appId/endpoint/:endpointId': ENDPOINT,
  'DELETE /api/v1/app/:appId/endpoint/:endpointId': ENDPOINT,
  'PUT /api/v1/app/:appId/endpoint/:endpointId/headers': ENDPOINT,
  'PATCH /api/v1/app/:appId/endpoint/:endpointId/headers': ENDPOINT,
  'PATCH /api/v1/app/:appId/endpoint/:endpointId/limits': ENDPOINT,
  'GET /api/v1/app/:appId/endpoint/:endpointId/retry-policy': VIEW,
  'PUT /api/v1/app/:appId/endpoint/:endpointId/retry-policy': ENDPOINT,
  'PATCH /api/v1/app/:appId/endpoint/:endpointId/retry-policy': ENDPOINT,
  'DELETE /api/v1/app/:appId/endpoint/:endpointId/retry-policy': ENDPOINT,
  // Receiver auth: its secrets are never answered (a masked summary), so who may view the endpoint reads it.
  'GET /api/v1/app/:appId/endpoint/:endpointId/auth': VIEW,
  'PUT /api/v1/app/:appId/endpoint/:endpointId/auth': ENDPOINT,
  'PATCH /api/v1/app/:appId/endpoint/:endpointId/auth': ENDPOINT,
  'DELETE /api/v1/app/:appId/endpoint/:endpointId/auth': ENDPOINT,
  // Payload filters: written, and tested against a sample, by who may change the endpoint.
  'GET /api/v1/app/:appId/endpoint/:endpointId/filter': VIEW,
  'PUT /api/v1/app/:appId/endpoint/:endpointId/filter': ENDPOINT,
  'DELETE /api/v1/app/:appId/endpoint/:endpointId/filter': ENDPOINT,
  'POST /api/v1/app/:appId/filter/test': ENDPOINT,
  'GET /api/v1/app/:appId/msg/:msgId/filtered-endpoint': VIEW,
  'POST /api/v1/app/:appId/endpoint/:endpointId/pause': ENDPOINT,
  'POST /api/v1/app/:appId/endpoint/:endpointId/resume': ENDPOINT,
  // The breaker guards the endpoint's receiver: who may pause and resume the endpoint may probe or close it.
  'POST /api/v1/app/:appId/endpoint/:endpointId/breaker/probe': ENDPOINT,
  'POST /api/v1/app/:appId/endpoint/:endpointId/breaker/close': ENDPOINT,

  'POST /api/v1/app/:appId/msg/:msgId/endpoint/:endpointId/resend': ATTEMPTS,
  'POST /api/v1/app/:appId/endpoint/:endpointId/send-example': ATTEMPTS,
  'POST /api/v1/app/:appId/endpoint/:endpointId/recover': ATTEMPTS,
  'POST /api/v1/app/:appId/endpoint/:endpointId/replay-missing': ATTEMPTS,
  'POST /api/v1/app/:appId/endpoint/:endpointId/bulk-replay': ATTEMPTS,
  'POST /api/v1/app/:appId/dead-letter/replay': ATTEMPTS,

  'POST /api/v1/app/:appId/msg': MESSAGES,
  'POST /api/v1/app/:appId/msg/expunge-all-contents': MESSAGES,
  'DELETE /api/v1/app/:appId/msg/:msgId/content': MESSAGES,
  'GET /api/v1/app/:appId/msg': VIEW,
  'GET /api/v1/app/:appId/msg/:msgId': VIEW,
  'GET /api/v1/app/:appId/msg/:msgId/endpoint': VIEW,
  'GET /api/v1/app/:appId/msg/:msgId/endpoint/:endpointId/timeline': VIEW,
  'GET /api/v1/app/:appId/msg/:msgId/attempt/:attemptId': VIEW,
  'GET /api/v1/app/:appId/attempt/msg/:msgId': VIEW,
  'GET /api/v1/app/:appId/attempt/endpoint/:endpointId': VIEW,
  'GET /api/v1/app/:appId/dead-letter': VIEW,
  // The search of the delivery log: a read of the application's own rows, like the lists it narrows.
  'GET /api/v1/app/:appId/search/msg': VIEW,
  'GET /api/v1/app/:appId/search/delivery': VIEW,
  'GET /api/v1/app/:appId/search/attempt': VIEW,
  'GET /api/v1/app/:appId/endpoint/:endpointId/undelivered': VIEW,
  // The list spans every application; a scoped credential reads its own tasks by id.
  'GET /api/v1/background-task': 'operator',
  'GET /api/v1/background-task/:taskId': VIEW,
  // Statistics: an application credential sees its own application's.
  'GET /api/v1/stats/overview': VIEW,
  'GET /api/v1/stats/time-in-state': VIEW,
  'GET /api/v1/stats/transport': 'operator',
  'GET /api/v1/settings': 'operator',
  'GET /api/v1/portal/branding': VIEW,
});

/**
 * The requirement of one route (`method` upper case, `url` the route template); HEAD takes its GET's.
 * @returns the requirement, or undefined for a route the table does not name (refused to scoped credentials)
 */
export function routeRequirement(method: string, url: string): RouteRequirement | undefined {
  return ROUTE_REQUIREMENTS[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}
