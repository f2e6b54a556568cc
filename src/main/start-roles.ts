import type { FastifyInstance } from 'fastify';
import { createPgApiKeyStore } from '../adapters/postgres/credentials/api-key-store.ts';
import { createPgStatsRollup } from '../adapters/postgres/delivery/stats-rollup.ts';
import {
  openDb,
  SMALL_STATEMENT_ROWS,
  withGenericPlans,
  type Db,
  type SmallStatements,
} from '../adapters/postgres/db.ts';
import type { createWakeups } from '../adapters/postgres/wakeups/wakeups.ts';
import type { LookupFunction } from '../adapters/http-sender/guarded-connect.ts';
import { ensureAdminToken } from '../app/credentials.ts';
import type { Config } from '../config/config.ts';
import { buildApp } from '../http/app.ts';
import type { ConnectionStats } from '../http/plugins/connection-guard.ts';
import { withoutRedaction, type createLogger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { startTracing } from '../observability/tracing.ts';
import type { Clock, Random } from '../ports/clock.ts';
import { buildAdminServer } from './admin-server.ts';
import { createDispatcherRole, type DispatcherRole } from './dispatcher-role.ts';
import { createBrokerWiring, type BrokerWiring } from './broker-transport.ts';
import type { createFaultPoints } from './fault-points.ts';
import { SMALL_RECORD_POOL_SIZE, smallPublishPoolSize } from './fd-budget.ts';
import type { resolveCipher } from './encryption.ts';
import { createHttpDeps } from './http-deps.ts';
import { openReadRouting, type poolerOptions } from './database-setup.ts';
import type { Roles } from './roles.ts';
import { createRetentionJob, pgRetentionDeps } from './retention-job.ts';
import { createStatsRollupJob } from './stats-rollup-job.ts';

// The roles a process starts (the dispatcher, the API, or the admin server of a process without it) and what their
// start shares; compose.ts opens the process, runs the checks and starts these in order.

/** What every step of the start shares: the configuration, the loggers, the database and the steps of the stop. */
export interface Boot {
  readonly options: { readonly roles: Roles; readonly lookup?: LookupFunction };
  readonly config: Config;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: AppLogger;
  /** The dispatcher's own lines (attempts, "claims resumed"). */
  readonly dispatcherLogger: AppLogger;
  readonly db: Db;
  readonly pooling: ReturnType<typeof poolerOptions>;
  readonly onError: (error: Error) => void;
  readonly onConnect: () => void;
  readonly tracing: Awaited<ReturnType<typeof startTracing>>;
  /** Each step of the stop, by name; they run in reverse order of registration. */
  readonly closers: Closer[];
}

export type AppLogger = ReturnType<typeof createLogger>;

/** What the roles share once the start's checks passed. */
export interface Shared {
  readonly cipher: Awaited<ReturnType<typeof resolveCipher>>;
  readonly metrics: Metrics;
  readonly wakeups: ReturnType<typeof createWakeups>;
  readonly faultPoints: ReturnType<typeof createFaultPoints>;
}

/** `/readyz`: whether this process takes work, and the parts it names. */
export interface Health {
  readonly ready: () => Promise<boolean>;
  readonly readiness: () => Record<string, string>;
}

/** One step of the stop. */
export interface Closer {
  readonly step: string;
  close(): Promise<void>;
}

/**
 * The hot statements of few rows are planned once (ADR 0016, decision 24): on a server they run on small pools of
 * their own; the embedded engine's one session runs them with the setting in their transaction.
 */
async function smallPool(b: Boot, poolSize: number, name: string): Promise<SmallStatements> {
  const { config, db, logger } = b;
  if (db.engine !== 'server') return { db: withGenericPlans(db), maxRows: SMALL_STATEMENT_ROWS };
  const small = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize,
    genericPlans: true,
    ...b.pooling,
    onError: (error) => logger.warn({ err: error, pool: name }, 'database connection of a small-statement pool failed'),
    onConnect: b.onConnect,
  });
  b.closers.push({ step: name, close: () => small.close() });
  return { db: small, maxRows: SMALL_STATEMENT_ROWS };
}

/** The dispatcher role: its pools, its sources (the claim, the hand-off or a broker), the sender and the outbox. */
export async function startDispatcher(
  b: Boot,
  shared: Shared,
): Promise<{ role: DispatcherRole; broker: BrokerWiring | null }> {
  const { config, db, options, closers, dispatcherLogger } = b;
  const { wakeups } = shared;
  // With the API in the same process, the dispatcher claims and records through a pool of its own:
  // API requests waiting for a connection never delay a claim (ADR 0010).
  const ownPool = options.roles.api && db.engine === 'server';
  const dispatcherDb = ownPool
    ? await openDb({
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        poolSize: config.dispatcherDbPoolSize,
        onError: b.onError,
        onConnect: b.onConnect,
        ...b.pooling,
      })
    : db;
  if (ownPool) closers.push({ step: 'dispatcher database pool', close: () => dispatcherDb.close() });
  const small = await smallPool(b, SMALL_RECORD_POOL_SIZE, 'dispatcher small-statement pool');
  // With the API in this process, publishes hand the dispatcher their deliveries leased (ADR 0018): a second
  // source.
  const handoff = options.roles.api && config.publishHandoff;
  // A broker transport (docs/guides/transports.md): the broker is the dispatcher's source, fed by its outbox
  // publisher.
  const broker = createBrokerWiring(config, shared.metrics.registry, dispatcherLogger);
  const role = createDispatcherRole({
    config,
    db: dispatcherDb,
    small,
    cipher: shared.cipher,
    clock: b.clock,
    random: b.random,
    logger: dispatcherLogger,
    attemptLogger: withoutRedaction(dispatcherLogger),
    storeFaultLogger: b.logger,
    metrics: shared.metrics,
    wakeups,
    faultPoints: shared.faultPoints,
    tracer: b.tracing.tracer,
    handoff,
    broker,
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
  });
  await wakeups.start();
  closers.push({ step: 'LISTEN connection', close: () => wakeups.stop() });
  if (broker !== null) {
    const transport = broker.transport;
    await transport.start();
    closers.push({ step: `broker connection (${transport.name})`, close: () => transport.stop() });
  }
  role.dispatcher.start();
  closers.push({ step: 'webhook sender', close: () => role.sender.close() });
  closers.push({ step: 'dispatcher', close: () => role.dispatcher.stop() });
  const outbox = role.outbox;
  if (outbox !== undefined) {
    outbox.start();
    closers.push({ step: 'outbox publisher', close: () => outbox.stop() });
  }
  b.logger.info({ dispatcherId: role.dispatcherId, concurrency: config.concurrency }, 'dispatcher started');
  return { role, broker };
}

/** What the API role reports once it listens. */
export interface ApiStarted {
  readonly url: string;
  readonly connections: () => ConnectionStats;
  readonly generatedAdminToken: string | null;
}

/** The API role: the HTTP API, the admin token, the retention job and the time-in-state roll-up. */
export async function startApi(
  b: Boot,
  shared: Shared,
  health: Health,
  dispatcherRole: DispatcherRole | undefined,
): Promise<ApiStarted> {
  const { config, db, clock, random, logger, closers } = b;
  const { wakeups, faultPoints } = shared;
  // The retention job (payload expiry, pruning, erasure tasks) runs in API processes (docs/guides/security.md).
  const retention = createRetentionJob({ stores: pgRetentionDeps(db), config, clock, random, logger });
  // With the dispatcher in this process, publishes hand it their deliveries leased (ADR 0018).
  const handoff = dispatcherRole?.handoff;
  const smallPublishes = await smallPool(b, smallPublishPoolSize(config), 'publish small-statement pool');
  // The heavy reads (lists, statistics) go to TIDINGS_READ_DATABASE_URL while it is fresh enough (ADR 0022).
  const readRouting = await openReadRouting(config, db, shared.metrics.registry, logger);
  if (readRouting !== null) closers.push({ step: 'read replica pool', close: () => readRouting.stop() });
  const httpDeps = createHttpDeps({
    config,
    db,
    ...(readRouting === null ? {} : { reader: readRouting.reader }),
    smallPublishes,
    cipher: shared.cipher,
    clock,
    random,
    logger,
    metrics: shared.metrics,
    ready: health.ready,
    readiness: health.readiness,
    wake: () => wakeups.notify(),
    ...(db.engine === 'server' ? { carrier: wakeups } : {}),
    ...(handoff === undefined ? {} : { handoff }),
    kickErasure: () => retention.kick(),
    tracer: b.tracing.tracer,
  });
  const app: FastifyInstance = buildApp(faultPoints === null ? httpDeps : faultPoints.httpDeps(httpDeps));
  await app.listen({ host: config.host, port: config.port });
  closers.push({ step: 'HTTP API', close: () => app.close() });
  // Only once the API listens: a start that fails earlier must not swallow the one-time token.
  const generatedAdminToken = await ensureAdminToken({
    store: createPgApiKeyStore(db),
    clock,
    configuredToken: config.apiToken,
  });
  retention.start();
  closers.push({ step: 'retention job', close: () => retention.stop() });
  // The time-in-state roll-up runs in API processes, which serve the statistics reads (ADR 0015).
  const statsRollup = createStatsRollupJob({ rollup: createPgStatsRollup(db), config, clock, logger });
  statsRollup.start();
  closers.push({ step: 'stats roll-up job', close: () => statsRollup.stop() });
  const url = urlOf(app);
  logger.info({ url }, 'HTTP API listening');
  return { url, connections: () => app.connectionStats(), generatedAdminToken };
}

/** A process without the API serves /livez, /readyz and /metrics on the admin port. */
export async function startAdmin(b: Boot, metrics: Metrics, health: Health): Promise<string> {
  const admin = buildAdminServer({
    logger: b.logger,
    registry: metrics.registry,
    ready: health.ready,
    readiness: health.readiness,
    metricsToken: b.config.metricsToken,
    config: b.config,
  });
  await admin.listen({ host: b.config.host, port: b.config.adminPort });
  b.closers.push({ step: 'admin server', close: () => admin.close() });
  const adminUrl = urlOf(admin);
  b.logger.info({ url: adminUrl }, 'admin server listening (/livez, /readyz, /metrics)');
  return adminUrl;
}

function urlOf(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
