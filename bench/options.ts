import { parseArgs } from 'node:util';

/** Every scenario a run without `--scenarios` includes, in order. */
export const ALL_SCENARIOS = [
  'burst',
  'slow-drain',
  'wide-window',
  'latency',
  'scale-out',
  'fan-out',
  'claim-backlog',
  'stats-reads',
  'search',
] as const;
/** Scenarios run only when named: `peers` (`--peers`), `transports` (`--transports`). */
export const EXTRA_SCENARIOS = ['peers', 'transports'] as const;
export type Scenario = (typeof ALL_SCENARIOS)[number] | (typeof EXTRA_SCENARIOS)[number];
const KNOWN: readonly Scenario[] = [...ALL_SCENARIOS, ...EXTRA_SCENARIOS];

/**
 * The letters the scenarios had before they were named, still accepted by `--scenarios` until the next
 * release (older notes and ADRs quote commands with them).
 */
export const SCENARIO_LETTERS: Readonly<Record<string, Scenario>> = {
  a: 'burst',
  b: 'slow-drain',
  c: 'wide-window',
  d: 'latency',
  e: 'scale-out',
  f: 'fan-out',
  g: 'claim-backlog',
  h: 'stats-reads',
  p: 'peers',
};

/** Scenarios that run on the PostgreSQL server only (several processes on one database; SQL backlog; the peers). */
export const SERVER_ONLY: ReadonlySet<Scenario> = new Set<Scenario>([
  'scale-out',
  'claim-backlog',
  'stats-reads',
  'search',
  'peers',
  'transports',
]);

/** Sizes of the workloads. `--quick` shrinks them to validate the command in a minute or two. */
export interface Sizes {
  /** burst, slow-drain, scale-out: messages published in one burst. */
  readonly burstMessages: number;
  /** Publish calls in flight (load generator). */
  readonly publishInFlight: number;
  /** wide-window: deliveries in flight (TIDINGS_CONCURRENCY), endpoints, messages. */
  readonly slowInFlight: number;
  readonly slowEndpoints: number;
  readonly slowMessages: number;
  /** latency: paced rates (messages/s), measured duration and warm-up per rate, ms. */
  readonly paceRates: readonly number[];
  readonly paceDurationMs: number;
  readonly paceWarmupMs: number;
  /** scale-out: dispatcher process counts. */
  readonly dispatcherCounts: readonly number[];
  /** fan-out: messages, each fanned out to `fanOutEndpoints`. */
  readonly fanOutMessages: number;
  readonly fanOutEndpoints: number;
  /** claim-backlog: backlog sizes (due deliveries) and timed claims per size. */
  readonly backlogRows: readonly number[];
  readonly claimRepeats: number;
  /** stats-reads: timeline rows in the window of the statistics reads, and the spans (ms before "now") they fill. */
  readonly timelineRows: readonly number[];
  readonly timelineSpansMs: readonly number[];
  /** search: messages in the searched application, and timed requests per search. */
  readonly searchMessages: number;
  readonly searchRequests: number;
  /** Upper bound of one wait for deliveries, ms (every loop is bounded). */
  readonly waitTimeoutMs: number;
}

const FULL: Sizes = {
  burstMessages: 20_000,
  publishInFlight: 50,
  slowInFlight: 2_000,
  slowEndpoints: 50,
  slowMessages: 20_000,
  paceRates: [20, 200, 2_000],
  paceDurationMs: 10_000,
  paceWarmupMs: 1_000,
  dispatcherCounts: [1, 2, 4],
  fanOutMessages: 2_000,
  fanOutEndpoints: 10,
  backlogRows: [1_000, 1_000_000],
  claimRepeats: 30,
  timelineRows: [1_000_000],
  timelineSpansMs: [3_600_000, 300_000],
  searchMessages: 1_000_000,
  searchRequests: 200,
  waitTimeoutMs: 300_000,
};

const MODERATE: Sizes = {
  burstMessages: 5_000,
  publishInFlight: 50,
  slowInFlight: 1_000,
  slowEndpoints: 50,
  slowMessages: 5_000,
  paceRates: [20, 200, 2_000],
  paceDurationMs: 5_000,
  paceWarmupMs: 500,
  dispatcherCounts: [1, 2, 4],
  fanOutMessages: 500,
  fanOutEndpoints: 10,
  backlogRows: [1_000, 1_000_000],
  claimRepeats: 20,
  timelineRows: [1_000_000],
  timelineSpansMs: [3_600_000, 300_000],
  searchMessages: 1_000_000,
  searchRequests: 100,
  waitTimeoutMs: 300_000,
};

const QUICK: Sizes = {
  burstMessages: 2_000,
  publishInFlight: 50,
  slowInFlight: 200,
  slowEndpoints: 10,
  slowMessages: 1_000,
  paceRates: [20, 200, 2_000],
  paceDurationMs: 2_000,
  paceWarmupMs: 300,
  dispatcherCounts: [1, 2],
  fanOutMessages: 200,
  fanOutEndpoints: 10,
  backlogRows: [1_000, 50_000],
  claimRepeats: 10,
  timelineRows: [50_000],
  timelineSpansMs: [3_600_000],
  searchMessages: 50_000,
  searchRequests: 20,
  waitTimeoutMs: 90_000,
};

/** The parsed command line of `npm run bench`. */
export interface Options {
  readonly scenarios: readonly Scenario[];
  readonly runs: number;
  readonly engines: readonly ('server' | 'embedded')[];
  /**
   * `full` (the sizes of docs/guides/benchmark.md), `moderate` (a quarter of the messages, the full 1,000,000-row
   * backlog), or `quick`.
   */
  readonly size: 'full' | 'moderate' | 'quick';
  readonly quick: boolean;
  readonly sizes: Sizes;
  /** PostgreSQL server URL; the bench databases are created on it. */
  readonly databaseUrl: string;
  readonly dbName: string;
  readonly payloadBytes: number;
  /** Send an Idempotency-Key with every publish, as the svix client does (`auto_<uuid>`). */
  readonly idempotencyKeys: boolean;
  readonly logLevel: string;
  readonly probe: boolean;
  readonly cpuProf: boolean;
  /** Tracing on in the Tidings processes, exporting to a local OTLP sink (bench/trace-sink.ts). */
  readonly traces: boolean;
  /** Redis of the BullMQ peers in `peers`: `redis://host:port/db`; their keys live under a private prefix. */
  readonly redisUrl: string;
  /** The `redis-server` binary of the private Redis (appendonly, appendfsync always) of the durable BullMQ peer. */
  readonly redisServer: string;
  /** The workloads `peers` runs, in its order: fast, slow (100 ms receiver), latency (default all three). */
  readonly peerParts: readonly PeerPart[];
  /** JSON output path, or undefined for bench/results/bench-<time>.json. */
  readonly out: string | undefined;
  readonly help: boolean;
}

/** The workloads of `peers`: fast receiver, 100 ms receiver with 50 in flight, publish → first attempt at 20/s. */
export const PEER_PARTS = ['fast', 'slow', 'latency'] as const;
/** One workload of `peers`. */
export type PeerPart = (typeof PEER_PARTS)[number];

/** Usage text of `npm run bench -- --help`. */
export const USAGE = `Usage: npm run bench -- [options]

  --scenarios S,…     scenarios to run (default: all but peers, in this order):
                        burst          (was a) burst to a 0 ms receiver, end to end
                        slow-drain     (was b) backlog drained to a 100 ms receiver at the default window
                        wide-window    (was c) 1 s receiver, a window of 2,000 over 50 endpoints
                        latency        (was d) publish → first attempt at paced rates
                        scale-out      (was e) 1, 2, 4 dispatcher processes on one database
                        fan-out        (was f) every message to 10 endpoints
                        claim-backlog  (was g) claim cost against backlog size (SQL)
                        stats-reads    (was h) statistics reads against timeline size (SQL)
                        search         search and list routes at 1,000,000 messages (HTTP API, p50 / p99)
                        peers          (was p) Tidings beside the peers (only when named, or --peers)
                        transports     the transports postgres, rabbitmq and nats on the same workloads (only
                                       when named, or --transports)
                      the old letters are still accepted until the next release
  --peers             the same as --scenarios peers with 1 KiB payloads: Tidings beside Fastify + BullMQ (on
                      the Redis of --redis-url, and on a private Redis with appendfsync always), BullMQ alone,
                      Fastify + graphile-worker (on the PostgreSQL server) and the raw signed-HTTP ceiling in
                      the same run (fast receiver, 100 ms receiver with 50 in flight, publish → first attempt
                      at 20/s); --messages for quicker runs
  --transports        the same as --scenarios transports: a burst to a 0 ms and to a 100 ms receiver through
                      each transport (TIDINGS_TRANSPORT postgres, rabbitmq, nats; the machine's RabbitMQ and
                      NATS, or $BENCH_RABBITMQ_URL and $BENCH_NATS_URL): deliveries/s, the burst's last attempt
                      after its end, PostgreSQL CPU per delivery with and without the broker
  --peer-parts P,…    the workloads of peers to run: fast, slow, latency (default all three)
  --runs N            runs per scenario; figures are medians with min and max (default 3; --quick: 1)
  --engine E          server | embedded | both (default both; scale-out, claim-backlog, stats-reads, search, peers
                      run on the server only)
  --size S            full | moderate | quick (default full: the guide's sizes; moderate: 5000-message bursts,
                      1000 in flight in wide-window, 5 s per rate in latency, full 1,000,000-row backlog in
                      claim-backlog)
  --quick             the same as --size quick: small sizes, to check the command end to end
  --messages N        messages of the bursts in burst, slow-drain, scale-out, peers (default 20000; --quick 2000)
  --database-url URL  PostgreSQL server (default $BENCH_DATABASE_URL or postgresql://postgres@127.0.0.1:5432/postgres)
  --db-name NAME      bench database, dropped and recreated for every run and dropped at the end; must start
                      with tidings_bench (default tidings_bench; claim-backlog uses NAME_claim, the
                      graphile-worker peer NAME_graphile)
  --payload-bytes N   bytes of each message payload (default 256; with --peers 1024)
  --redis-url URL     Redis of the BullMQ peers (default $BENCH_REDIS_URL or redis://127.0.0.1:6379/13); only keys
                      under a prefix of the run's own are written, and they are deleted at start and end
  --redis-server BIN  redis-server binary of the private Redis with appendfsync always (default redis-server on
                      PATH; when it cannot start, that peer is left out and the others run)
  --idempotency-keys  send an Idempotency-Key (auto_<uuid>) with every publish, as the svix client does
  --log-level L       TIDINGS_LOG_LEVEL of the Tidings processes (default info, the production default)
  --probe             time every SQL statement inside the Tidings processes (bench/pg-probe.ts)
  --cpu-prof          write V8 CPU profiles of the Tidings processes and summarise them
  --traces            tracing on in the Tidings processes (OTLP/HTTP protobuf, default batch processor) to a
                      local sink that answers at once; compare with the same run without it
  --timeline-spans S  stats-reads: spans the timeline is filled over, e.g. 1h,5m (default 1h,5m; --quick 1h)
  --out FILE          JSON output (default bench/results/bench-<time>.json)

TIDINGS_* and OTEL_* variables in the environment are passed to the Tidings processes (e.g. TIDINGS_CONCURRENCY).`;

/**
 * Parses the benchmark's arguments.
 * @throws Error for an unknown scenario, engine, or a non-positive count
 */
export function parseOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      scenarios: { type: 'string' },
      runs: { type: 'string' },
      engine: { type: 'string' },
      quick: { type: 'boolean' },
      size: { type: 'string' },
      messages: { type: 'string' },
      'database-url': { type: 'string' },
      'db-name': { type: 'string' },
      'payload-bytes': { type: 'string' },
      'idempotency-keys': { type: 'boolean' },
      'log-level': { type: 'string' },
      probe: { type: 'boolean' },
      'cpu-prof': { type: 'boolean' },
      traces: { type: 'boolean' },
      'timeline-spans': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      peers: { type: 'boolean' },
      transports: { type: 'boolean' },
      'redis-url': { type: 'string' },
      'peer-parts': { type: 'string' },
      'redis-server': { type: 'string' },
    },
  });
  const size = values.quick === true ? 'quick' : (values.size ?? 'full');
  if (size !== 'full' && size !== 'moderate' && size !== 'quick')
    throw new Error(`--size must be full, moderate or quick, not "${size}"`);
  const quick = size === 'quick';
  const peers = values.peers === true;
  const named = [...(peers ? ['peers'] : []), ...(values.transports === true ? ['transports'] : [])];
  const scenarios = (values.scenarios ?? (named.length > 0 ? named.join(',') : ALL_SCENARIOS.join(',')))
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '')
    .map((s) => SCENARIO_LETTERS[s] ?? s);
  for (const s of scenarios)
    if (!(KNOWN as readonly string[]).includes(s)) throw new Error(`unknown scenario "${s}" (${KNOWN.join(', ')})`);
  if (scenarios.length === 0) throw new Error(`--scenarios names no scenario (${KNOWN.join(', ')})`);
  const redisUrl = values['redis-url'] ?? env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13';
  if (!URL.canParse(redisUrl) || new URL(redisUrl).protocol !== 'redis:')
    throw new Error(`--redis-url must be a redis:// URL, not "${redisUrl}"`);
  const peerParts = (values['peer-parts'] ?? PEER_PARTS.join(','))
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const p of peerParts)
    if (!(PEER_PARTS as readonly string[]).includes(p))
      throw new Error(`--peer-parts takes fast, slow, latency, not "${p}"`);
  if (peerParts.length === 0) throw new Error('--peer-parts names no workload (fast, slow, latency)');
  const dbName = values['db-name'] ?? 'tidings_bench';
  // The bench drops and recreates this database: only names of its own, never `test` or anyone else's.
  if (!/^tidings_bench[a-z0-9_]*$/.test(dbName))
    throw new Error(`--db-name must start with tidings_bench and use [a-z0-9_] only, not "${dbName}"`);
  const databaseUrl =
    values['database-url'] ?? env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  if (!URL.canParse(databaseUrl) || !/^postgres(ql)?:$/.test(new URL(databaseUrl).protocol))
    throw new Error(`--database-url must be a postgresql:// URL, not "${databaseUrl}"`);
  const engine = values.engine ?? 'both';
  if (!['server', 'embedded', 'both'].includes(engine))
    throw new Error(`--engine must be server, embedded or both, not "${engine}"`);
  const positive = (name: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, not "${text}"`);
    return n;
  };
  let sizes = size === 'quick' ? QUICK : size === 'moderate' ? MODERATE : FULL;
  if (values.messages !== undefined)
    sizes = { ...sizes, burstMessages: positive('messages', values.messages, sizes.burstMessages) };
  if (values['timeline-spans'] !== undefined) {
    const spans = values['timeline-spans'].split(',').map((t) => {
      const m = /^(\d+)(m|h)$/.exec(t.trim());
      if (m === null || Number(m[1]) < 1)
        throw new Error(`--timeline-spans takes minutes or hours like 1h,5m, not "${t}"`);
      return Number(m[1]) * (m[2] === 'h' ? 3_600_000 : 60_000);
    });
    sizes = { ...sizes, timelineSpansMs: spans };
  }
  return {
    scenarios: KNOWN.filter((s) => scenarios.includes(s)),
    runs: positive('runs', values.runs, quick ? 1 : 3),
    engines: engine === 'both' ? ['server', 'embedded'] : [engine as 'server' | 'embedded'],
    size,
    quick,
    sizes,
    databaseUrl,
    dbName,
    payloadBytes: positive('payload-bytes', values['payload-bytes'], peers ? 1024 : 256),
    idempotencyKeys: values['idempotency-keys'] === true,
    logLevel: values['log-level'] ?? 'info',
    probe: values.probe === true,
    cpuProf: values['cpu-prof'] === true,
    traces: values.traces === true,
    redisUrl,
    redisServer: values['redis-server'] ?? 'redis-server',
    peerParts: PEER_PARTS.filter((p) => peerParts.includes(p)),
    out: values.out,
    help: values.help === true,
  };
}
