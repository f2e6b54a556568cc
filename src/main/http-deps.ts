import type { FastifyBaseLogger } from 'fastify';
import { createPgCatalogStore } from '../adapters/postgres/catalog-store.ts';
import type { Db } from '../adapters/postgres/db.ts';
import { createPgIdempotencyStore } from '../adapters/postgres/idempotency-store.ts';
import { createPgMessageStore } from '../adapters/postgres/message-store.ts';
import { createPgReplayStore } from '../adapters/postgres/replay-store.ts';
import { createPgApiKeyStore } from '../adapters/postgres/api-key-store.ts';
import { createApiKeys } from '../app/api-keys.ts';
import { createPgRetentionStore } from '../adapters/postgres/retention-store.ts';
import { createErasure } from '../app/retention.ts';
import { createApplications } from '../app/applications.ts';
import { createAuthenticator } from '../app/credentials.ts';
import { createEndpoints } from '../app/endpoints.ts';
import { createPublisher } from '../app/publish.ts';
import { withTraceContext } from '../app/publish-trace.ts';
import { createQueries } from '../app/queries.ts';
import { createResender } from '../app/resend.ts';
import { createEndpointHealth } from '../app/endpoint-health.ts';
import { createPgEndpointHealthStore } from '../adapters/postgres/endpoint-health-store.ts';
import { createPgDeliveryQueryStore } from '../adapters/postgres/catalog-deliveries.ts';
import { createPgEndpointSettingsStore } from '../adapters/postgres/catalog-endpoint-settings.ts';
import { createPgEventTypeStore } from '../adapters/postgres/catalog-event-types.ts';
import { createPgMessageContentStore } from '../adapters/postgres/catalog-message-content.ts';
import { createPgTaskStore } from '../adapters/postgres/catalog-tasks.ts';
import { createDeliveryQueries } from '../app/delivery-queries.ts';
import { createEndpointSettings } from '../app/endpoint-settings.ts';
import { createEventTypes, withEventTypeChecks, withSubscriptionCheck } from '../app/event-types.ts';
import { createMessageContent } from '../app/message-content.ts';
import { createPayloadSchemas } from '../app/payload-schemas.ts';
import { createRecoverer } from '../app/recover.ts';
import { createReplays } from '../app/replay.ts';
import { createExampleSender } from '../app/send-example.ts';
import { createTaskRunner, createTasks } from '../app/tasks.ts';
import { createStats } from '../app/stats.ts';
import { createPgStatsStore } from '../adapters/postgres/stats-store.ts';
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
  readonly cipher: Cipher;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: FastifyBaseLogger;
  readonly metrics: Metrics;
  readonly ready: () => Promise<boolean>;
  readonly wake: () => void;
  /** Starts the erasure runner at once (the retention job of this process); absent = the next retention run. */
  readonly kickErasure?: () => void;
  /** Stores each message with the publish request's trace context when tracing is on; default the no-op tracer. */
  readonly tracer?: Tracer;
}

/** Builds the dependencies of the HTTP API over PostgreSQL (the one place that wires them). */
export function createHttpDeps(w: HttpWiring): HttpDeps {
  const batchLimits = { maxBatch: w.config.dbBatch, maxInFlight: w.config.dbBatchesInFlight };
  const catalog = createPgCatalogStore(w.db, w.cipher, batchLimits);
  const { clock, random } = w;
  const eventTypeStore = createPgEventTypeStore(w.db, batchLimits);
  const schemas = createPayloadSchemas({ maxSchemaBytes: w.config.maxSchemaBytes, maxSchemaPatterns: w.config.maxSchemaPatterns });
  const replayStore = createPgReplayStore(w.db, w.wake);
  const taskStore = createPgTaskStore(w.db);
  const messageContent = createPgMessageContentStore(w.db, w.cipher, w.wake);
  const replays = { catalog, tasks: taskStore, clock, random };
  return {
    config: w.config,
    logger: w.logger,
    metrics: w.metrics,
    authenticate: createAuthenticator({ store: catalog, adminToken: w.config.apiToken }),
    ready: w.ready,
    idempotency: createPgIdempotencyStore(w.db),
    applications: createApplications({ store: catalog, clock, random }),
    endpoints: withSubscriptionCheck(createEndpoints({ store: catalog, clock, random, egressAllowlist: w.config.egressAllowlist, maxEndpointsPerApp: w.config.maxEndpointsPerApp }), { store: eventTypeStore, strict: w.config.strictEventTypes }),
    queries: createQueries({ store: catalog }),
    publisher: withTraceContext(withEventTypeChecks(createPublisher({
      messages: createPgMessageStore(w.db, w.cipher, w.wake, {
        limits: batchLimits,
        maxGroupedPayloadBytes: w.config.dbBatchMaxPayloadBytes,
        onGroupError: (error) => w.logger.warn({ err: error }, 'grouped keyed publish failed; its calls take the ordinary keyed path'),
      }),
      clock,
      random,
      onPublished: () => w.metrics.messagesPublished.inc(),
      deliverAtHorizonMs: w.config.deliverAtHorizonMs,
    }), { store: eventTypeStore, schemas }), w.tracer ?? NOOP_TRACER),
    resender: createResender({ store: catalog, replay: replayStore, clock }),
    endpointHealth: createEndpointHealth({ store: catalog, health: createPgEndpointHealthStore(w.db, w.wake), clock }),
    apiKeys: createApiKeys({ keys: createPgApiKeyStore(w.db), catalog, clock, random }),
    erasure: createErasure({ store: createPgRetentionStore(w.db), catalog, idempotency: createPgIdempotencyStore(w.db), clock, random, kick: w.kickErasure ?? (() => undefined) }),
    eventTypes: createEventTypes({ store: eventTypeStore, schemas, clock }),
    endpointSettings: createEndpointSettings({ catalog, store: createPgEndpointSettingsStore(w.db, w.cipher), clock, rotationGraceMs: w.config.secretRotationGraceMs }),
    exampleSender: createExampleSender({ catalog, eventTypes: eventTypeStore, messages: messageContent, clock, random }),
    messageContent: createMessageContent({ catalog, store: messageContent, clock }),
    deliveryQueries: createDeliveryQueries({ catalog, store: createPgDeliveryQueryStore(w.db, w.cipher) }),
    recoverer: createRecoverer(replays),
    replays: createReplays(replays),
    tasks: createTasks({ store: taskStore }),
    stats: createStats({ catalog, store: createPgStatsStore(w.db), clock }),
    taskRunner: createTaskRunner({
      store: taskStore, replay: replayStore, catalog, clock, logger: w.logger, pollIntervalMs: w.config.taskPollIntervalMs,
      settings: { batch: w.config.taskBatch, intervalMs: 1000 / w.config.replayRatePerS },
    }),
  };
}
