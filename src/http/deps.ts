import type { AppError } from '../domain/errors.ts';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ApiKeys } from '../app/api-keys.ts';
import type { Erasure } from '../app/retention.ts';
import type { Applications } from '../app/applications.ts';
import type { Principal } from '../app/credentials.ts';
import type { Endpoints } from '../app/endpoints.ts';
import type { Resender } from '../app/resend.ts';
import type { ReceiverAuths } from '../app/receiver-auths.ts';
import type { RetryPolicies } from '../app/retry-policies.ts';
import type { EndpointHealthUseCases } from '../app/endpoint-health.ts';
import type { EndpointFilters, PublishFilters } from '../app/endpoint-filters.ts';
import type { Publisher } from '../app/publish.ts';
import type { Queries } from '../app/queries.ts';
import type { DeliveryQueries } from '../app/delivery-queries.ts';
import type { Search } from '../app/search.ts';
import type { EndpointSettings } from '../app/endpoint-settings.ts';
import type { EventTypes } from '../app/event-types.ts';
import type { MessageContent } from '../app/message-content.ts';
import type { Recoverer } from '../app/recover.ts';
import type { Replays } from '../app/replay.ts';
import type { ExampleSender } from '../app/send-example.ts';
import type { Stats } from '../app/stats.ts';
import type { TaskRunner, Tasks } from '../app/tasks.ts';
import type { Config } from '../config/config.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { IdempotencyStore } from '../ports/idempotency-store.ts';
import type { UnitOfWork } from '../ports/unit-of-work.ts';

/** Everything the HTTP API needs; main/ wires it (the HTTP layer never sees an adapter). */
export interface HttpDeps {
  /** Limits and idempotency settings: maxBodyBytes, idempotencyTtlMs, idempotencyWaitMs. */
  readonly config: Config;
  /** The process logger (pino, with redaction); Fastify logs through it. */
  readonly logger: FastifyBaseLogger;
  /** `/metrics` serves this registry in Prometheus text. */
  readonly metrics: Pick<Metrics, 'registry'>;
  /** SHA-256 of a Bearer token (`hashToken`) → principal, or null when unknown or revoked. */
  readonly authenticate: (tokenHash: Buffer) => Promise<Principal | null>;
  /** Readiness: true when the database answers (`/readyz`). */
  readonly ready: () => Promise<boolean>;
  /**
   * What `/readyz` reports beside its status, e.g. `{ transport: 'rabbitmq', broker: 'connected' }`; absent = nothing.
   */
  readonly readiness?: () => Readonly<Record<string, string>>;
  /** Idempotency keys: a keyed write commits with its key through it (app/write-once.ts). */
  readonly idempotency: IdempotencyStore;
  /** Transactions of the routes' writes (with an Idempotency-Key, the idempotency store opens the transaction). */
  readonly unitOfWork: UnitOfWork;
  /** The database adapter's mapping of its failures to the error catalogue (null = not one it names). */
  readonly databaseError: (error: unknown) => AppError | null;
  readonly applications: Applications;
  readonly endpoints: Endpoints;
  readonly queries: Queries;
  readonly publisher: Publisher;
  /** Endpoint health, limits, pause and resume. */
  readonly endpointHealth: EndpointHealthUseCases;
  /** Retry policies of endpoints and event types (Tidings-only routes). */
  readonly retryPolicies: RetryPolicies;
  /** Endpoints' receiver authentication (Tidings-only route). */
  readonly receiverAuths: ReceiverAuths;
  /** Endpoints' payload filters (Tidings-only routes). */
  readonly endpointFilters: EndpointFilters;
  /** The payload filters as publishes meet them; absent = none evaluated. */
  readonly publishFilters?: PublishFilters;
  /** Resend (one manual attempt now). */
  readonly resender: Resender;
  /** The credentials API: API keys and application-portal tokens (docs/guides/security.md). */
  readonly apiKeys: ApiKeys;
  /** Erasure of payloads by tag or eventId prefix, as a background task (docs/guides/security.md). */
  readonly erasure: Erasure;
  /** Event types (Svix `/event-type`), with their JSON Schemas. */
  readonly eventTypes: EventTypes;
  /** Endpoint secret rotation and custom headers. */
  readonly endpointSettings: EndpointSettings;
  /** Svix send-example. */
  readonly exampleSender: ExampleSender;
  /** Erasing message content. */
  readonly messageContent: MessageContent;
  /** Destinations of a message, messages of an endpoint, endpoint stats, dead letters. */
  readonly deliveryQueries: DeliveryQueries;
  /** The search of the delivery log: messages, deliveries, attempts, what an endpoint did not get. */
  readonly search: Search;
  /** Svix recover (a background task). */
  readonly recoverer: Recoverer;
  /** Replay-missing, bulk replay, dead-letter replay (background tasks). */
  readonly replays: Replays;
  /** Reading background tasks. */
  readonly tasks: Tasks;
  /** Installation statistics: overview and time-in-state. */
  readonly stats: Stats;
  /** Steps replay tasks in this process; started and stopped with the HTTP server (buildApp). */
  readonly taskRunner: TaskRunner;
}

/** The Fastify instance with the zod type provider, as route files see it. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every non-public route. */
    principal: Principal | null;
    /** SHA-256 of the request's Bearer token (`hashToken`), set by the auth hook; null before it or without one. */
    tokenHash: Buffer | null;
    /** The raw bytes of a JSON request body (for payload spans and idempotency fingerprints). */
    rawBody: Buffer | null;
    /** The same body decoded as UTF-8. */
    rawText: string | null;
  }
  interface FastifyContextConfig {
    /** Served without authentication (health, readiness, metrics, OpenAPI document). */
    public?: boolean;
    /**
     * Operator only: an application-scoped key gets 403 before anything is read (also src/http/route-capabilities.ts).
     */
    adminOnly?: boolean;
  }
}
