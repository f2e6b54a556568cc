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
import { createQueries } from '../app/queries.ts';
import { createResender } from '../app/resend.ts';
import { createEndpointHealth } from '../app/endpoint-health.ts';
import { createPgEndpointHealthStore } from '../adapters/postgres/endpoint-health-store.ts';
import { createEndpointHealth } from '../app/endpoint-health.ts';
import { createPgEndpointHealthStore } from '../adapters/postgres/endpoint-health-store.ts';
import type { Config } from '../config/config.ts';
import type { HttpDeps } from '../http/app.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Cipher } from '../ports/cipher.ts';
import type { Clock, Random } from '../ports/clock.ts';

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
}

/** Builds the dependencies of the HTTP API over PostgreSQL (the one place that wires them). */
export function createHttpDeps(w: HttpWiring): HttpDeps {
  const catalog = createPgCatalogStore(w.db, w.cipher);
  const { clock, random } = w;
  return {
    config: w.config,
    logger: w.logger,
    metrics: w.metrics,
    authenticate: createAuthenticator({ store: catalog, adminToken: w.config.apiToken }),
    ready: w.ready,
    idempotency: createPgIdempotencyStore(w.db),
    applications: createApplications({ store: catalog, clock, random }),
    endpoints: createEndpoints({ store: catalog, clock, random, egressAllowlist: w.config.egressAllowlist }),
    queries: createQueries({ store: catalog }),
    publisher: createPublisher({
      messages: createPgMessageStore(w.db, w.cipher, w.wake),
      clock,
      random,
      onPublished: (appId) => w.metrics.messagesPublished.inc({ app: appId }),
    }),
    resender: createResender({ store: catalog, replay: createPgReplayStore(w.db, w.wake), clock }),
    endpointHealth: createEndpointHealth({ store: catalog, health: createPgEndpointHealthStore(w.db, w.wake), clock }),
    endpointHealth: createEndpointHealth({ store: catalog, health: createPgEndpointHealthStore(w.db, w.wake), clock }),
    apiKeys: createApiKeys({ keys: createPgApiKeyStore(w.db), catalog, clock, random }),
    erasure: createErasure({ store: createPgRetentionStore(w.db), catalog, idempotency: createPgIdempotencyStore(w.db), clock, random, kick: w.kickErasure ?? (() => undefined) }),
  };
}
