import { createPgApiKeyStore } from '../adapters/postgres/credentials/api-key-store.ts';
import type { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { checkKeyRegistry } from '../adapters/postgres/key-registry.ts';
import { createPgStatsRollup } from '../adapters/postgres/delivery/stats-rollup.ts';
import {
  openDb,
  SMALL_STATEMENT_ROWS,
  withGenericPlans,
  type Db,
  type SmallStatements,
} from '../adapters/postgres/db.ts';
import { checkPooler, migrateOnSession, openReadRouting, poolerOptions } from './database-setup.ts';
import { isDatabaseUnavailable } from '../adapters/postgres/sqlstate.ts';
import { databaseAnswers } from '../adapters/postgres/reachable.ts';
import { createPgApplicationStore } from '../adapters/postgres/application/application-store.ts';
import { createWakeups } from '../adapters/postgres/wakeups/wakeups.ts';
import type { LookupFunction } from '../adapters/http-sender/guarded-connect.ts';
import { cryptoRandom, systemClock } from '../adapters/system/system-clock.ts';
import { ensureAdminToken } from '../app/credentials.ts';
import { loadConfig, type Config } from '../config/config.ts';
import { buildApp } from '../http/app.ts';
import type { ConnectionStats } from '../http/plugins/connection-guard.ts';
import { createLogger, withoutRedaction } from '../observability/logger.ts';
import { createTransientFaults } from '../observability/transient-faults.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { startTracing } from '../observability/tracing.ts';
import { registerBacklogGauges } from '../observability/backlog-gauges.ts';
import { createPgBacklogReader } from '../adapters/postgres/delivery/stats-store.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import { buildAdminServer } from './admin-server.ts';
import { createDispatcherRole, type DispatcherRole } from './dispatcher-role.ts';
import { createBrokerWiring, type BrokerWiring } from './broker-transport.ts';
import { createFaultPoints } from './fault-points.ts';
import { fdBudget, openFileLimit, SMALL_RECORD_POOL_SIZE, smallPublishPoolSize } from './fd-budget.ts';
import { resolveCipher } from './encryption.ts';
import { createHttpDeps } from './http-deps.ts';
import type { Roles } from './roles.ts';
import { createRetentionJob, pgRetentionDeps } from './retention-job.ts';
import { createStatsRollupJob } from './stats-rollup-job.ts';

export type { Roles } from './roles.ts';

/** Options of {@link startTidings}. The seams (clock, random, lookup, log destination) are for tests. */
export interface StartOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly roles: Roles;
  readonly clock?: Clock;
  readonly random?: Random;
  readonly lookup?: LookupFunction;
  readonly logDestination?: Writable;
}

/** A running Tidings process. */
export interface Running {
  readonly config: Config;
  readonly db: Db;
  readonly metrics: Metrics;
  /** Base URL of the HTTP API (api role), e.g. `http://127.0.0.1:8071`. */
  readonly apiUrl: string | undefined;
  /** The API's connection figures (api role): open now, peak, evicted, refused (TIDINGS_API_MAX_CONNECTIONS). */
  readonly apiConnections: (() => ConnectionStats) | undefined;
  /** Base URL of the admin server (dispatcher-only role). */
  readonly adminUrl: string | undefined;
  readonly dispatcher: DispatcherRole | undefined;
  /** The admin token generated on this start (printed once), or null. */
  readonly generatedAdminToken: string | null;
  /** Graceful stop: stop claiming, finish or release in-flight leases, close servers and the pool. */
  stop(): Promise<void>;
}

/**
 * Starts Tidings: validates the configuration (every problem at once), opens the database, applies
 * migrations under the advisory lock, resolves the encryption key ring, then starts the API and/or the
 * dispatcher.
 * @throws ConfigError, EncryptionSetupError, KeyRingError, KeyCheckError (`encryption_key_mismatch`,
 *   `encryption_key_missing`), or a database error when it cannot be reached
 */
export async function startTidings(options: StartOptions): Promise<Running> {
  const config = loadConfig(options.env);
  const clock = options.clock ?? systemClock;
  const random = options.random ?? cryptoRandom;
  // A database restart is logged once per change of state, not once per failed call (transient-faults.ts).
  const transient = createTransientFaults({ isTransient: isDatabaseUnavailable });
  const destination = options.logDestination === undefined ? {} : { destination: options.logDestination };
  const logger = createLogger({ level: config.logLevel, transient, ...destination });
  // The dispatcher's own lines (attempts, "claims resumed"); a failed store call goes through `logger`, so a database
  // outage is one line per change of state there too.
  const dispatcherLogger = createLogger({ level: config.logLevel, ...destination });
  const onError = (error: Error): void => logger.warn({ err: error }, 'idle database connection failed');
  const onConnect = (): void => transient.recovered();
  const pooling = poolerOptions(config);
  const db = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    onError,
    onConnect,
    ...pooling,
  });
  // Tracing starts before the API's Fastify instance exists (its request spans hook into the creation).
  const tracing = await startTracing(config, logger);
  // Each step of the stop, by name; they run in reverse order of registration.
  const closers: Closer[] = [
    { step: 'tracing', close: () => tracing.shutdown() },
    { step: 'database pool', close: () => db.close() },
  ];
  let step: string | null = null;
  const closeAll = async (): Promise<void> => {
    for (const closer of closers.reverse()) {
      step = closer.step;
      await closer.close().catch((error: unknown) => logger.error({ err: error, step: closer.step }, 'close failed'));
    }
    step = null;
  };
  // The hot statements of few rows are planned once (ADR 0016, decision 24): on a server they run on small
  // pools of their own; the embedded engine's one session runs them with the setting in their transaction.
  const smallPool = async (poolSize: number, name: string): Promise<SmallStatements> => {
    if (db.engine !== 'server') return { db: withGenericPlans(db), maxRows: SMALL_STATEMENT_ROWS };
    const small = await openDb({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize,
      genericPlans: true,
      ...pooling,
      onError: (error) =>
        logger.warn({ err: error, pool: name }, 'database connection of a small-statement pool failed'),
      onConnect,
    });
    closers.push({ step: name, close: () => small.close() });
    return { db: small, maxRows: SMALL_STATEMENT_ROWS };
  };
  try {
    logger.info(
      { engine: db.engine, dataDir: db.engine === 'embedded' ? config.dataDir : undefined, roles: options.roles },
      'starting Tidings',
    );
    if (config.egressAllowlist.length > 0)
      logger.warn(
        { egressAllowlist: config.egressAllowlist },
        'TIDINGS_EGRESS_ALLOWLIST opens otherwise refused address ranges to webhook requests',
      );
    // Keys first: a configuration that cannot encrypt is refused before the schema is touched.
    const cipher = await resolveCipher(config, logger);
    await checkPooler(config, logger);
    await migrateOnSession(config, db, logger, { orCheck: true });
    // A wrong or missing key fails start-up here, before anything is read or written (docs/guides/security.md).
    await checkKeyRegistry(db, cipher);
    if (config.operationalApp !== undefined) {
      const found = await createPgApplicationStore(db).findApplication(config.operationalApp);
      if (found === null)
        logger.warn(
          { operationalApp: config.operationalApp },
          'TIDINGS_OPERATIONAL_APP names no application: operational webhooks are not sent until it exists',
        );
    }
    const metrics = createMetrics();
    registerBacklogGauges(metrics.registry, {
      read: createPgBacklogReader(db),
      cap: config.metricsBacklogCap,
      cacheMs: config.metricsBacklogCacheMs,
      nowMs: () => performance.now(),
      onError: (error) => logger.warn({ err: error }, 'backlog gauges: query failed'),
    });
    const wakeups = createWakeups(db, logger);
    const faultPoints = createFaultPoints(config.testFaultPoints, logger);
    let broker: BrokerWiring | null = null;
    const readiness = (): Record<string, string> =>
      broker === null ? {} : { transport: broker.transport.name, broker: broker.transport.state() };
    const ready = async (): Promise<boolean> => {
      try {
        await databaseAnswers(db);
        // A dispatcher with a broker transport takes no work while the broker is not connected.
        if (broker !== null && broker.transport.state() !== 'connected') return false;
        return dispatcherRole === undefined || dispatcherRole.dispatcher.healthy();
      } catch {
        return false;
      }
    };

    const budget = fdBudget(config, options.roles, db.engine === 'server');
    const fdLimit = openFileLimit();
    if (fdLimit !== null && budget.total > fdLimit)
      logger.warn(
        { fdBudget: budget, fdLimit },
        'the file-descriptor budget exceeds the open-files limit: lower TIDINGS_API_MAX_CONNECTIONS or ' +
          'TIDINGS_CONCURRENCY, or raise the limit (ulimit -n)',
      );

    let dispatcherRole: DispatcherRole | undefined;
    if (options.roles.dispatcher) {
      // With the API in the same process, the dispatcher claims and records through a pool of its own:
      // API requests waiting for a connection never delay a claim (ADR 0010).
      const ownPool = options.roles.api && db.engine === 'server';
      const dispatcherDb = ownPool
        ? await openDb({
            databaseUrl: config.databaseUrl,
            dataDir: config.dataDir,
            poolSize: config.dispatcherDbPoolSize,
            onError,
            onConnect,
            ...pooling,
          })
        : db;
      if (ownPool) closers.push({ step: 'dispatcher database pool', close: () => dispatcherDb.close() });
      const small = await smallPool(SMALL_RECORD_POOL_SIZE, 'dispatcher small-statement pool');
      // With the API in this process, publishes hand the dispatcher their deliveries leased (ADR 0018): a second
      // source.
      const handoff = options.roles.api && config.publishHandoff;
      // A broker transport (docs/guides/transports.md): the broker is the dispatcher's source, fed by its outbox
      // publisher.
      broker = createBrokerWiring(config, metrics.registry, dispatcherLogger);
      dispatcherRole = createDispatcherRole({
        config,
        db: dispatcherDb,
        small,
        cipher,
        clock,
        random,
        logger: dispatcherLogger,
        attemptLogger: withoutRedaction(dispatcherLogger),
        storeFaultLogger: logger,
        metrics,
        wakeups,
        faultPoints,
        tracer: tracing.tracer,
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
      dispatcherRole.dispatcher.start();
      const role = dispatcherRole;
      closers.push({ step: 'webhook sender', close: () => role.sender.close() });
      closers.push({ step: 'dispatcher', close: () => role.dispatcher.stop() });
      const outbox = role.outbox;
      if (outbox !== undefined) {
        outbox.start();
        closers.push({ step: 'outbox publisher', close: () => outbox.stop() });
      }
      logger.info({ dispatcherId: role.dispatcherId, concurrency: config.concurrency }, 'dispatcher started');
    }

    let apiUrl: string | undefined;
    let apiConnections: (() => ConnectionStats) | undefined;
    let adminUrl: string | undefined;
    let generatedAdminToken: string | null = null;
    if (options.roles.api) {
      // The retention job (payload expiry, pruning, erasure tasks) runs in API processes (docs/guides/security.md).
      const retention = createRetentionJob({ stores: pgRetentionDeps(db), config, clock, random, logger });
      // With the dispatcher in this process, publishes hand it their deliveries leased (ADR 0018).
      const handoff = dispatcherRole?.handoff;
      const smallPublishes = await smallPool(smallPublishPoolSize(config), 'publish small-statement pool');
      // The heavy reads (lists, statistics) go to TIDINGS_READ_DATABASE_URL while it is fresh enough (ADR 0022).
      const readRouting = await openReadRouting(config, db, metrics.registry, logger);
      if (readRouting !== null) closers.push({ step: 'read replica pool', close: () => readRouting.stop() });
      const httpDeps = createHttpDeps({
        config,
        db,
        ...(readRouting === null ? {} : { reader: readRouting.reader }),
        smallPublishes,
        cipher,
        clock,
        random,
        logger,
        metrics,
        ready,
        readiness,
        wake: () => wakeups.notify(),
        ...(db.engine === 'server' ? { carrier: wakeups } : {}),
        ...(handoff === undefined ? {} : { handoff }),
        kickErasure: () => retention.kick(),
        tracer: tracing.tracer,
      });
      const app: FastifyInstance = buildApp(faultPoints === null ? httpDeps : faultPoints.httpDeps(httpDeps));
      await app.listen({ host: config.host, port: config.port });
      closers.push({ step: 'HTTP API', close: () => app.close() });
      // Only once the API listens: a start that fails earlier must not swallow the one-time token.
      generatedAdminToken = await ensureAdminToken({
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
      apiUrl = urlOf(app);
      apiConnections = () => app.connectionStats();
      logger.info({ url: apiUrl }, 'HTTP API listening');
    } else {
      const admin = buildAdminServer({
        logger,
        registry: metrics.registry,
        ready,
        readiness,
        metricsToken: config.metricsToken,
        config,
      });
      await admin.listen({ host: config.host, port: config.adminPort });
      closers.push({ step: 'admin server', close: () => admin.close() });
      adminUrl = urlOf(admin);
      logger.info({ url: adminUrl }, 'admin server listening (/livez, /readyz, /metrics)');
    }

    let stopping: Promise<void> | undefined;
    return {
      config,
      db,
      metrics,
      apiUrl,
      apiConnections,
      adminUrl,
      dispatcher: dispatcherRole,
      generatedAdminToken,
      stop: () =>
        (stopping ??= withDeadline(closeAll(), config.shutdownGraceMs + config.shutdownTimeoutMs, () => step, logger)),
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** One step of the stop. */
interface Closer {
  readonly step: string;
  close(): Promise<void>;
}

/**
 * Thrown by `Running.stop()` when the stop took longer than TIDINGS_SHUTDOWN_GRACE + TIDINGS_SHUTDOWN_TIMEOUT
 * (a connection that hangs, say). `step` names the step still running. Nothing is lost: leases not released
 * expire and their deliveries are sent again (docs/design.md#the-protocol).
 */
export class ShutdownTimeoutError extends Error {
  readonly code = 'shutdown_timeout';
  readonly step: string | null;
  readonly afterMs: number;
  constructor(step: string | null, afterMs: number) {
    super(`the stop did not finish within ${afterMs} ms (still running: ${step ?? 'nothing'})`);
    this.step = step;
    this.afterMs = afterMs;
  }
}

/** `stopping`, or a {@link ShutdownTimeoutError} after `ms`, logged with the step still running. */
function withDeadline(
  stopping: Promise<void>,
  ms: number,
  step: () => string | null,
  logger: Pick<Logger, 'error'>,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ShutdownTimeoutError(step(), ms);
      logger.error(
        { err: error, step: error.step, afterMs: ms },
        'stop did not finish in time: exiting; leases not released expire and their deliveries are sent again',
      );
      reject(error);
    }, ms);
  });
  return Promise.race([stopping, deadline]).finally(() => clearTimeout(timer));
}

function urlOf(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
