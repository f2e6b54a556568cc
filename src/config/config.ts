import { z } from 'zod';
import ipaddr from 'ipaddr.js';
import { LEASE_MARGIN_MS, leaseCoversAttempt } from '../domain/retry-policy.ts';

/**
 * The one configuration schema (docs/reference/configuration.md is generated from it): every setting with its environment name, type,
 * default, unit and description. The only code that reads the environment (main/ passes `process.env` in).
 * docs/reference/configuration.md is generated from SETTINGS by `npm run tidings -- config-docs`; a test
 * keeps the two in step.
 */

/** Parses a duration: a bare number is ms; suffixes ms, s, m, h, d are accepted ("5s", "10h", "20ms"). */
export function parseDurationMs(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (match === null) throw new Error(`"${text}" is not a duration (e.g. 500ms, 5s, 30m, 2h)`);
  const value = Number(match[1]);
  const unit = match[2] ?? 'ms';
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit] ?? 1;
  return Math.round(value * factor);
}

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const durationMs = (min: number) =>
  z.string().transform((text, ctx) => {
    try {
      const ms = parseDurationMs(text);
      if (ms < min) ctx.addIssue({ code: 'custom', message: `must be at least ${min} ms` });
      return ms;
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
const cidrList = z.string().transform((text, ctx) => {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const part of parts) {
    try {
      ipaddr.parseCIDR(part);
    } catch {
      ctx.addIssue({ code: 'custom', message: `"${part}" is not a CIDR range (e.g. 127.0.0.1/32, ::1/128)` });
    }
  }
  return parts;
});
const durationList = z.string().transform((text, ctx) => {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const out: number[] = [];
  for (const part of parts) {
    try {
      out.push(parseDurationMs(part));
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  }
  return out;
});

/** NATS server URLs, comma-separated (one cluster): nats://, tls://, ws:// or wss://. */
const natsUrlList = z.string().superRefine((text, ctx) => {
  const parts = text.split(',').map((p) => p.trim());
  for (const part of parts) {
    let protocol = '';
    try {
      protocol = new URL(part).protocol;
    } catch {
      protocol = '';
    }
    if (!/^(nats|tls|wss?):$/.test(protocol))
      ctx.addIssue({
        code: 'custom',
        message: 'must be nats://host:port URLs (tls://, ws:// and wss:// too), comma-separated',
      });
  }
});

/** Points of the delivery and publish paths where a test may inject a fault (see src/main/fault-points.ts). */
export const FAULT_POINT_NAMES = [
  'after_claim',
  'after_send',
  'before_record',
  'after_record',
  'before_heartbeat',
  'after_commit_before_response',
] as const;
/** One of {@link FAULT_POINT_NAMES}. */
export type FaultPointName = (typeof FAULT_POINT_NAMES)[number];

/**
 * One armed fault point: at the `hit`-th time `point` is reached (`'every'`: each time), do `action` —
 * `exit` (the process kills itself with SIGKILL) or `stall` for `stallMs`.
 */
export interface FaultPointSpec {
  readonly point: FaultPointName;
  readonly hit: number | 'every';
  readonly action: 'exit' | 'stall';
  readonly stallMs: number;
}

/** `point[@n|@*]:exit` or `point[@n|@*]:stall_ms=N`, comma-separated (test-only setting). */
const faultPointList = z.string().transform((text, ctx) => {
  const out: FaultPointSpec[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const match = /^([a-z_]+)(?:@(\d+|\*))?:(exit|stall_ms=(\d+))$/.exec(part);
    const point = FAULT_POINT_NAMES.find((name) => name === match?.[1]);
    if (match === null || point === undefined || match[2] === '0') {
      ctx.addIssue({
        code: 'custom',
        message: `"${part}" is not a fault point (point[@n|@*]:exit or point[@n|@*]:stall_ms=N; points: ${FAULT_POINT_NAMES.join(', ')})`,
      });
      continue;
    }
    const hit = match[2] === undefined ? 1 : match[2] === '*' ? 'every' : Number(match[2]);
    out.push(
      match[3] === 'exit'
        ? { point, hit, action: 'exit', stallMs: 0 }
        : { point, hit, action: 'stall', stallMs: Number(match[4]) },
    );
  }
  return out;
});

/** One documented setting. `defaultValue` is the text form, as it would be written in the environment. */
interface Setting<T extends z.ZodType> {
  readonly env: string;
  readonly schema: T;
  readonly defaultValue: string | undefined;
  readonly unit: string;
  readonly description: string;
}
const setting = <T extends z.ZodType>(
  env: string,
  schema: T,
  defaultValue: string | undefined,
  unit: string,
  description: string,
): Setting<T> => ({ env, schema, defaultValue, unit, description });

/** Every setting, keyed by its name in {@link Config}. */
export const SETTINGS = {
  databaseUrl: setting(
    'DATABASE_URL',
    z.string().url().optional(),
    undefined,
    'URL',
    'PostgreSQL server (15+). Unset: the embedded engine (PGlite) in TIDINGS_DATA_DIR, single process.',
  ),
  databasePooler: setting(
    'TIDINGS_DATABASE_POOLER',
    z.enum(['none', 'session', 'transaction']),
    'none',
    'mode',
    'What DATABASE_URL reaches: none (PostgreSQL itself), session (a pooler that keeps one server session per client connection) or transaction (a pooler that lends a server session for one transaction: PgBouncer pool_mode = transaction, RDS Proxy, Supavisor or Neon pooled URLs). transaction: statements run without server-side prepared statements or session settings, and LISTEN and migrations use TIDINGS_DIRECT_DATABASE_URL. Start-up refuses a DATABASE_URL that behaves as a transaction pooler under none or session (docs/guides/poolers-and-replicas.md).',
  ),
  directDatabaseUrl: setting(
    'TIDINGS_DIRECT_DATABASE_URL',
    z.string().url().optional(),
    undefined,
    'URL',
    'The same database as DATABASE_URL, reached directly or through a session pooler: LISTEN (publish wake-ups for dispatchers) and migrations (under their advisory lock) use it. Unset with TIDINGS_DATABASE_POOLER=transaction: dispatchers find new work by polling (TIDINGS_POLL_INTERVAL), and start-up refuses a database with migrations pending (`tidings migrate` with this set applies them).',
  ),
  readDatabaseUrl: setting(
    'TIDINGS_READ_DATABASE_URL',
    z.string().url().optional(),
    undefined,
    'URL',
    'A read replica of DATABASE_URL (streaming replication, or a pooler in front of one) for the heavy reads of the API: lists, statistics, what the console shows. Reads that must see a write (inside a write request, look-ups by id, idempotency, the dispatcher) always use DATABASE_URL, and so does every read while the replica is down or lags past TIDINGS_READ_MAX_LAG. Its pool has TIDINGS_DB_POOL_SIZE connections. Unset: every read uses DATABASE_URL.',
  ),
  readMaxLagMs: setting(
    'TIDINGS_READ_MAX_LAG',
    durationMs(1),
    '5s',
    'duration',
    'Largest staleness of a read served by TIDINGS_READ_DATABASE_URL: past it (the lag measured at the last check plus the time since), reads go to DATABASE_URL and tidings_read_replica_fallback_total{reason="lagging"} counts them.',
  ),
  readLagCheckMs: setting(
    'TIDINGS_READ_LAG_CHECK',
    durationMs(50),
    '1s',
    'duration',
    "Time between checks of the read replica's lag (two short statements: the primary's WAL position, the replica's replayed one); a check's answer is used until the next. Must be less than TIDINGS_READ_MAX_LAG.",
  ),
  dataDir: setting(
    'TIDINGS_DATA_DIR',
    z.string().min(1),
    '.tidings',
    'path',
    'Folder of the embedded database and of generated local state.',
  ),
  host: setting('HOST', z.string().min(1), '127.0.0.1', 'address', 'Address the HTTP API listens on.'),
  port: setting('PORT', int(0, 65535), '8071', 'port', 'Port of the HTTP API (0 = any free port).'),
  adminPort: setting(
    'TIDINGS_ADMIN_PORT',
    int(0, 65535),
    '9464',
    'port',
    'Port of /livez, /readyz and /metrics of a dispatcher-only process.',
  ),
  metricsToken: setting(
    'TIDINGS_METRICS_TOKEN',
    z.string().min(16).optional(),
    undefined,
    'secret',
    'Bearer token that /metrics requires (API and admin server); any other request gets 401. Unset: /metrics is served without authentication (it carries no application or endpoint identifier).',
  ),
  metricsBacklogCap: setting(
    'TIDINGS_METRICS_BACKLOG_CAP',
    int(1, 100_000_000),
    '1000',
    'deliveries',
    'Each backlog gauge count stops here, so a scrape costs the same at any backlog size (the age of the oldest due delivery is exact).',
  ),
  metricsBacklogCacheMs: setting(
    'TIDINGS_METRICS_BACKLOG_CACHE',
    durationMs(0),
    '5s',
    'duration',
    'A backlog reading younger than this is served to the next scrapes; concurrent scrapes share one query.',
  ),
  apiToken: setting(
    'TIDINGS_API_TOKEN',
    z.string().min(16).optional(),
    undefined,
    'secret',
    'Admin Bearer token. Unset: one is generated on first start, stored hashed, and printed once.',
  ),
  encryptionKeys: setting(
    'TIDINGS_ENCRYPTION_KEYS',
    z.string().min(1).optional(),
    undefined,
    'secret',
    'Key ring for encryption at rest: comma-separated id:base64 (32-byte) keys, the first used for new writes. Unset on the embedded engine: a key is generated into TIDINGS_DATA_DIR. Unset with DATABASE_URL: start-up refuses.',
  ),
  insecurePlaintextStorage: setting(
    'TIDINGS_INSECURE_PLAINTEXT_STORAGE',
    z.enum(['true', 'false']).transform((v) => v === 'true'),
    'false',
    'boolean',
    'Development only: store secrets and payloads unencrypted when no key ring is set.',
  ),
  logLevel: setting(
    'TIDINGS_LOG_LEVEL',
    z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
    'info',
    'level',
    'pino log level.',
  ),
  dispatcherId: setting(
    'TIDINGS_DISPATCHER_ID',
    z.string().min(1).optional(),
    undefined,
    'text',
    'Dispatcher id written into leases and the timeline. Unset: host-pid-random.',
  ),
  dbPoolSize: setting(
    'TIDINGS_DB_POOL_SIZE',
    int(1, 200),
    '10',
    'connections',
    'Connections per process to a PostgreSQL server (the embedded engine always uses one). On a server a process also keeps small pools for hot statements of few rows, which plan them once: 2 × TIDINGS_DB_BATCHES_IN_FLIGHT connections in an API process, 1 in a dispatcher (docs/adr/0016-hot-path-cost.md, decision 24).',
  ),
  dbBatch: setting(
    'TIDINGS_DB_BATCH',
    int(1, 10_000),
    '256',
    'calls',
    'Most concurrent publishes (and application / event-type lookups) folded into one statement: group commit (ADR 0007).',
  ),
  dbBatchesInFlight: setting(
    'TIDINGS_DB_BATCHES_IN_FLIGHT',
    int(1, 100),
    '2',
    'statements',
    'Grouped statements of each kind (publish, keyed publish, application lookup, event-type lookup) running at once per process; further calls wait and join the next group. The four kinds together hold up to 4× this many connections of TIDINGS_DB_POOL_SIZE.',
  ),
  dbBatchMaxPayloadBytes: setting(
    'TIDINGS_DB_BATCH_MAX_PAYLOAD',
    int(0, 64 * 1024 * 1024),
    '65536',
    'bytes',
    'Largest payload of a message that is grouped with others; a larger one is published by a statement of its own.',
  ),
  publishLookupCacheEntries: setting(
    'TIDINGS_PUBLISH_LOOKUP_CACHE',
    int(0, 1_000_000),
    '10000',
    'entries',
    'Applications, and event types, that each API process keeps from its publish lookups (least recently used go first); the publish statement confirms every cached entry it relies on (ADR 0006). 0 = no cache: every publish reads both.',
  ),
  retrySchedule: setting(
    'TIDINGS_RETRY_SCHEDULE',
    durationList,
    '5s,5m,30m,2h,5h,10h,10h',
    'durations',
    'Delay after each failed attempt; attempts = entries + 1 (the first is immediate).',
  ),
  retryJitter: setting(
    'TIDINGS_RETRY_JITTER',
    z.coerce.number().min(0).max(0.9),
    '0.2',
    'fraction',
    'Each retry delay is drawn from [d·(1−j), d·(1+j)].',
  ),
  retryAfterMinMs: setting(
    'TIDINGS_RETRY_AFTER_MIN',
    durationMs(0),
    '1s',
    'duration',
    "Lower clamp of a receiver's Retry-After.",
  ),
  retryAfterMaxMs: setting(
    'TIDINGS_RETRY_AFTER_MAX',
    durationMs(0),
    '1h',
    'duration',
    "Upper clamp of a receiver's Retry-After.",
  ),
  retryPolicyMaxAttempts: setting(
    'TIDINGS_RETRY_POLICY_MAX_ATTEMPTS',
    int(1, 1000),
    '50',
    'attempts',
    "Most attempts (maxAttempts) an endpoint's or an event type's retry policy may set; more → 422 naming maxAttempts.",
  ),
  retryPolicyMaxDelays: setting(
    'TIDINGS_RETRY_POLICY_MAX_DELAYS',
    int(1, 1000),
    '20',
    'delays',
    "Most entries of a retry policy's schedule; more → 422 naming schedule.",
  ),
  retryPolicyMinDelayMs: setting(
    'TIDINGS_RETRY_POLICY_MIN_DELAY',
    durationMs(0),
    '1s',
    'duration',
    "Shortest delay of a retry policy's schedule, so that a policy cannot make Tidings hammer a receiver; shorter → 422 naming the entry.",
  ),
  retryPolicyMaxDelayMs: setting(
    'TIDINGS_RETRY_POLICY_MAX_DELAY',
    durationMs(1),
    '1d',
    'duration',
    "Longest delay of a retry policy's schedule; longer → 422 naming the entry. A policy's attemptTimeout is bounded by TIDINGS_LEASE instead (it must exceed the timeout plus 1 s).",
  ),
  connectTimeoutMs: setting(
    'TIDINGS_CONNECT_TIMEOUT',
    durationMs(1),
    '5s',
    'duration',
    'TCP + TLS connect timeout per attempt.',
  ),
  headersTimeoutMs: setting(
    'TIDINGS_HEADERS_TIMEOUT',
    durationMs(1),
    '10s',
    'duration',
    'Time from request sent to response headers.',
  ),
  bodyTimeoutMs: setting(
    'TIDINGS_BODY_TIMEOUT',
    durationMs(1),
    '10s',
    'duration',
    'Longest gap between response body chunks.',
  ),
  attemptDeadlineMs: setting(
    'TIDINGS_ATTEMPT_DEADLINE',
    durationMs(1),
    '15s',
    'duration',
    'Overall deadline of one attempt; nothing resets it.',
  ),
  maxResponseBytes: setting(
    'TIDINGS_MAX_RESPONSE_BYTES',
    int(0, 16 * 1024 * 1024),
    '65536',
    'bytes',
    'Response bytes read per attempt; the rest is discarded and the socket closed.',
  ),
  responsePrefixBytes: setting(
    'TIDINGS_RESPONSE_PREFIX_BYTES',
    int(0, 1024 * 1024),
    '4096',
    'bytes',
    'Response body prefix stored with each attempt.',
  ),
  maxSocketsPerOrigin: setting(
    'TIDINGS_MAX_SOCKETS_PER_ORIGIN',
    int(1, 10_000),
    '512',
    'sockets',
    'Connection cap per endpoint per dispatcher: each endpoint has its own connection pool, so endpoints on one origin never queue behind each other (at least the window one endpoint may hold, or that share cannot be reached).',
  ),
  egressAllowlist: setting(
    'TIDINGS_EGRESS_ALLOWLIST',
    cidrList,
    '',
    'CIDR list',
    'Otherwise-refused ranges that outbound requests may reach (e.g. 127.0.0.1/32 for local development). Operator setting; logged at start-up.',
  ),
  leaseMs: setting(
    'TIDINGS_LEASE',
    durationMs(100),
    '60s',
    'duration',
    'Lease on a claimed delivery; renewed about every third of it while the request is in flight. Must be at least the attempt deadline plus 1 s.',
  ),
  concurrency: setting(
    'TIDINGS_CONCURRENCY',
    int(1, 100_000),
    '1024',
    'requests',
    'Requests in flight per dispatcher; claims fill free slots, plus TIDINGS_CLAIM_AHEAD. Sized for slow receivers: at 100 ms per answer, one endpoint (half the window) is bounded at ~5,000 deliveries/s.',
  ),
  endpointWindowShare: setting(
    'TIDINGS_ENDPOINT_WINDOW_SHARE',
    z.coerce.number().gt(0).max(1),
    '0.5',
    'fraction',
    "Most of a dispatcher's in-flight window one endpoint may hold, so a slow or black-holed endpoint cannot take every slot.",
  ),
  windowReserve: setting(
    'TIDINGS_WINDOW_RESERVE',
    z.coerce.number().min(0).lt(1),
    '0.25',
    'fraction',
    "Part of a dispatcher's in-flight window kept for endpoints that are answering: endpoints whose last attempt got no answer, or not yet attempted, together hold at most the rest (at least one slot is kept when the window is 2 or more). ADR 0009.",
  ),
  claimAhead: setting(
    'TIDINGS_CLAIM_AHEAD',
    z.coerce.number().min(0).max(1),
    '0.2',
    'fraction',
    'Deliveries a dispatcher claims ahead of free slots, as a fraction of TIDINGS_CONCURRENCY (rounded up, at most TIDINGS_CLAIM_BATCH): each waits for a slot and takes it the moment an answer frees it, without waiting for a claim. 0 claims into free slots only. ADR 0016, decision 16.',
  ),
  publishHandoff: setting(
    'TIDINGS_PUBLISH_HANDOFF',
    z.enum(['true', 'false']).transform((v) => v === 'true'),
    'true',
    'boolean',
    'With the API and the dispatcher in one process (serve, the embedded engine): a publish inserts its deliveries to endpoints that answer this dispatcher already leased to it, within its free window, and they are sent without a claim. false: every delivery is claimed. ADR 0018.',
  ),
  claimBatch: setting(
    'TIDINGS_CLAIM_BATCH',
    int(1, 10_000),
    '100',
    'rows',
    'Most deliveries claimed by one statement.',
  ),
  pollIntervalMs: setting(
    'TIDINGS_POLL_INTERVAL',
    durationMs(1),
    '1s',
    'duration',
    'Idle poll period (NOTIFY wakes dispatchers sooner).',
  ),
  maxReclaims: setting(
    'TIDINGS_MAX_RECLAIMS',
    int(1, 1000),
    '5',
    'claims',
    'Reclaims without a recorded outcome before dead-lettering (lease_lost_repeatedly).',
  ),
  shutdownGraceMs: setting(
    'TIDINGS_SHUTDOWN_GRACE',
    durationMs(0),
    '20s',
    'duration',
    'On SIGTERM/SIGINT: time to finish in-flight attempts before their leases are released.',
  ),
  shutdownTimeoutMs: setting(
    'TIDINGS_SHUTDOWN_TIMEOUT',
    durationMs(1),
    '30s',
    'duration',
    'On SIGTERM/SIGINT: time past the grace for the rest of the stop (releasing leases, closing connections); then the process exits with code 1, and leases not released expire.',
  ),
  breakerThreshold: setting(
    'TIDINGS_BREAKER_THRESHOLD',
    int(1, 1_000_000),
    '10',
    'attempts',
    'Consecutive failed attempts of an endpoint that open its circuit breaker (deliveries then wait without spending attempts).',
  ),
  breakerCooldownMs: setting(
    'TIDINGS_BREAKER_COOLDOWN',
    durationMs(1),
    '30s',
    'duration',
    'First cool-down of an open breaker before one probe is let through; doubles with each opening in a row.',
  ),
  breakerMaxCooldownMs: setting(
    'TIDINGS_BREAKER_MAX_COOLDOWN',
    durationMs(1),
    '30m',
    'duration',
    'Longest breaker cool-down.',
  ),
  autoDisableAfterMs: setting(
    'TIDINGS_AUTO_DISABLE_AFTER',
    durationMs(1),
    '5d',
    'duration',
    'An endpoint whose attempts have only failed for this long is disabled (reason and time recorded); its waiting deliveries become skipped.',
  ),
  transport: setting(
    'TIDINGS_TRANSPORT',
    z.enum(['postgres', 'rabbitmq', 'nats']),
    'postgres',
    'transport',
    'How due deliveries reach dispatchers: postgres (the claim over the delivery rows and the publish hand-off; nothing else needed), rabbitmq (TIDINGS_RABBITMQ_URL) or nats (NATS JetStream, TIDINGS_NATS_URL). With a broker the rows stay the truth and the outbox: each dispatcher process publishes due delivery ids, leases each id it receives with the fenced claim, and acknowledges the message after the record (docs/guides/transports.md).',
  ),
  rabbitmqUrl: setting(
    'TIDINGS_RABBITMQ_URL',
    z
      .string()
      .url()
      .refine((u) => /^amqps?:$/.test(new URL(u).protocol), 'must be an amqp:// or amqps:// URL')
      .optional(),
    undefined,
    'URL',
    'RabbitMQ (3.8+, quorum queues) of TIDINGS_TRANSPORT=rabbitmq, e.g. amqp://user:password@rabbitmq:5672/vhost.',
  ),
  natsUrl: setting(
    'TIDINGS_NATS_URL',
    natsUrlList.optional(),
    undefined,
    'URL',
    'NATS server (2.9+, JetStream enabled) of TIDINGS_TRANSPORT=nats, e.g. nats://user:password@nats:4222; the servers of one cluster comma-separated.',
  ),
  natsAckWaitMs: setting(
    'TIDINGS_NATS_ACK_WAIT',
    durationMs(1000),
    '60s',
    'duration',
    "NATS consumers' ack_wait: a message neither acknowledged nor marked in progress for this long is delivered again. A dispatcher marks the messages it holds in progress every third of it, so only the messages of a dispatcher that died or was cut off come back, after about this long; at least TIDINGS_LEASE, so that such a message finds its lease expired.",
  ),
  natsMaxAckPending: setting(
    'TIDINGS_NATS_MAX_ACK_PENDING',
    int(1, 1_000_000),
    '10000',
    'messages',
    "NATS consumers' max_ack_pending: messages of one shard handed out and not yet acknowledged, over every dispatcher; past it the server hands out no more of that shard until some are acknowledged. A dispatcher holds at most its part of TIDINGS_BROKER_MAX_IN_FLIGHT per shard (by default TIDINGS_CONCURRENCY + TIDINGS_BROKER_ENDPOINT_AHEAD, 64): the default serves about 150 dispatchers.",
  ),
  natsDuplicateWindowMs: setting(
    'TIDINGS_NATS_DUPLICATE_WINDOW',
    durationMs(1000),
    '2m',
    'duration',
    "NATS stream's duplicate_window: a publish sent again after its acknowledgement was lost (the same Nats-Msg-Id) within this long is stored once.",
  ),
  natsPingIntervalMs: setting(
    'TIDINGS_NATS_PING_INTERVAL',
    durationMs(1000),
    '10s',
    'duration',
    "Time between the client's pings to the NATS server: a connection that answers none for about two of them is taken as lost and reconnected (one log line).",
  ),
  brokerPrefix: setting(
    'TIDINGS_BROKER_PREFIX',
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, ".", "-" and "_" (at most 100)'),
    'tidings',
    'name',
    'Prefix of every queue, exchange, stream and subject a broker transport declares; deployments sharing a broker need different ones.',
  ),
  brokerShards: setting(
    'TIDINGS_BROKER_SHARDS',
    int(1, 256),
    '8',
    'queues',
    'Queues (RabbitMQ) or subjects (NATS) the delivery ids are spread over by a hash of their endpoint, each consumed with its part of TIDINGS_BROKER_MAX_IN_FLIGHT: ids of an endpoint whose messages wait hold up only the endpoints of their shard.',
  ),
  brokerMaxInFlight: setting(
    'TIDINGS_BROKER_MAX_IN_FLIGHT',
    int(0, 1_000_000),
    '0',
    'messages',
    "Broker messages a dispatcher holds unacknowledged (in flight until their record, or waiting for room in its window), over all shards: the prefetch, spread evenly over the shards. 0 = TIDINGS_CONCURRENCY + TIDINGS_BROKER_ENDPOINT_AHEAD per shard, so that one endpoint holding its share in flight (a black hole) never fills its shard's prefetch.",
  ),
  brokerEndpointAhead: setting(
    'TIDINGS_BROKER_ENDPOINT_AHEAD',
    int(1, 100_000),
    '32',
    'ids',
    "Most ids of one endpoint published to the broker and not yet leased: the outbox publishes an endpoint's first due deliveries only, within its in-flight cap, rate limit and breaker; the rest of a backlog waits in PostgreSQL.",
  ),
  brokerDeliveryLimit: setting(
    'TIDINGS_BROKER_DELIVERY_LIMIT',
    int(1, 1000),
    '10',
    'deliveries',
    'Deliveries of one broker message without an acknowledgement before the broker dead-letters it (a delivery whose claim keeps failing): counted in tidings_broker_dead_lettered_total and logged; the delivery stays pending and the sweep publishes it again.',
  ),
  brokerPublishIntervalMs: setting(
    'TIDINGS_BROKER_PUBLISH_INTERVAL',
    durationMs(10),
    '500ms',
    'duration',
    "Time between two rounds of a dispatcher's outbox publisher when no publish wakes it: retries coming due, cool-downs and leases ending are published within it.",
  ),
  brokerPublishBatch: setting(
    'TIDINGS_BROKER_PUBLISH_BATCH',
    int(1, 10_000),
    '500',
    'ids',
    'Most delivery ids stamped and published by one statement of the outbox publisher.',
  ),
  brokerSweepAfterMs: setting(
    'TIDINGS_BROKER_SWEEP_AFTER',
    durationMs(100),
    '60s',
    'duration',
    'A delivery published this long ago and still due is published again (its message was lost: a broker restart without it, a publish lost, a crash between commit and publish, a queue deleted by hand). Counted in tidings_broker_swept_total. Must exceed TIDINGS_BROKER_PUBLISH_INTERVAL.',
  ),
  brokerReconnectMinMs: setting(
    'TIDINGS_BROKER_RECONNECT_MIN',
    durationMs(10),
    '500ms',
    'duration',
    "First wait before reconnecting to the broker; it doubles up to TIDINGS_BROKER_RECONNECT_MAX. One log line per change of the connection's state, not per attempt.",
  ),
  brokerReconnectMaxMs: setting(
    'TIDINGS_BROKER_RECONNECT_MAX',
    durationMs(10),
    '30s',
    'duration',
    'Longest wait between two reconnection attempts to the broker.',
  ),
  brokerPublishTimeoutMs: setting(
    'TIDINGS_BROKER_PUBLISH_TIMEOUT',
    durationMs(100),
    '10s',
    'duration',
    'Longest wait for the broker to confirm a publish; ids not confirmed in time are published again by a later round.',
  ),
  operationalApp: setting(
    'TIDINGS_OPERATIONAL_APP',
    z.string().min(1).optional(),
    undefined,
    'app id or uid',
    'Application that receives operational webhooks (endpoint.disabled, endpoint.breaker_opened, endpoint.recovered, message.attempt.exhausted, message.attempt.failing); unset = none.',
  ),
  maxBodyBytes: setting(
    'TIDINGS_MAX_BODY_BYTES',
    int(1024, 64 * 1024 * 1024),
    '1048576',
    'bytes',
    'Largest API request body (a message payload included); larger → 413.',
  ),
  maxPageBytes: setting(
    'TIDINGS_MAX_PAGE_BYTES',
    int(64 * 1024, 1024 * 1024 * 1024),
    '4194304',
    'bytes',
    'Most bytes of the items of one list answer (a page of messages with their payloads, of attempts with their response bodies, of endpoints…): the page ends early, with an iterator to the rest, once its items reach this; it always holds at least one item. Payloads past it are not read from the database.',
  ),
  searchMaxWindowMs: setting(
    'TIDINGS_SEARCH_MAX_WINDOW',
    durationMs(60_000),
    '7d',
    'duration',
    "Widest window of time one search of the delivery log reads (the API's search routes: `after` to `before`); a wider one is refused with 422 search_unbounded naming `after`. Search a longer stretch as several windows.",
  ),
  searchScanRows: setting(
    'TIDINGS_SEARCH_SCAN_ROWS',
    int(10, 1_000_000),
    '5000',
    'rows',
    'Index rows one search request examines at most (messages, deliveries or attempts of its window, in order, before its filters choose among them); a page that reaches it ends early, possibly empty, with done=false and an iterator that resumes where it stopped.',
  ),
  searchPayloadRows: setting(
    'TIDINGS_SEARCH_PAYLOAD_ROWS',
    int(1, 100_000),
    '500',
    'rows',
    'Payloads one search request decrypts at most to compare a payload field (payloads are encrypted at rest, so the database cannot compare them): the candidates its other filters kept, in order; a page that reaches it ends early with an iterator to the rest.',
  ),
  searchPayloadBytes: setting(
    'TIDINGS_SEARCH_PAYLOAD_BYTES',
    int(64 * 1024, 1024 * 1024 * 1024),
    '8388608',
    'bytes',
    'Stored payload bytes one search request reads at most (plus one payload) to compare a payload field; past it the page ends early with an iterator to the rest.',
  ),
  idempotencyTtlMs: setting(
    'TIDINGS_IDEMPOTENCY_TTL',
    durationMs(1000),
    '24h',
    'duration',
    'How long an Idempotency-Key and its answer are kept.',
  ),
  idempotencyWaitMs: setting(
    'TIDINGS_IDEMPOTENCY_WAIT',
    durationMs(1),
    '5s',
    'duration',
    'How long a duplicate waits for the first request with its key before 409.',
  ),
  apiRateLimitPerS: setting(
    'TIDINGS_API_RATE_LIMIT',
    int(0, 1_000_000),
    '1000',
    'requests/s',
    'API requests per second per credential per API process (0 = no limit); beyond it → 429 with Retry-After. Routes served without a credential have their own limit per address (TIDINGS_PUBLIC_RATE_LIMIT).',
  ),
  apiRateBurst: setting(
    'TIDINGS_API_RATE_BURST',
    int(1, 10_000_000),
    '2000',
    'requests',
    'Requests a credential may make at once: the limit counts BURST requests per window of BURST/RATE seconds.',
  ),
  apiHeadersTimeoutMs: setting(
    'TIDINGS_API_HEADERS_TIMEOUT',
    durationMs(100),
    '10s',
    'duration',
    "Longest time an API connection may take to send a request's headers (a new connection counts from its opening); then it is closed (408).",
  ),
  apiRequestTimeoutMs: setting(
    'TIDINGS_API_REQUEST_TIMEOUT',
    durationMs(100),
    '30s',
    'duration',
    'Longest time to receive a whole API request, body included; then 408 and the connection is closed. At least TIDINGS_API_HEADERS_TIMEOUT.',
  ),
  apiKeepAliveTimeoutMs: setting(
    'TIDINGS_API_KEEP_ALIVE_TIMEOUT',
    durationMs(100),
    '5s',
    'duration',
    'How long an idle keep-alive API connection is kept open between requests.',
  ),
  apiIdleTimeoutMs: setting(
    'TIDINGS_API_IDLE_TIMEOUT',
    durationMs(1000),
    '60s',
    'duration',
    'An API connection on which nothing is sent or received for this long is closed (it must exceed the slowest answer, e.g. TIDINGS_IDEMPOTENCY_WAIT).',
  ),
  apiMaxConnections: setting(
    'TIDINGS_API_MAX_CONNECTIONS',
    int(1, 1_000_000),
    '2048',
    'connections',
    'Open API connections per process. At the cap a new connection evicts the oldest one that has not sent a request (then the oldest idle keep-alive one); with none to evict it is closed at once. Keep it, plus TIDINGS_CONCURRENCY and the database pools, below the file-descriptor limit (checked at start-up).',
  ),
  authFailureLimit: setting(
    'TIDINGS_AUTH_FAILURE_LIMIT',
    int(0, 1_000_000),
    '20',
    'requests',
    'Failed authentications (401) per client address per TIDINGS_AUTH_FAILURE_WINDOW (0 = no limit); past it a request from that address whose credential is not valid gets 429 instead of 401. A valid credential is never refused by it: the credential is checked first.',
  ),
  authFailureWindowMs: setting(
    'TIDINGS_AUTH_FAILURE_WINDOW',
    durationMs(100),
    '10s',
    'duration',
    'Window of TIDINGS_AUTH_FAILURE_LIMIT.',
  ),
  trustedProxies: setting(
    'TIDINGS_TRUSTED_PROXIES',
    cidrList,
    '',
    'CIDR list',
    "Proxies (load balancers, TLS terminators) in front of the API whose X-Forwarded-For is believed: the client address, which the per-address limits count, is the nearest one in X-Forwarded-For that is not in this list (Fastify trustProxy, proxy-addr). Empty: the socket's address, and X-Forwarded-For is ignored.",
  ),
  apiPipelineDepth: setting(
    'TIDINGS_API_PIPELINE_DEPTH',
    int(1, 1024),
    '4',
    'requests',
    'Requests of one API connection handled at once (HTTP/1.1 pipelining). Later ones wait their turn without running, so a client that does not read its answers holds at most this many answers in memory.',
  ),
  apiPipelineQueue: setting(
    'TIDINGS_API_PIPELINE_QUEUE',
    int(0, 100_000),
    '64',
    'requests',
    'Requests of one API connection that may wait behind TIDINGS_API_PIPELINE_DEPTH; one more (a client writing far ahead of reading its answers) closes the connection.',
  ),
  apiCredentialConcurrency: setting(
    'TIDINGS_API_CREDENTIAL_CONCURRENCY',
    int(0, 1_000_000),
    '256',
    'requests',
    'Requests of one credential in progress at once per API process, slow bodies included (0 = no limit); one more → 429 concurrency_limited with Retry-After, so one credential cannot take every connection or every database slot from the others.',
  ),
  apiAddressConcurrency: setting(
    'TIDINGS_API_ADDRESS_CONCURRENCY',
    int(0, 1_000_000),
    '1024',
    'requests',
    'Requests of one client address (see TIDINGS_TRUSTED_PROXIES; IPv6 by /64) in progress at once per API process, with or without a credential (0 = no limit); one more → 429 concurrency_limited with Retry-After.',
  ),
  apiMinBodyRate: setting(
    'TIDINGS_API_MIN_BODY_RATE',
    int(0, 1_000_000_000),
    '1024',
    'bytes/s',
    'Slowest a request body may arrive once TIDINGS_API_BODY_RATE_GRACE has passed (0 = no minimum): a body must have sent rate × (elapsed − grace) bytes at every moment, else 408 request_timeout and the connection is closed.',
  ),
  apiBodyRateGraceMs: setting(
    'TIDINGS_API_BODY_RATE_GRACE',
    durationMs(0),
    '2s',
    'duration',
    'Time a request body may take before TIDINGS_API_MIN_BODY_RATE applies (counted from the end of its headers).',
  ),
  publicRateLimitPerS: setting(
    'TIDINGS_PUBLIC_RATE_LIMIT',
    int(0, 1_000_000),
    '50',
    'requests/s',
    'Requests per second per client address to the routes served without a credential (health, readiness, metrics, the OpenAPI document, the web pages and their files) per API process (0 = no limit); beyond it → 429 rate_limited with Retry-After.',
  ),
  publicRateBurst: setting(
    'TIDINGS_PUBLIC_RATE_BURST',
    int(1, 10_000_000),
    '200',
    'requests',
    'Requests a client address may make at once to those routes: the limit counts BURST requests per window of BURST/RATE seconds.',
  ),
  refusalLogRatePerS: setting(
    'TIDINGS_REFUSAL_LOG_RATE',
    int(0, 1_000_000),
    '10',
    'lines/s',
    'Request lines logged per second for refusals (401, 429) and dropped connections, and, apart, for clients that went away (an aborted upload, a connection reset before the answer); beyond it lines are counted and one summary line per second says how many were not written.',
  ),
  dispatcherDbPoolSize: setting(
    'TIDINGS_DISPATCHER_DB_POOL_SIZE',
    int(1, 200),
    '4',
    'connections',
    "Connections of the dispatcher's own pool when `serve` runs API and dispatcher on a PostgreSQL server, so API clients cannot take the connections the dispatcher claims and records with.",
  ),
  maxSchemaBytes: setting(
    'TIDINGS_MAX_SCHEMA_BYTES',
    int(1024, 16 * 1024 * 1024),
    '16384',
    'bytes',
    'Largest JSON Schema of one event-type version (as JSON text); larger → 422. Compiling a schema blocks its process for about 1 ms per 30 bytes (ajv code generation), once per schema change and process: this cap bounds that stall.',
  ),
  maxSchemaPatterns: setting(
    'TIDINGS_MAX_SCHEMA_PATTERNS',
    int(0, 100_000),
    '64',
    'patterns',
    'Most `pattern` / `patternProperties` regular expressions in one event-type schema; more → 422. Patterns run on a linear-time engine (RE2 syntax: no look-around, no back-references).',
  ),
  maxSchemaUniqueItems: setting(
    'TIDINGS_MAX_SCHEMA_UNIQUE_ITEMS',
    int(0, 100_000),
    '100',
    'items',
    'An event-type schema whose `uniqueItems` applies to items not typed as strings, numbers, integers, booleans or null (which are compared two by two: 20,000 objects took 6.5 s) must bound them with a `maxItems` of at most this; otherwise → 422.',
  ),
  maxEndpointsPerApp: setting(
    'TIDINGS_MAX_ENDPOINTS_PER_APP',
    int(1, 1_000_000),
    '100',
    'endpoints',
    'Most endpoints (not deleted) of one application, so one publish fans out to at most this many deliveries; one more → 409 endpoint_limit_reached.',
  ),
  corsOrigins: setting(
    'TIDINGS_CORS_ORIGINS',
    z.string().transform((text) =>
      text
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
    ),
    '',
    'origin list',
    'Browser origins allowed to call the API (comma-separated, or *). Empty: CORS is off and browsers get no CORS headers.',
  ),
  portalFrameAncestors: setting(
    'TIDINGS_PORTAL_FRAME_ANCESTORS',
    z.string().transform((text, ctx) => {
      const parts = text.split(/[\s,]+/).filter((o) => o !== '');
      for (const part of parts)
        if (!/^(https?:\/\/[a-zA-Z0-9.\-\[\]:*]+|'self')$/.test(part))
          ctx.addIssue({ code: 'custom', message: `"${part}" is not an origin (https://app.example.com) or 'self'` });
      return parts;
    }),
    "'self'",
    'origin list',
    'Origins whose pages may show the application portal (/app-portal) in an iframe: the CSP frame-ancestors of the portal (space- or comma-separated). The console (/console) may never be framed.',
  ),
  portalBrandName: setting(
    'TIDINGS_PORTAL_BRAND_NAME',
    z.string().min(1).max(100),
    'Webhooks',
    'text',
    'Name shown at the top of the application portal.',
  ),
  portalBrandLogoUrl: setting(
    'TIDINGS_PORTAL_BRAND_LOGO_URL',
    z
      .string()
      .url()
      .refine((u) => /^https?:/.test(u), 'must be an http(s) URL')
      .optional(),
    undefined,
    'URL',
    "Logo shown at the top of the application portal (its origin is added to the portal's CSP img-src); unset = none.",
  ),
  portalBrandAccent: setting(
    'TIDINGS_PORTAL_BRAND_ACCENT',
    z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb colour'),
    '#3b5bdb',
    'colour',
    'Accent colour of the application portal (#rrggbb).',
  ),
  appPortalUrl: setting(
    'TIDINGS_APP_PORTAL_URL',
    z.string().url().optional(),
    undefined,
    'URL',
    "Base URL of the application portal that app-portal-access links point at (the token follows in the fragment). Unset: TIDINGS_PUBLIC_URL + /app-portal. Never taken from a request's Host header.",
  ),
  publicUrl: setting(
    'TIDINGS_PUBLIC_URL',
    z
      .string()
      .url()
      .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must be an http(s) URL')
      .optional(),
    undefined,
    'URL',
    "Public base URL of this API (e.g. https://hooks.example.com), for the links it hands out. Unset: the address the request arrived on (the socket's, never the Host header).",
  ),
  appPortalTokenTtlMs: setting(
    'TIDINGS_APP_PORTAL_TOKEN_TTL',
    durationMs(1000),
    '7d',
    'duration',
    'Lifetime of an application-portal token when the request names no expiry.',
  ),
  keyRotationBatch: setting(
    'TIDINGS_KEY_ROTATION_BATCH',
    int(1, 10_000),
    '200',
    'rows',
    'Rows re-encrypted per statement by `tidings keys rotate` (one short transaction each).',
  ),
  payloadRetentionMs: setting(
    'TIDINGS_PAYLOAD_RETENTION',
    durationMs(3_600_000),
    '90d',
    'duration',
    'Default payload retention (a message may set payloadRetentionHours / payloadRetentionPeriod): counted from the last final transition of its deliveries, then the payload and stored response bodies are expunged.',
  ),
  retentionSucceededAgeMs: setting(
    'TIDINGS_RETENTION_SUCCEEDED_AGE',
    durationMs(0),
    '30d',
    'duration',
    'Succeeded deliveries, with their attempts and timeline rows, are deleted this long after they succeeded (0 = kept forever).',
  ),
  retentionIntervalMs: setting(
    'TIDINGS_RETENTION_INTERVAL',
    durationMs(0),
    '5m',
    'duration',
    'Period of the retention job in each API process (0 = off; `tidings retention run` runs it once).',
  ),
  retentionJitter: setting(
    'TIDINGS_RETENTION_JITTER',
    z.coerce.number().min(0).max(0.9),
    '0.2',
    'fraction',
    'Each retention period is drawn from [p·(1−j), p·(1+j)] so that API processes do not run in step.',
  ),
  retentionBatch: setting(
    'TIDINGS_RETENTION_BATCH',
    int(1, 10_000),
    '500',
    'rows',
    'Rows changed per statement by the retention job and by erasure tasks (one short transaction each).',
  ),
  statsRollupIntervalMs: setting(
    'TIDINGS_STATS_ROLLUP_INTERVAL',
    durationMs(0),
    '1s',
    'duration',
    'Period of the time-in-state roll-up in each API process: timeline rows newer than its watermark are read raw by every statistics read, so this bounds that tail (0 = off: reads count raw rows only, exact but slower). ADR 0015.',
  ),
  statsRollupBatch: setting(
    'TIDINGS_STATS_ROLLUP_BATCH',
    int(100, 1_000_000),
    '20000',
    'rows',
    'Most timeline ids one roll-up step folds into the rollups (one short transaction each); a run takes steps until it has caught up.',
  ),
  secretRotationGraceMs: setting(
    'TIDINGS_SECRET_ROTATION_GRACE',
    durationMs(0),
    '24h',
    'duration',
    "After an endpoint secret is rotated, requests carry the previous secret's signature too for this long, unless the rotate request gives gracePeriodSeconds (0 to 7 days).",
  ),
  replayRatePerS: setting(
    'TIDINGS_REPLAY_RATE',
    int(1, 100_000),
    '50',
    'requests/s',
    'Pace of recover, replay-missing and bulk replay: the deliveries they queue are spread over time at this rate per endpoint, so a recovering endpoint is not flooded.',
  ),
  taskBatch: setting(
    'TIDINGS_TASK_BATCH',
    int(1, 10_000),
    '500',
    'rows',
    'Rows a recover / replay task examines per step (one short transaction each, progress recorded with it).',
  ),
  taskPollIntervalMs: setting(
    'TIDINGS_TASK_POLL_INTERVAL',
    durationMs(10),
    '5s',
    'duration',
    'How often an idle API process looks for recover / replay tasks left running (by itself before a crash, or by another process); a new task starts at once.',
  ),
  strictEventTypes: setting(
    'TIDINGS_STRICT_EVENT_TYPES',
    z.enum(['true', 'false']).transform((v) => v === 'true'),
    'false',
    'boolean',
    'As Svix: endpoint filterTypes / eventTypes must name registered, unarchived event types (422 otherwise). false: any name is accepted.',
  ),
  signatureHeaders: setting(
    'TIDINGS_SIGNATURE_HEADERS',
    z.enum(['webhook', 'svix', 'both']),
    'both',
    'header set',
    'Signature headers on every request: webhook (webhook-id, -timestamp, -signature: Standard Webhooks), svix (svix-id, -timestamp, -signature, for receivers written against Svix), or both (the same values under both names).',
  ),
  deliverAtHorizonMs: setting(
    'TIDINGS_DELIVER_AT_HORIZON',
    durationMs(1000),
    '24h',
    'duration',
    "Furthest a message's deliverAt may lie in the future (Svix: 24 h); a later one is refused with 422. A deliverAt in the past is delivered at once.",
  ),
  otlpEndpoint: setting(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    z.string().url().optional(),
    undefined,
    'URL',
    'OpenTelemetry: base URL of the OTLP receiver (traces go to <URL>/v1/traces). Set (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_TRACES_EXPORTER=otlp): tracing is on. Unset: off, at no cost. The SDK reads the other OTEL_* variables itself (docs/reference/traces.md).',
  ),
  otlpTracesEndpoint: setting(
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    z.string().url().optional(),
    undefined,
    'URL',
    'OpenTelemetry: full URL traces are sent to, over OTEL_EXPORTER_OTLP_ENDPOINT. Set: tracing is on.',
  ),
  tracesExporter: setting(
    'OTEL_TRACES_EXPORTER',
    z.string().transform((text) =>
      text
        .split(',')
        .map((e) => e.trim())
        .filter((e) => e !== ''),
    ),
    '',
    'exporter list',
    'OpenTelemetry: trace exporters (otlp, console, zipkin, none). Naming one turns tracing on without an endpoint (OTLP then goes to http://localhost:4318); none turns it off.',
  ),
  otelSdkDisabled: setting(
    'OTEL_SDK_DISABLED',
    z.enum(['true', 'false']).transform((v) => v === 'true'),
    'false',
    'boolean',
    'OpenTelemetry: true turns tracing off whatever else is set.',
  ),
  otelServiceName: setting(
    'OTEL_SERVICE_NAME',
    z.string().min(1),
    'tidings',
    'text',
    'OpenTelemetry: the service.name of every span (with tracing on).',
  ),
  testFaultPoints: setting(
    'TIDINGS_TEST_FAULT_POINTS',
    faultPointList,
    '',
    'fault points',
    'Test only (the fault-injection suite, test/faults): arms named fault points, e.g. `after_send:exit` (the process kills itself after a request left, before its outcome is recorded) or `before_record@2:stall_ms=5000`. Points: after_claim, after_send, before_record, after_record (the record committed, before a broker message is acknowledged), before_heartbeat, after_commit_before_response. Never set in production; logged at start-up.',
  ),
} as const;

type Settings = typeof SETTINGS;
/** The validated configuration. Durations end in Ms (milliseconds). */
export type Config = { readonly [K in keyof Settings]: z.output<Settings[K]['schema']> };

/** Variables that were renamed: [old, new]. Setting an old one is a configuration error naming the new one. */
export const RENAMED_VARIABLES: readonly (readonly [string, string])[] = [
  ['TIDINGS_WORKER_ID', 'TIDINGS_DISPATCHER_ID'],
];

/** Thrown by {@link loadConfig}; `problems` lists every invalid setting at once. */
export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Reads and validates every setting from `env`, then checks the settings against each other.
 * @throws ConfigError listing every problem (fail fast at start-up).
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as [keyof Settings, Setting<z.ZodType>][]) {
    // An empty variable means "unset": its default applies (never Number('') = 0).
    const given = env[s.env];
    const raw = given === undefined || given === '' ? s.defaultValue : given;
    const parsed = s.schema.safeParse(raw);
    if (parsed.success) out[key] = parsed.data;
    else {
      // Secrets and URLs (which may carry a password) are never echoed back.
      const shown = s.unit === 'secret' || s.unit === 'URL' ? '(value hidden)' : JSON.stringify(raw);
      problems.push(`${s.env}=${shown}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    }
  }
  // A renamed variable is refused, not ignored: the value would otherwise be lost without a word.
  for (const [from, to] of RENAMED_VARIABLES)
    if (env[from] !== undefined && env[from] !== '') problems.push(`${from} was renamed ${to}`);
  {
    // Cross-setting checks run on whatever parsed, so every problem is listed at once.
    const c = out as Partial<Config>;
    // A lease shorter than one attempt would let a second dispatcher take a delivery whose request is still
    // in flight on every attempt (docs/guides/failure-table.md, scenario 9): refuse it.
    // The same rule holds a retry policy's attemptTimeout (src/domain/retry-policy.ts).
    if (
      c.leaseMs !== undefined &&
      c.attemptDeadlineMs !== undefined &&
      !leaseCoversAttempt(c.leaseMs, c.attemptDeadlineMs)
    )
      problems.push(
        `TIDINGS_LEASE (${c.leaseMs} ms) must exceed TIDINGS_ATTEMPT_DEADLINE (${c.attemptDeadlineMs} ms) plus ${LEASE_MARGIN_MS} ms`,
      );
    if (
      c.retryPolicyMinDelayMs !== undefined &&
      c.retryPolicyMaxDelayMs !== undefined &&
      c.retryPolicyMinDelayMs > c.retryPolicyMaxDelayMs
    )
      problems.push('TIDINGS_RETRY_POLICY_MIN_DELAY must not exceed TIDINGS_RETRY_POLICY_MAX_DELAY');
    if (c.retryAfterMinMs !== undefined && c.retryAfterMaxMs !== undefined && c.retryAfterMinMs > c.retryAfterMaxMs)
      problems.push('TIDINGS_RETRY_AFTER_MIN must not exceed TIDINGS_RETRY_AFTER_MAX');
    if (
      c.responsePrefixBytes !== undefined &&
      c.maxResponseBytes !== undefined &&
      c.responsePrefixBytes > c.maxResponseBytes
    )
      problems.push('TIDINGS_RESPONSE_PREFIX_BYTES must not exceed TIDINGS_MAX_RESPONSE_BYTES');
    if (
      c.apiHeadersTimeoutMs !== undefined &&
      c.apiRequestTimeoutMs !== undefined &&
      c.apiHeadersTimeoutMs > c.apiRequestTimeoutMs
    )
      problems.push('TIDINGS_API_HEADERS_TIMEOUT must not exceed TIDINGS_API_REQUEST_TIMEOUT');
    if ((env[SETTINGS.databaseUrl.env] ?? '') === '') {
      const serverOnly = [
        ['TIDINGS_DIRECT_DATABASE_URL', c.directDatabaseUrl],
        ['TIDINGS_READ_DATABASE_URL', c.readDatabaseUrl],
      ] as const;
      for (const [name, value] of serverOnly)
        if (value !== undefined)
          problems.push(`${name} needs DATABASE_URL (the embedded engine is one session in this process)`);
      if (c.databasePooler !== undefined && c.databasePooler !== 'none')
        problems.push('TIDINGS_DATABASE_POOLER needs DATABASE_URL (the embedded engine has no pooler)');
    }
    if (c.readLagCheckMs !== undefined && c.readMaxLagMs !== undefined && c.readLagCheckMs >= c.readMaxLagMs)
      problems.push('TIDINGS_READ_LAG_CHECK must be less than TIDINGS_READ_MAX_LAG');
    if (c.claimBatch !== undefined && c.concurrency !== undefined && c.claimBatch > c.concurrency)
      out.claimBatch = c.concurrency;
    if (c.transport === 'rabbitmq' && c.rabbitmqUrl === undefined)
      problems.push('TIDINGS_TRANSPORT=rabbitmq needs TIDINGS_RABBITMQ_URL');
    if (c.transport === 'nats' && c.natsUrl === undefined)
      problems.push('TIDINGS_TRANSPORT=nats needs TIDINGS_NATS_URL');
    if (
      c.brokerSweepAfterMs !== undefined &&
      c.brokerPublishIntervalMs !== undefined &&
      c.brokerSweepAfterMs <= c.brokerPublishIntervalMs
    )
      problems.push('TIDINGS_BROKER_SWEEP_AFTER must exceed TIDINGS_BROKER_PUBLISH_INTERVAL');
    if (
      c.brokerReconnectMinMs !== undefined &&
      c.brokerReconnectMaxMs !== undefined &&
      c.brokerReconnectMinMs > c.brokerReconnectMaxMs
    )
      problems.push('TIDINGS_BROKER_RECONNECT_MIN must not exceed TIDINGS_BROKER_RECONNECT_MAX');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as Config;
}

/**
 * The default of one setting, parsed by its schema: for code that is built without a configuration at hand
 * (a test, a library caller) and must not keep a copy of the default.
 * @throws Error when the setting has no default (it is unset unless configured)
 */
export function settingDefault<K extends keyof Settings>(key: K): Config[K] {
  const s: Setting<z.ZodType> = SETTINGS[key];
  if (s.defaultValue === undefined) throw new Error(`${s.env} has no default`);
  return s.schema.parse(s.defaultValue) as Config[K];
}

/** The configuration reference as a Markdown table (docs/reference/configuration.md). */
export function configurationMarkdown(): string {
  const rows = Object.values(SETTINGS).map(
    (s) =>
      `| \`${s.env}\` | ${s.defaultValue === undefined ? '(unset)' : s.defaultValue === '' ? '(empty)' : `\`${s.defaultValue}\``} | ${s.unit} | ${s.description} |`,
  );
  return ['| Variable | Default | Unit | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n') + '\n';
}
