/**
 * Starting and stopping the peer (peer-process.ts) from the benchmark, cleaning its Redis keys, finding the
 * Redis server's pid for the CPU shares, and the "BullMQ alone" producer that adds jobs straight to the
 * queue from the load generator's process (no HTTP ingest).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { benchPayload, closedLoop, pacedLoop, type Ack, type PublishRun } from '../load.ts';
import { startChild, type Child } from '../procs.ts';
import { JOB_OPTIONS, peerSecret, type PeerInit, type PeerJob } from './peer-process.ts';
import { redisConnection, type RedisTarget } from './redis.ts';

const SCRIPT = fileURLToPath(new URL('./peer-process.ts', import.meta.url));
const nowMs = (): number => performance.timeOrigin + performance.now();

/** A running peer: its API (absent for "BullMQ alone") and its worker. */
export interface Peer {
  readonly apiUrl: string | null;
  readonly token: string;
  readonly api: Child | null;
  readonly worker: Child;
  readonly init: Omit<PeerInit, 'role'>;
  stop(): Promise<void>;
}

/** Options of {@link startPeer}. */
export interface PeerOptions {
  readonly redis: RedisTarget;
  /** Key prefix of this invocation; every key the peer writes starts with it. */
  readonly prefix: string;
  readonly receiverUrl: string;
  readonly concurrency: number;
  readonly connectionsPerOrigin: number;
  /** Start the Fastify ingest (the peer) or only the worker (BullMQ alone). */
  readonly ingest: boolean;
  readonly tag: string;
  readonly logDir: string;
}

async function startRole(init: PeerInit, name: string, logFile: string): Promise<{ child: Child; port: number }> {
  const child = startChild({ name, args: [SCRIPT, JSON.stringify(init)], env: { PATH: process.env.PATH }, ipc: true, logFile });
  const ready = await Promise.race([
    new Promise<{ port: number }>((resolve) => child.process.once('message', (m: { port: number }) => resolve(m))),
    child.exited.then((code) => { throw new Error(`${name} exited (${code}) before it was ready; see ${logFile}`); }),
    new Promise<never>((_, reject) => { setTimeout(() => reject(new Error(`${name} not ready within 30 s; see ${logFile}`)), 30_000).unref(); }),
  ]);
  return { child, port: ready.port };
}

/** Starts the worker and, with `ingest`, the API; resolves once both are ready (bounded, 30 s each). */
export async function startPeer(o: PeerOptions): Promise<Peer> {
  const init: Omit<PeerInit, 'role'> = {
    redis: o.redis, prefix: o.prefix, queue: `q-${o.tag}`, token: `peer_${randomBytes(12).toString('hex')}`,
    receiverUrl: o.receiverUrl, concurrency: o.concurrency, connectionsPerOrigin: o.connectionsPerOrigin, secret: peerSecret(),
  };
  const worker = await startRole({ ...init, role: 'worker' }, `peer-worker-${o.tag}`, `${o.logDir}/peer-worker-${o.tag}.log`);
  let api: { child: Child; port: number } | null = null;
  try {
    if (o.ingest) api = await startRole({ ...init, role: 'api' }, `peer-api-${o.tag}`, `${o.logDir}/peer-api-${o.tag}.log`);
  } catch (error) {
    await worker.child.stop(5_000);
    throw error;
  }
  return {
    apiUrl: api === null ? null : `http://127.0.0.1:${api.port}`,
    token: init.token,
    api: api?.child ?? null,
    worker: worker.child,
    init,
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

/** Pids of `redis-server` processes on this machine (for the Redis role's CPU share), from /proc. */
export function redisPids(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'redis-server') out.push(Number(entry));
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
  paced(rate: number, durationMs: number, inFlight: number, payloadBytes: number, idPrefix: string): Promise<PublishRun>;
  close(): Promise<void>;
}

/** Makes the producer for `peer`'s queue. */
export function directProducer(peer: Peer): DirectProducer {
  // BullMQ leaves a client it was handed open: close it after the queue.
  const connection = redisConnection(peer.init.redis);
  const queue = new Queue<PeerJob>(peer.init.queue, { connection, prefix: peer.init.prefix });
  let seq = 0;
  const addOne = async (acks: Ack[], fail: (e: string) => void, payloadBytes: number, idPrefix: string): Promise<void> => {
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
      return { acks, failed: state.failed, firstError: state.firstError, startedAt, endedAt, late: 0, maxInFlight: Math.min(inFlight, count) };
    },
    async paced(rate, durationMs, inFlight, payloadBytes, idPrefix) {
      const { acks, state, fail } = outcome();
      const startedAt = nowMs();
      const { late } = await pacedLoop(rate, durationMs, inFlight, startedAt + durationMs + 30_000, () => addOne(acks, fail, payloadBytes, idPrefix));
      const endedAt = acks.reduce((m, a) => Math.max(m, a.ackAt), startedAt);
      return { acks, failed: state.failed, firstError: state.firstError, startedAt, endedAt, late, maxInFlight: inFlight };
    },
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}
