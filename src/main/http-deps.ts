import type { FastifyBaseLogger } from 'fastify';
import { createPgApplicationStore } from '../adapters/postgres/application/application-store.ts';
import { createPgEndpointStore } from '../adapters/postgres/endpoint/endpoint-store.ts';
import { createPgMessageQueryStore } from '../adapters/postgres/message/message-query-store.ts';
import { createPgUnitOfWork } from '../adapters/postgres/tx.ts';
import { databaseErrorOf } from '../adapters/postgres/sqlstate.ts';
import type { Db, SmallStatements } from '../adapters/postgres/db.ts';
import { createPgIdempotencyStore } from '../adapters/postgres/idempotency/idempotency-store.ts';
import { createPgMessageStore } from '../adapters/postgres/message/message-store.ts';
import type { NotifyCarrier } from '../adapters/postgres/wakeups/notify-carrier.ts';
import type { Handoff } from '../ports/handoff.ts';
import { createPgReplayStore } from '../adapters/postgres/delivery/replay-store.ts';
import { createPgApiKeyStore } from '../adapters/postgres/credentials/api-key-store.ts';
import { createApiKeys } from '../app/api-keys.ts';
import { createPgRetentionStore } from '../adapters/postgres/message/retention-store.ts';
import { createErasure } from '../app/retention.ts';
import { createApplications } from '../app/applications.ts';
import { createAuthenticator } from '../app/credentials.ts';
import { createEndpoints } from '../app/endpoints.ts';
import { createPublisher } from '../app/publish.ts';
import { createLookupCache } from '../app/lookup-cache.ts';
import type { ApplicationRecord } from '../ports/application-store.ts';
import type { EventTypeRecord } from '../ports/event-type-store.ts';
import { withTraceContext } from '../app/publish-trace.ts';
import { createQueries } from '../app/queries.ts';
import { createResender } from '../app/resend.ts';
import { createRetryPolicies } from '../app/retry-policies.ts';
import { createReceiverAuths } from '../app/receiver-auths.ts';
import { createPgReceiverAuthStore } from '../adapters/postgres/endpoint/endpoint-auth-store.ts';
import { createEndpointFilters, createPublishFilters, type CompiledAppFilters } from '../app/endpoint-filters.ts';
import { createPgEndpointFilterStore } from '../adapters/postgres/endpoint/endpoint-filter-store.ts';
import { createPgEndpointRetryPolicyStore } from '../adapters/postgres/endpoint/endpoint-retry-policy-store.ts';
import { createPgEventTypeRetryPolicyStore } from '../adapters/postgres/event-type/event-type-retry-policy-store.ts';
import { createEndpointHealth } from '../app/endpoint-health.ts';
import { createPgEndpointHealthStore } from '../adapters/postgres/endpoint/endpoint-health-store.ts';
import { createPgDeliveryQueryStore } from '../adapters/postgres/delivery/delivery-query-store.ts';
import { createPgEndpointSettingsStore } from '../adapters/postgres/endpoint/endpoint-settings-store.ts';
import { createPgEventTypeStore } from '../adapters/postgres/event-type/event-type-store.ts';
import { createPgMessageContentStore } from '../adapters/postgres/message/message-content-store.ts';
import { createPgTaskStore } from '../adapters/postgres/tasks/task-store.ts';
import { createDeliveryQueries } from '../app/delivery-queries.ts';
import { createSearch } from '../app/search.ts';
import { createPgSearchStore } from '../adapters/postgres/delivery/search-store.ts';
import { createEndpointSettings } from '../app/endpoint-settings.ts';
import { createEventTypes, withSubscriptionCheck } from '../app/event-types.ts';
import { createMessageContent } from '../app/message-content.ts';
import { createPayloadSchemas } from '../app/payload-schemas.ts';
import { createRecoverer } from '../app/recover.ts';
import { createReplays } from '../app/replay.ts';
import { createExampleSender } from '../app/send-example.ts';
import { createTaskRunner, createTasks } from '../app/tasks.ts';
import { createStats } from '../app/stats.ts';
import { createPgStatsStore } from '../adapters/postgres/delivery/stats-store.ts';
import type { Config } from '../config/config.ts';
import type { HttpDeps } from '../http/app.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Cipher } from '../ports/cipher.ts';
import type { Clock, Random } from '../ports/clock.ts';
import { NOOP_TRACER, type Tracer } from '../ports/tracer.ts';

/** What {@link createHttpDeps} wires together. `wake` wakes in-process dispatchers after a commit. */
export interface HttpWiring {
  readonly config: Config;
  readonly db: Db;
  /**
   * Where the heavy reads run (lists, statistics): the read router of TIDINGS_READ_DATABASE_URL (ADR 0022), which
   * falls back to `db` by itself. Absent = `db`. Only the list and statistics methods of the stores use it.
   */
  readonly reader?: Db;
  /**
   * Where publish groups of few messages run, planned once (docs/adr/0016-hot-path-cost.md, decision 24): on a
   * server a pool of their own, on the embedded engine the one session with the setting in each group's
   * transaction. Absent = `db`.
   */
  readonly smallPublishes?: SmallStatements;
  readonly cipher: Cipher;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: FastifyBaseLogger;
  readonly metrics: Metrics;
  readonly ready: () => Promise<boolean>;
  /** What `/readyz` reports beside its status (a broker transport's state). */
  readonly readiness?: () => Readonly<Record<string, string>>;
  readonly wake: () => void;
  /**
   * The process's NOTIFY as publish statements carry it (the Wakeups hub); given on a PostgreSQL server, where a
   * publish statement that starts while no NOTIFY of the process is in flight notifies at its commit (ADR 0006).
   * Absent = every publish calls `wake`.
   */
  readonly carrier?: NotifyCarrier;
  /** The dispatcher of this process, to which publishes hand their new deliveries leased (ADR 0018); absent = none. */
  readonly handoff?: Handoff;
  /** Starts the erasure runner at once (the retention job of this process); absent = the next retention run. */
  readonly kickErasure?: () => void;
  /** Stores each message with the publish request's trace context when tracing is on; default the no-op tracer. */
  readonly tracer?: Tracer;
}

/** Builds the dependencies of the HTTP API over PostgreSQL (the one place that wires them). */
export function createHttpDeps(w: HttpWiring): HttpDeps {
  const batchLimits = { maxBatch: w.config.dbBatch, maxInFlight: w.config.dbBatchesInFlight };
  const reader = w.reader ?? w.db;
  const applicationStore = createPgApplicationStore(w.db, batchLimits, reader);
  const endpointStore = createPgEndpointStore(w.db, w.cipher, reader);
  const messageQueries = createPgMessageQueryStore(w.db, w.cipher, reader);
  const deliveryQueries = createPgDeliveryQueryStore(w.db, w.cipher, reader);
  const apiKeyStore = createPgApiKeyStore(w.db);
  const idempotency = createPgIdempotencyStore(w.db);
  const unitOfWork = createPgUnitOfWork(w.db);
  /** The find methods the use cases resolve references with. */
  const lookups = {
    findApplication: applicationStore.findApplication,
    findEndpoint: endpointStore.findEndpoint,
    findMessage: messageQueries.findMessage,
    readPayloads: messageQueries.readPayloads,
  };
  const { clock, random } = w;
  const eventTypeStore = createPgEventTypeStore(w.db, batchLimits);
  // What publishes looked up, kept per process and confirmed by the publish statement (ADR 0006).
  const cacheOptions = { maxEntries: w.config.publishLookupCacheEntries };
  const eventTypeCache = createLookupCache<EventTypeRecord>({ ...cacheOptions, keepAbsent: true });
  const schemas = createPayloadSchemas({
    maxSchemaBytes: w.config.maxSchemaBytes,
    maxSchemaPatterns: w.config.maxSchemaPatterns,
    maxSchemaUniqueItems: w.config.maxSchemaUniqueItems,
  });
  const replayStore = createPgReplayStore(w.db, w.wake);
  const taskStore = createPgTaskStore(w.db);
  const messageContent = createPgMessageContentStore(w.db, w.cipher, w.wake);
  const endpointFilterStore = createPgEndpointFilterStore(w.db);
  const filterLimits = {
    maxBytes: w.config.filterMaxBytes,
    maxDepth: w.config.filterMaxDepth,
    maxNodes: w.config.filterMaxNodes,
    maxPath: w.config.filterMaxPath,
  };
  const replays = { lookups, tasks: taskStore, replay: replayStore, clock, random };
  return {
    config: w.config,
    logger: w.logger,
    metrics: w.metrics,
    authenticate: createAuthenticator({ store: apiKeyStore, adminToken: w.config.apiToken }),
    ready: w.ready,
    ...(w.readiness === undefined ? {} : { readiness: w.readiness }),
    idempotency,
    unitOfWork,
    databaseError: databaseErrorOf,
    applications: createApplications({
      store: applicationStore,
      keys: apiKeyStore,
      clock,
      random,
      publishCache: createLookupCache<ApplicationRecord>({ ...cacheOptions, keepAbsent: false }),
    }),
    endpoints: withSubscriptionCheck(
      createEndpoints({
        store: { ...endpointStore, findApplication: applicationStore.findApplication },
        clock,
        random,
        egressAllowlist: w.config.egressAllowlist,
        maxEndpointsPerApp: w.config.maxEndpointsPerApp,
      }),
      { store: eventTypeStore, strict: w.config.strictEventTypes },
    ),
    queries: createQueries({
      store: {
        ...lookups,
        ...messageQueries,
        findDelivery: deliveryQueries.findDelivery,
        listTimeline: deliveryQueries.listTimeline,
      },
      clock,
      maxPageBytes: w.config.maxPageBytes,
    }),
    publisher: withTraceContext(
      createPublisher({
        messages: createPgMessageStore(w.db, w.cipher, w.wake, {
          groupKeyed: true,
          limits: batchLimits,
          maxGroupedPayloadBytes: w.config.dbBatchMaxPayloadBytes,
          onGroupError: (error) =>
            w.logger.warn({ err: error }, 'grouped keyed publish failed; its calls take the ordinary keyed path'),
          ...(w.carrier === undefined ? {} : { carrier: w.carrier }),
          ...(w.handoff === undefined ? {} : { handoff: w.handoff }),
          ...(w.smallPublishes === undefined ? {} : { small: w.smallPublishes }),
        }),
        clock,
        random,
        onPublished: () => w.metrics.messagesPublished.inc(),
        deliverAtHorizonMs: w.config.deliverAtHorizonMs,
        checks: { eventTypes: eventTypeStore, schemas, cache: eventTypeCache },
      }),
      w.tracer ?? NOOP_TRACER,
    ),
    resender: createResender({ store: lookups, replay: replayStore, clock }),
    endpointHealth: createEndpointHealth({ store: lookups, health: createPgEndpointHealthStore(w.db, w.wake), clock }),
    retryPolicies: createRetryPolicies({
      lookups,
      clock,
      endpoints: createPgEndpointRetryPolicyStore(w.db),
      eventTypes: createPgEventTypeRetryPolicyStore(w.db),
      installation: { delaysMs: w.config.retrySchedule, attemptDeadlineMs: w.config.attemptDeadlineMs },
      limits: {
        maxAttempts: w.config.retryPolicyMaxAttempts,
        maxDelays: w.config.retryPolicyMaxDelays,
        leaseMs: w.config.leaseMs,
        minDelayMs: w.config.retryPolicyMinDelayMs,
        maxDelayMs: w.config.retryPolicyMaxDelayMs,
      },
    }),
    receiverAuths: createReceiverAuths({
      lookups,
      clock,
      store: createPgReceiverAuthStore(w.db, w.cipher),
      egressAllowlist: w.config.egressAllowlist,
    }),
    endpointFilters: createEndpointFilters({ lookups, clock, store: endpointFilterStore, limits: filterLimits }),
    publishFilters: createPublishFilters({
      store: endpointFilterStore,
      cache: createLookupCache<CompiledAppFilters>({ ...cacheOptions, keepAbsent: false }),
    }),
    apiKeys: createApiKeys({ keys: apiKeyStore, applications: applicationStore, clock, random }),
    erasure: createErasure({
      retention: createPgRetentionStore(w.db),
      tasks: taskStore,
      applications: applicationStore,
      unitOfWork,
      clock,
      random,
      kick: w.kickErasure ?? (() => undefined),
    }),
    eventTypes: createEventTypes({ store: eventTypeStore, schemas, clock }),
    endpointSettings: createEndpointSettings({
      lookups,
      store: createPgEndpointSettingsStore(w.db, w.cipher),
      clock,
      rotationGraceMs: w.config.secretRotationGraceMs,
    }),
    exampleSender: createExampleSender({
      lookups,
      eventTypes: eventTypeStore,
      messages: messageContent,
      clock,
      random,
    }),
    messageContent: createMessageContent({ lookups, store: messageContent, clock }),
    deliveryQueries: createDeliveryQueries({
      lookups,
      store: deliveryQueries,
      clock,
      maxPageBytes: w.config.maxPageBytes,
    }),
    search: createSearch({
      lookups,
      store: createPgSearchStore(w.db, reader),
      clock,
      settings: {
        maxWindowMs: w.config.searchMaxWindowMs,
        scanRows: w.config.searchScanRows,
        payloadRows: w.config.searchPayloadRows,
        payloadBytes: w.config.searchPayloadBytes,
        maxPageBytes: w.config.maxPageBytes,
      },
    }),
    recoverer: createRecoverer(replays),
    replays: createReplays(replays),
    tasks: createTasks({ store: taskStore }),
    stats: createStats({ lookups, store: createPgStatsStore(reader), clock }),
    taskRunner: createTaskRunner({
      store: taskStore,
      replay: replayStore,
      lookups,
      clock,
      logger: w.logger,
      pollIntervalMs: w.config.taskPollIntervalMs,
      settings: { batch: w.config.taskBatch, intervalMs: 1000 / w.config.replayRatePerS },
    }),
  };
}
