/**
 * Starting and stopping a peer (bullmq-process.ts or graphile-process.ts) from the benchmark, cleaning the
 * BullMQ peers' Redis keys, finding Redis servers' pids for the CPU shares, and the "BullMQ alone" producer
 * that adds jobs straight to the queue from the load generator's process (no HTTP ingest).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { benchPayload, closedLoop, pacedLoop, type Ack, type PublishRun } from '../load.ts';
import { startChild, type Child } from '../procs.ts';
import { databaseUrl, recreateDatabase } from '../tidings.ts';
import { JOB_OPTIONS, type BullmqInit } from './bullmq-process.ts';
import type { GraphileInit } from './graphile-process.ts';
import { peerSecret, type PeerJob } from './peer-common.ts';
import { redisConnection, type RedisTarget } from './redis.ts';

const SCRIPTS = {
  bullmq: fileURLToPath(new URL('./bullmq-process.ts', import.meta.url)),
  graphile: fileURLToPath(new URL('./graphile-process.ts', import.meta.url)),
} as const;
const nowMs = (): number => performance.timeOrigin + performance.now();

/**
 * Where a peer keeps its queue: BullMQ on a Redis (keys under `prefix`), or graphile-worker in database
 * `dbName` on the PostgreSQL server of `serverUrl` (dropped and created again by every start).
 */
export type PeerQueue =
  | { readonly kind: 'bullmq'; readonly redis: RedisTarget; readonly prefix: string }
  | { readonly kind: 'graphile'; readonly serverUrl: string; readonly dbName: string };

/** The settings every role of a peer gets (as JSON in argv[2]), without the role. */
type PeerInit = Omit<BullmqInit, 'role'> | Omit<GraphileInit, 'role'>;

/** A running peer: its API (absent for "BullMQ alone") and its worker. */
export interface Peer {
  readonly apiUrl: string | null;
  readonly token: string;
  readonly api: Child | null;
  readonly worker: Child;
  readonly queue: PeerQueue;
  /** The BullMQ queue's name (empty for graphile-worker). */
  readonly queueName: string;
  stop(): Promise<void>;
}

/** Options of {@link startPeer}. */
export interface PeerOptions {
  readonly queue: PeerQueue;
  readonly receiverUrl: string;
  readonly concurrency: number;
  readonly connectionsPerOrigin: number;
  /** Start the Fastify ingest (the peer) or only the worker (BullMQ alone). */
  readonly ingest: boolean;
  readonly tag: string;
  readonly logDir: string;
}

type Role = { child: Child; port: number };
type RoleName = 'api' | 'worker';

async function startRole(
  script: string,
  init: PeerInit & { role: RoleName },
  name: string,
  logDir: string,
): Promise<Role> {
  const logFile = `${logDir}/${name}.log`;
  const args = [script, JSON.stringify(init)];
  const child = startChild({ name, args, env: { PATH: process.env.PATH }, ipc: true, logFile });
  const late = (reject: (e: Error) => void): void => {
    setTimeout(() => reject(new Error(`${name} not ready within 30 s; see ${logFile}`)), 30_000).unref();
  };
  const ready = await Promise.race([
    new Promise<{ port: number }>((resolve) => child.process.once('message', (m: { port: number }) => resolve(m))),
    child.exited.then((code) => {
      throw new Error(`${name} exited (${code}) before it was ready; see ${logFile}`);
    }),
    new Promise<never>((_, reject) => late(reject)),
  ]).catch(async (error: unknown) => {
    await child.stop(5_000);
    throw error;
  });
  return { child, port: ready.port };
}

/**
 * Starts the worker and, with `ingest`, the API; resolves once both are ready (bounded, 30 s each). A
 * graphile-worker peer gets a fresh database first, which its worker migrates before it is ready.
 */
export async function startPeer(o: PeerOptions): Promise<Peer> {
  const token = `peer_${randomBytes(12).toString('hex')}`;
  const common = {
    token,
    receiverUrl: o.receiverUrl,
    concurrency: o.concurrency,
    connectionsPerOrigin: o.connectionsPerOrigin,
    secret: peerSecret(),
  };
  const queueName = o.queue.kind === 'bullmq' ? `q-${o.tag}` : '';
  let init: PeerInit;
  if (o.queue.kind === 'bullmq') {
    init = { ...common, redis: o.queue.redis, prefix: o.queue.prefix, queue: queueName };
  } else {
    await recreateDatabase(o.queue.serverUrl, o.queue.dbName);
    init = { ...common, databaseUrl: databaseUrl(o.queue.serverUrl, o.queue.dbName) };
  }
  const script = SCRIPTS[o.queue.kind];
  const label = o.queue.kind === 'bullmq' ? 'peer' : 'graphile';
  const worker = await startRole(script, { ...init, role: 'worker' }, `${label}-worker-${o.tag}`, o.logDir);
  let api: Role | null = null;
  try {
    if (o.ingest) api = await startRole(script, { ...init, role: 'api' }, `${label}-api-${o.tag}`, o.logDir);
  } catch (error) {
    await worker.child.stop(5_000);
    throw error;
  }
  return {
    apiUrl: api === null ? null : `http://127.0.0.1:${api.port}`,
    token,
    api: api?.child ?? null,
    worker: worker.child,
    queue: o.queue,
    queueName,
    async stop() {
      await Promise.all([api?.child.stop(5_000), worker.child.stop(5_000)]);
    },
  };
}

/**
 * Deletes every key that starts with `prefix` in the target database (SCAN + UNLINK, bounded to 1,000
 * rounds); other keys are left alone. Returns how many were deleted.
 */
export async function deleteKeys(target: RedisTarget, prefix: string): Promise<number> {
  const client = redisConnection(target);
  let deleted = 0;
  try {
    let cursor = '0';
    for (let round = 0; round < 1_000; round += 1) {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
      if (keys.length > 0) deleted += await client.unlink(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    client.disconnect();
  }
  return deleted;
}

/** Pids of `redis-server` processes on this machine but `except` (for the Redis role's CPU share), from /proc. */
export function redisPids(except: readonly number[] = []): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const pid = Number(entry);
      if (!except.includes(pid) && readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'redis-server') out.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The "BullMQ alone" producer: a BullMQ `Queue` in the load generator's process. */
export interface DirectProducer {
  /** Adds `count` jobs, `inFlight` adds outstanding at a time (bounded by `timeoutMs`). */
  burst(count: number, inFlight: number, payloadBytes: number, timeoutMs: number): Promise<PublishRun>;
  /** Adds jobs at `rate` per second for `durationMs` (open loop, at most `inFlight` outstanding). */
  paced(
    rate: number,
    durationMs: number,
    inFlight: number,
    payloadBytes: number,
    idPrefix: string,
  ): Promise<PublishRun>;
  close(): Promise<void>;
}

/**
 * Makes the producer for `peer`'s queue.
 * @throws Error for a graphile-worker peer (only the BullMQ peer runs "alone")
 */
export function directProducer(peer: Peer): DirectProducer {
  if (peer.queue.kind !== 'bullmq') throw new Error('only a BullMQ peer has a direct producer');
  // BullMQ leaves a client it was handed open: close it after the queue.
  const connection = redisConnection(peer.queue.redis);
  const queue = new Queue<PeerJob>(peer.queueName, { connection, prefix: peer.queue.prefix });
  let seq = 0;
  const addOne = async (
    acks: Ack[],
    fail: (e: string) => void,
    payloadBytes: number,
    idPrefix: string,
  ): Promise<void> => {
    const i = (seq += 1);
    const id = `${idPrefix}${i}`;
    const sentAt = nowMs();
    try {
      await queue.add('bench.event', { id, payload: benchPayload(payloadBytes, i) }, JOB_OPTIONS);
      acks.push({ id, sentAt, ackAt: nowMs() });
    } catch (error) {
      fail((error as Error).message);
    }
  };
  const outcome = () => {
    const acks: Ack[] = [];
    const state = { failed: 0, firstError: null as string | null };
    const fail = (e: string): void => {
      state.failed += 1;
      state.firstError ??= e;
    };
    return { acks, state, fail };
  };
  return {
    async burst(count, inFlight, payloadBytes, timeoutMs) {
      const { acks, state, fail } = outcome();
      const startedAt = nowMs();
      const deadline = startedAt + timeoutMs;
      await closedLoop(count, inFlight, deadline, () => addOne(acks, fail, payloadBytes, 'bmq_'));
      const endedAt = acks.reduce((m, a) => Math.max(m, a.ackAt), startedAt);
      return {
        acks,
        failed: state.failed,
        firstError: state.firstError,
        startedAt,
        endedAt,
        late: 0,
        maxInFlight: Math.min(inFlight, count),
      };
    },
    async paced(rate, durationMs, inFlight, payloadBytes, idPrefix) {
      const { acks, state, fail } = outcome();
      const startedAt = nowMs();
      const { late } = await pacedLoop(rate, durationMs, inFlight, startedAt + durationMs + 30_000, () =>
        addOne(acks, fail, payloadBytes, idPrefix),
      );
      const endedAt = acks.reduce((m, a) => Math.max(m, a.ackAt), startedAt);
      return {
        acks,
        failed: state.failed,
        firstError: state.firstError,
        startedAt,
        endedAt,
        late,
        maxInFlight: inFlight,
      };
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}
