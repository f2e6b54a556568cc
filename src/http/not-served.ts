/**
 * The parts of the Svix API that Tidings deliberately does not serve (docs/adr/0003-svix-compatibility.md,
 * docs/guides/coming-from-svix.md, "Not served"). A request to one of them is answered 404 with the code
 * `not_served` and the reason, so that a caller can tell "not served" from "no such object" (`not_found`). Every call
 * of the official svix client (2.5.0) that Tidings has no route for matches one of these families; a test checks
 * it, and that the guide lists each family with its reason.
 */
export interface NotServedFamily {
  /** Name as docs/guides/coming-from-svix.md lists it. */
  readonly name: string;
  /** Paths of the family (the request path, without the query). */
  readonly path: RegExp;
  /** One sentence: why Tidings does not serve it. */
  readonly reason: string;
}

const SEG = '[^/]+';

/** Every family, in the guide's order. */
export const NOT_SERVED: readonly NotServedFamily[] = Object.freeze([
  {
    name: 'destinations',
    path: new RegExp(`^/api/v1/app/${SEG}/destination(/|$)`),
    reason:
      'Tidings delivers over HTTP(S) to endpoints only; non-HTTP sinks (queues, buckets, databases) are not built in.',
  },
  {
    name: 'transformations',
    path: new RegExp(`^/api/v1/app/${SEG}/endpoint/${SEG}/transformation$`),
    reason: 'Tidings runs no customer code; the payload delivered is the one published.',
  },
  {
    name: 'autoconfig',
    path: new RegExp(`^/api/v1/app/${SEG}/(autoconfig(/|$)|endpoint/${SEG}/auto-config$)`),
    reason: "automatic endpoint set-up belongs to Svix's hosted tooling; create endpoints with the endpoint API.",
  },
  {
    name: 'message poller',
    path: new RegExp(`^/api/v1/app/${SEG}/(poller|polling-endpoint)(/|$)`),
    reason: 'Tidings pushes to endpoints; there are no polling endpoints to pull from.',
  },
  {
    name: 'integrations',
    path: new RegExp(`^/api/v1/app/${SEG}/integration(/|$)`),
    reason: "integration keys belong to Svix's hosted integrations.",
  },
  {
    name: 'message precheck',
    path: new RegExp(`^/api/v1/app/${SEG}/msg/precheck(/|$)`),
    reason:
      'publishing is cheap and a message with no subscribed endpoint makes no delivery, so there is nothing to ' +
      'check first.',
  },
  {
    name: 'bulk expunge',
    path: new RegExp(`^/api/v1/app/${SEG}/msg/bulk-expunge$`),
    reason: 'contents are erased one by one (expunge content) or by tag or eventId prefix (expunge-all-contents).',
  },
  {
    name: 'attempt content expunge',
    path: new RegExp(`^/api/v1/app/${SEG}/msg/${SEG}/attempt/${SEG}/content$`),
    reason: "stored response prefixes are erased by retention, together with their message's payload.",
  },
  {
    name: 'operational-webhook endpoints',
    path: /^\/api\/v1\/operational-webhook(\/|$)/,
    reason:
      'operational webhooks go to an application of yours (TIDINGS_OPERATIONAL_APP), managed with the ordinary ' +
      'endpoint API.',
  },
  {
    name: 'connectors',
    path: /^\/api\/v1\/connector(\/|$)/,
    reason: "connector templates belong to Svix's hosted catalogue.",
  },
  {
    name: 'environments',
    path: /^\/api\/v1\/environment(\/|$)/,
    reason: 'a deployment is one environment; copy settings with the ordinary API.',
  },
  {
    name: 'OpenAPI import',
    path: /^\/api\/v1\/event-type\/import\/openapi$/,
    reason: 'event types are created one by one with their JSON Schemas (event-type create).',
  },
  {
    name: 'statistics',
    path: /^\/api\/v1\/stats(\/|$)/,
    reason:
      'usage statistics are Svix billing reports; Tidings has per-endpoint stats and health and Prometheus metrics.',
  },
  {
    name: 'streaming',
    path: /^\/api\/v1\/(stream(\/|$)|auth\/stream)/,
    reason: 'Svix Stream is a separate product (event streams and sinks).',
  },
  { name: 'ingest', path: /^\/ingest(\/|$)/, reason: 'Svix Ingest receives webhooks; Tidings sends them.' },
]);

/**
 * The family a request path belongs to, or undefined when it is none (an unknown route, or a served route
 * whose object does not exist).
 * @param path the request path, without the query string
 */
export function notServedFamily(path: string): NotServedFamily | undefined {
  return NOT_SERVED.find((family) => family.path.test(path));
}
