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
import {
  createPgEndpointHasMtls,
  createPgReceiverAuthStore,
} from '../adapters/postgres/endpoint/endpoint-auth-store.ts';
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
  const s = createStores(w);
  return {
    config: w.config,
    logger: w.logger,
    metrics: w.metrics,
    authenticate: createAuthenticator({ store: s.apiKeyStore, adminToken: w.config.apiToken }),
    ready: w.ready,
    ...(w.readiness === undefined ? {} : { readiness: w.readiness }),
    idempotency: createPgIdempotencyStore(w.db),
    unitOfWork: s.unitOfWork,
    databaseError: databaseErrorOf,
    applications: createApplications({
      store: s.applicationStore,
      keys: s.apiKeyStore,
      clock: w.clock,
      random: w.random,
      publishCache: createLookupCache<ApplicationRecord>({ ...s.cacheOptions, keepAbsent: false }),
    }),
    apiKeys: createApiKeys({ keys: s.apiKeyStore, applications: s.applicationStore, clock: w.clock, random: w.random }),
    ...publishingDeps(w, s),
    ...endpointDeps(w, s),
    ...readDeps(w, s),
    ...taskDeps(w, s),
  };
}

/** The stores and settings that several use cases share. */
type Stores = ReturnType<typeof createStores>;

function createStores(w: HttpWiring) {
  const batchLimits = { maxBatch: w.config.dbBatch, maxInFlight: w.config.dbBatchesInFlight };
  const reader = w.reader ?? w.db;
  const applicationStore = createPgApplicationStore(w.db, batchLimits, reader);
  const endpointStore = createPgEndpointStore(w.db, w.cipher, reader);
  const messageQueries = createPgMessageQueryStore(w.db, w.cipher, reader);
  return {
    batchLimits,
    reader,
    applicationStore,
    endpointStore,
    messageQueries,
    deliveryQueries: createPgDeliveryQueryStore(w.db, w.cipher, reader),
    apiKeyStore: createPgApiKeyStore(w.db),
    unitOfWork: createPgUnitOfWork(w.db),
    /** The find methods the use cases resolve references with. */
    lookups: {
      findApplication: applicationStore.findApplication,
      findEndpoint: endpointStore.findEndpoint,
      findMessage: messageQueries.findMessage,
      readPayloads: messageQueries.readPayloads,
    },
    eventTypeStore: createPgEventTypeStore(w.db, batchLimits),
    // What publishes looked up, kept per process and confirmed by the publish statement (ADR 0006).
    cacheOptions: { maxEntries: w.config.publishLookupCacheEntries },
    schemas: createPayloadSchemas({
      maxSchemaBytes: w.config.maxSchemaBytes,
      maxSchemaPatterns: w.config.maxSchemaPatterns,
      maxSchemaUniqueItems: w.config.maxSchemaUniqueItems,
    }),
    replayStore: createPgReplayStore(w.db, w.wake),
    taskStore: createPgTaskStore(w.db),
    messageContent: createPgMessageContentStore(w.db, w.cipher, w.wake),
    endpointFilterStore: createPgEndpointFilterStore(w.db),
  };
}

/** Publishing: the publisher with its message store, the payload filters at publish, the event types. */
function publishingDeps(w: HttpWiring, s: Stores): Pick<HttpDeps, 'publisher' | 'publishFilters' | 'eventTypes'> {
  const { clock, random } = w;
  const eventTypeCache = createLookupCache<EventTypeRecord>({ ...s.cacheOptions, keepAbsent: true });
  return {
    publisher: withTraceContext(
      createPublisher({
        messages: createPgMessageStore(w.db, w.cipher, w.wake, {
          groupKeyed: true,
          limits: s.batchLimits,
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
        checks: { eventTypes: s.eventTypeStore, schemas: s.schemas, cache: eventTypeCache },
      }),
      w.tracer ?? NOOP_TRACER,
    ),
    publishFilters: createPublishFilters({
      store: s.endpointFilterStore,
      cache: createLookupCache<CompiledAppFilters>({ ...s.cacheOptions, keepAbsent: false }),
    }),
    eventTypes: createEventTypes({ store: s.eventTypeStore, schemas: s.schemas, clock }),
  };
}

/** An endpoint and what hangs off it: health, retry policy, receiver authentication, payload filter, settings. */
function endpointDeps(
  w: HttpWiring,
  s: Stores,
): Pick<
  HttpDeps,
  'endpoints' | 'endpointHealth' | 'retryPolicies' | 'receiverAuths' | 'endpointFilters' | 'endpointSettings'
> {
  const { clock, random } = w;
  const { lookups } = s;
  const filterLimits = {
    maxBytes: w.config.filterMaxBytes,
    maxDepth: w.config.filterMaxDepth,
    maxNodes: w.config.filterMaxNodes,
    maxPath: w.config.filterMaxPath,
  };
  return {
    endpoints: withSubscriptionCheck(
      createEndpoints({
        store: { ...s.endpointStore, findApplication: s.applicationStore.findApplication },
        clock,
        random,
        egressAllowlist: w.config.egressAllowlist,
        maxEndpointsPerApp: w.config.maxEndpointsPerApp,
        hasMtls: createPgEndpointHasMtls(w.db),
      }),
      { store: s.eventTypeStore, strict: w.config.strictEventTypes },
    ),
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
    endpointFilters: createEndpointFilters({ lookups, clock, store: s.endpointFilterStore, limits: filterLimits }),
    endpointSettings: createEndpointSettings({
      lookups,
      store: createPgEndpointSettingsStore(w.db, w.cipher),
      clock,
      rotationGraceMs: w.config.secretRotationGraceMs,
    }),
  };
}

/** The read side: messages, deliveries, the search, the statistics; a message's content and the example message. */
function readDeps(
  w: HttpWiring,
  s: Stores,
): Pick<HttpDeps, 'queries' | 'deliveryQueries' | 'search' | 'stats' | 'messageContent' | 'exampleSender'> {
  const { clock, random } = w;
  const { lookups } = s;
  return {
    queries: createQueries({
      store: {
        ...lookups,
        ...s.messageQueries,
        findDelivery: s.deliveryQueries.findDelivery,
        listTimeline: s.deliveryQueries.listTimeline,
      },
      clock,
      maxPageBytes: w.config.maxPageBytes,
    }),
    deliveryQueries: createDeliveryQueries({
      lookups,
      store: s.deliveryQueries,
      clock,
      maxPageBytes: w.config.maxPageBytes,
    }),
    search: createSearch({
      lookups,
      store: createPgSearchStore(w.db, s.reader),
      clock,
      settings: {
        maxWindowMs: w.config.searchMaxWindowMs,
        scanRows: w.config.searchScanRows,
        payloadRows: w.config.searchPayloadRows,
        payloadBytes: w.config.searchPayloadBytes,
        maxPageBytes: w.config.maxPageBytes,
      },
    }),
    stats: createStats({ lookups, store: createPgStatsStore(s.reader), clock }),
    messageContent: createMessageContent({ lookups, store: s.messageContent, clock }),
    exampleSender: createExampleSender({
      lookups,
      eventTypes: s.eventTypeStore,
      messages: s.messageContent,
      clock,
      random,
    }),
  };
}

/** Work done over many deliveries: resend, replays and recovery, erasure, the background tasks and their runner. */
function taskDeps(
  w: HttpWiring,
  s: Stores,
): Pick<HttpDeps, 'resender' | 'recoverer' | 'replays' | 'erasure' | 'tasks' | 'taskRunner'> {
  const { clock, random } = w;
  const { lookups, taskStore, replayStore } = s;
  const replays = { lookups, tasks: taskStore, replay: replayStore, clock, random };
  return {
    resender: createResender({ store: lookups, replay: replayStore, clock }),
    recoverer: createRecoverer(replays),
    replays: createReplays(replays),
    erasure: createErasure({
      retention: createPgRetentionStore(w.db),
      tasks: taskStore,
      applications: s.applicationStore,
      unitOfWork: s.unitOfWork,
      clock,
      random,
      kick: w.kickErasure ?? (() => undefined),
    }),
    tasks: createTasks({ store: taskStore }),
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
