import { access, readFile } from 'node:fs/promises';
import { keyRingCipher, parseKeyRing, type RingKey } from '../adapters/crypto/key-ring.ts';
import { openDb, type Db } from '../adapters/postgres/db.ts';
import { inspectKeyRegistry } from '../adapters/postgres/key-registry.ts';
import { pendingMigrations } from '../adapters/postgres/migrator.ts';
import { databaseFacts } from '../adapters/postgres/reachable.ts';
import type { DoctorFacts } from '../cli/doctor.ts';
import { ConfigError, loadConfig, type Config } from '../config/config.ts';
import { brokerFacts } from './broker-probe.ts';
import { keyFileOf } from './operator.ts';

/**
 * The facts `tidings doctor` judges (src/cli/doctor.ts), read from this host: the configuration, then the
 * database (version, clock, migration history, key registry), each part on its own so one failure does not
 * hide the others. Reads only: no migration, no key registration, no key file generated.
 */

/** A one-line reason of a failure: the error's code, if any, and message. */
function why(error: unknown): string {
  const e = error as { code?: unknown; message?: string };
  return `${typeof e.code === 'string' ? `${e.code}: ` : ''}${e.message ?? String(error)}`;
}

/** The key ring a start-up would use, without generating one (src/main/encryption.ts decides the same way). */
async function ringOf(config: Config): Promise<{ facts: DoctorFacts['keys']; ring: RingKey[] | null }> {
  let text = config.encryptionKeys;
  let source: 'env' | 'file' = 'env';
  if (text === undefined && config.databaseUrl === undefined) {
    const file = keyFileOf(config);
    if (
      !(await access(file).then(
        () => true,
        () => false,
      ))
    )
      return { facts: { source: 'generated' }, ring: null };
    text = (await readFile(file, 'utf8')).trim();
    source = 'file';
  }
  if (text === undefined)
    return { facts: { source: config.insecurePlaintextStorage ? 'plaintext' : 'none' }, ring: null };
  try {
    const ring = parseKeyRing(text);
    return { facts: { source, ring: ring.map((k) => k.id) }, ring };
  } catch (error) {
    return { facts: { source, ring: [], error: (error as Error).message }, ring: null };
  }
}

/** Gathers every fact for `tidings doctor` from `env`; `hostNow` is this host's clock (a test seam). */
export async function gatherDoctorFacts(
  env: Readonly<Record<string, string | undefined>>,
  hostNow: () => number,
): Promise<DoctorFacts> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return {
      config: { ok: false, problems: error.problems },
      database: null,
      migrations: null,
      keys: null,
      transport: {
        kind: transportKindOf(env.TIDINGS_TRANSPORT),
        detail: 'not checked: the configuration has problems',
      },
    };
  }
  const { facts: keyFacts, ring } = await ringOf(config);
  const claim = { kind: 'PostgreSQL claim', detail: 'dispatchers claim due deliveries from the database above' };
  // A broker is checked on its own, beside the database; the PostgreSQL claim stands or falls with the database.
  const broker = config.transport === 'postgres' ? null : brokerFacts(config);
  const transportOf = async (dbError?: string): Promise<DoctorFacts['transport']> =>
    broker !== null ? await broker : dbError === undefined ? claim : { ...claim, error: dbError };
  // The facts when the database failed (`error`): `dbError` says how, for the PostgreSQL claim.
  const withoutDatabase = async (error: unknown, dbError: string): Promise<DoctorFacts> => ({
    config: { ok: true, config },
    database: { error: why(error) },
    migrations: null,
    keys: keyFacts,
    transport: await transportOf(dbError),
  });
  let db: Db;
  try {
    db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  } catch (error) {
    return await withoutDatabase(error, 'the database is unreachable');
  }
  try {
    const before = hostNow();
    const started = performance.now();
    const facts = await databaseFacts(db);
    const roundTripMs = Math.round(performance.now() - started);
    // The database read its clock about half-way through the round trip.
    const skewMs = Math.round(before + roundTripMs / 2 - facts.now.valueOf());
    const database = {
      engine: db.engine,
      version: facts.version,
      versionNum: facts.versionNum,
      skewMs,
      roundTripMs,
    } as const;
    const migrations = await pendingMigrations(db).then(
      (pending) => ({ pending }),
      (error: unknown) => ({ error: why(error) }),
    );
    let keys = keyFacts;
    if (ring !== null && keys !== null && (keys.source === 'env' || keys.source === 'file')) {
      const registry = await inspectKeyRegistry(db, keyRingCipher(ring)).catch((error: unknown) => ({
        error: why(error),
      }));
      keys = { ...keys, registry };
    }
    return { config: { ok: true, config }, database, migrations, keys, transport: await transportOf() };
  } catch (error) {
    return await withoutDatabase(error, 'the database does not answer');
  } finally {
    await db.close();
  }
}

/** The transport TIDINGS_TRANSPORT names, as doctor prints it, when the configuration could not be read. */
function transportKindOf(value: string | undefined): string {
  if (value === 'rabbitmq') return 'RabbitMQ';
  if (value === 'nats') return 'NATS';
  return 'PostgreSQL';
}
