import type { Writable } from 'node:stream';
import { checkKeyRegistry } from '../adapters/postgres/key-registry.ts';
import { openDb, type Db } from '../adapters/postgres/db.ts';
import { checkPooler, migrateOnSession, poolerOptions } from './database-setup.ts';
import { isDatabaseUnavailable } from '../adapters/postgres/sqlstate.ts';
import { databaseAnswers } from '../adapters/postgres/reachable.ts';
import { createPgApplicationStore } from '../adapters/postgres/application/application-store.ts';
import { createWakeups } from '../adapters/postgres/wakeups/wakeups.ts';
import type { LookupFunction } from '../adapters/http-sender/guarded-connect.ts';
import { cryptoRandom, systemClock } from '../adapters/system/system-clock.ts';
import { loadConfig, type Config } from '../config/config.ts';
import type { ConnectionStats } from '../http/plugins/connection-guard.ts';
import { createLogger } from '../observability/logger.ts';
import { createTransientFaults } from '../observability/transient-faults.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import { startTracing } from '../observability/tracing.ts';
import { registerBacklogGauges } from '../observability/backlog-gauges.ts';
import { createPgBacklogReader } from '../adapters/postgres/delivery/stats-store.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { DispatcherRole } from './dispatcher-role.ts';
import type { BrokerWiring } from './broker-transport.ts';
import { createFaultPoints } from './fault-points.ts';
import { fdBudget, openFileLimit } from './fd-budget.ts';
import { resolveCipher } from './encryption.ts';
import type { Roles } from './roles.ts';
import {
  startAdmin,
  startApi,
  startDispatcher,
  type ApiStarted,
  type Boot,
  type Health,
  type Shared,
} from './start-roles.ts';

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
  const b = await openProcess(options);
  const { config, db, logger, closers } = b;
  let step: string | null = null;
  const closeAll = async (): Promise<void> => {
    for (const closer of closers.reverse()) {
      step = closer.step;
      await closer.close().catch((error: unknown) => logger.error({ err: error, step: closer.step }, 'close failed'));
    }
    step = null;
  };
  try {
    const cipher = await checkBeforeStart(b);
    const metrics = createMetrics();
    registerBacklogGauges(metrics.registry, {
      read: createPgBacklogReader(db),
      cap: config.metricsBacklogCap,
      cacheMs: config.metricsBacklogCacheMs,
      nowMs: () => performance.now(),
      onError: (error) => logger.warn({ err: error }, 'backlog gauges: query failed'),
    });
    const shared: Shared = {
      cipher,
      metrics,
      wakeups: createWakeups(db, logger),
      faultPoints: createFaultPoints(config.testFaultPoints, logger),
    };
    let broker: BrokerWiring | null = null;
    let dispatcherRole: DispatcherRole | undefined;
    const health: Health = {
      readiness: () => (broker === null ? {} : { transport: broker.transport.name, broker: broker.transport.state() }),
      ready: async () => {
        try {
          await databaseAnswers(db);
          // A dispatcher with a broker transport takes no work while the broker is not connected.
          if (broker !== null && broker.transport.state() !== 'connected') return false;
          return dispatcherRole === undefined || dispatcherRole.dispatcher.healthy();
        } catch {
          return false;
        }
      },
    };
    warnOverFdLimit(b);
    if (options.roles.dispatcher) ({ role: dispatcherRole, broker } = await startDispatcher(b, shared));
    let api: ApiStarted | undefined;
    let adminUrl: string | undefined;
    if (options.roles.api) api = await startApi(b, shared, health, dispatcherRole);
    else adminUrl = await startAdmin(b, metrics, health);

    let stopping: Promise<void> | undefined;
    return {
      config,
      db,
      metrics,
      apiUrl: api?.url,
      apiConnections: api?.connections,
      adminUrl,
      dispatcher: dispatcherRole,
      generatedAdminToken: api?.generatedAdminToken ?? null,
      stop: () =>
        (stopping ??= withDeadline(closeAll(), config.shutdownGraceMs + config.shutdownTimeoutMs, () => step, logger)),
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The configuration, the loggers, the database pool and the tracing: what a start opens before any check. */
async function openProcess(options: StartOptions): Promise<Boot> {
  const config = loadConfig(options.env);
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
  return {
    options,
    config,
    clock: options.clock ?? systemClock,
    random: options.random ?? cryptoRandom,
    logger,
    dispatcherLogger,
    db,
    pooling,
    onError,
    onConnect,
    tracing,
    closers: [
      { step: 'tracing', close: () => tracing.shutdown() },
      { step: 'database pool', close: () => db.close() },
    ],
  };
}

/** Keys, pooler, migrations and the key check, in that order: returns the cipher. */
async function checkBeforeStart(b: Boot): Promise<Shared['cipher']> {
  const { config, db, logger } = b;
  logger.info(
    { engine: db.engine, dataDir: db.engine === 'embedded' ? config.dataDir : undefined, roles: b.options.roles },
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
  return cipher;
}

function warnOverFdLimit(b: Boot): void {
  const budget = fdBudget(b.config, b.options.roles, b.db.engine === 'server');
  const fdLimit = openFileLimit();
  if (fdLimit !== null && budget.total > fdLimit)
    b.logger.warn(
      { fdBudget: budget, fdLimit },
      'the file-descriptor budget exceeds the open-files limit: lower TIDINGS_API_MAX_CONNECTIONS or ' +
        'TIDINGS_CONCURRENCY, or raise the limit (ulimit -n)',
    );
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
