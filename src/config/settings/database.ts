import { z } from 'zod';
import { int, durationMs, type SettingTable } from '../parse.ts';

/** The database, its pools and batches, and encryption at rest. */
export const DATABASE_SETTINGS = {
  databaseUrl: {
    env: 'DATABASE_URL',
    schema: z.string().url().optional(),
    defaultValue: undefined,
    unit: 'URL',
    description: 'PostgreSQL server (15+). Unset: the embedded engine (PGlite) in TIDINGS_DATA_DIR, single process.',
  },
  databasePooler: {
    env: 'TIDINGS_DATABASE_POOLER',
    schema: z.enum(['none', 'session', 'transaction']),
    defaultValue: 'none',
    unit: 'mode',
    description:
      'What DATABASE_URL reaches: none (PostgreSQL itself), session (a pooler that keeps one server session ' +
      'per client connection) or transaction (a pooler that lends a server session for one transaction: ' +
      'PgBouncer pool_mode = transaction, RDS Proxy, Supavisor or Neon pooled URLs). transaction: statements ' +
      'run without server-side prepared statements or session settings, and LISTEN and migrations use ' +
      'TIDINGS_DIRECT_DATABASE_URL. Start-up refuses a DATABASE_URL that behaves as a transaction pooler under ' +
      'none or session (docs/guides/poolers-and-replicas.md).',
  },
  directDatabaseUrl: {
    env: 'TIDINGS_DIRECT_DATABASE_URL',
    schema: z.string().url().optional(),
    defaultValue: undefined,
    unit: 'URL',
    description:
      'The same database as DATABASE_URL, reached directly or through a session pooler: LISTEN (publish ' +
      'wake-ups for dispatchers) and migrations (under their advisory lock) use it. Unset with ' +
      'TIDINGS_DATABASE_POOLER=transaction: dispatchers find new work by polling (TIDINGS_POLL_INTERVAL), and ' +
      'start-up refuses a database with migrations pending (`tidings migrate` with this set applies them).',
  },
  readDatabaseUrl: {
    env: 'TIDINGS_READ_DATABASE_URL',
    schema: z.string().url().optional(),
    defaultValue: undefined,
    unit: 'URL',
    description:
      'A read replica of DATABASE_URL (streaming replication, or a pooler in front of one) for the heavy reads ' +
      'of the API: lists, statistics, what the console shows. Reads that must see a write (inside a write ' +
      'request, look-ups by id, idempotency, the dispatcher) always use DATABASE_URL, and so does every read ' +
      'while the replica is down or lags past TIDINGS_READ_MAX_LAG. Its pool has TIDINGS_DB_POOL_SIZE ' +
      'connections. Unset: every read uses DATABASE_URL.',
  },
  readMaxLagMs: {
    env: 'TIDINGS_READ_MAX_LAG',
    schema: durationMs(1),
    defaultValue: '5s',
    unit: 'duration',
    description:
      'Largest staleness of a read served by TIDINGS_READ_DATABASE_URL: past it (the lag measured at the last ' +
      'check plus the time since), reads go to DATABASE_URL and ' +
      'tidings_read_replica_fallback_total{reason="lagging"} counts them.',
  },
  readLagCheckMs: {
    env: 'TIDINGS_READ_LAG_CHECK',
    schema: durationMs(50),
    defaultValue: '1s',
    unit: 'duration',
    description:
      "Time between checks of the read replica's lag (two short statements: the primary's WAL position, the " +
      "replica's replayed one); a check's answer is used until the next. Must be less than " +
      'TIDINGS_READ_MAX_LAG.',
  },
  dataDir: {
    env: 'TIDINGS_DATA_DIR',
    schema: z.string().min(1),
    defaultValue: '.tidings',
    unit: 'path',
    description: 'Folder of the embedded database and of generated local state.',
  },
  encryptionKeys: {
    env: 'TIDINGS_ENCRYPTION_KEYS',
    schema: z.string().min(1).optional(),
    defaultValue: undefined,
    unit: 'secret',
    description:
      'Key ring for encryption at rest: comma-separated id:base64 (32-byte) keys, the first used for new ' +
      'writes. Unset on the embedded engine: a key is generated into TIDINGS_DATA_DIR. Unset with ' +
      'DATABASE_URL: start-up refuses.',
  },
  insecurePlaintextStorage: {
    env: 'TIDINGS_INSECURE_PLAINTEXT_STORAGE',
    schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
    defaultValue: 'false',
    unit: 'boolean',
    description: 'Development only: store secrets and payloads unencrypted when no key ring is set.',
  },
  dbPoolSize: {
    env: 'TIDINGS_DB_POOL_SIZE',
    schema: int(1, 200),
    defaultValue: '10',
    unit: 'connections',
    description:
      'Connections per process to a PostgreSQL server (the embedded engine always uses one). On a server a ' +
      'process also keeps small pools for hot statements of few rows, which plan them once: 2 × ' +
      'TIDINGS_DB_BATCHES_IN_FLIGHT connections in an API process, 1 in a dispatcher ' +
      '(docs/adr/0016-hot-path-cost.md, decision 24).',
  },
  dbBatch: {
    env: 'TIDINGS_DB_BATCH',
    schema: int(1, 10_000),
    defaultValue: '256',
    unit: 'calls',
    description:
      'Most concurrent publishes (and application / event-type lookups) folded into one statement: group ' +
      'commit (ADR 0007).',
  },
  dbBatchesInFlight: {
    env: 'TIDINGS_DB_BATCHES_IN_FLIGHT',
    schema: int(1, 100),
    defaultValue: '2',
    unit: 'statements',
    description:
      'Grouped statements of each kind (publish, keyed publish, application lookup, event-type lookup) running ' +
      'at once per process; further calls wait and join the next group. The four kinds together hold up to 4× ' +
      'this many connections of TIDINGS_DB_POOL_SIZE.',
  },
  dbBatchMaxPayloadBytes: {
    env: 'TIDINGS_DB_BATCH_MAX_PAYLOAD',
    schema: int(0, 64 * 1024 * 1024),
    defaultValue: '65536',
    unit: 'bytes',
    description:
      'Largest payload of a message that is grouped with others; a larger one is published by a statement of ' +
      'its own.',
  },
  publishLookupCacheEntries: {
    env: 'TIDINGS_PUBLISH_LOOKUP_CACHE',
    schema: int(0, 1_000_000),
    defaultValue: '10000',
    unit: 'entries',
    description:
      'Applications, and event types, that each API process keeps from its publish lookups (least recently ' +
      'used go first); the publish statement confirms every cached entry it relies on (ADR 0006). 0 = no ' +
      'cache: every publish reads both.',
  },
  dispatcherDbPoolSize: {
    env: 'TIDINGS_DISPATCHER_DB_POOL_SIZE',
    schema: int(1, 200),
    defaultValue: '4',
    unit: 'connections',
    description:
      "Connections of the dispatcher's own pool when `serve` runs API and dispatcher on a PostgreSQL server, " +
      'so API clients cannot take the connections the dispatcher claims and records with.',
  },
} satisfies SettingTable;
