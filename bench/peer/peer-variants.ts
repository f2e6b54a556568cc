/**
 * The peers the `peers` scenario runs, and where each keeps its queue: Fastify + BullMQ on the Redis of
 * `--redis-url` (`peer`), the same on a private Redis that fsyncs every command (`peer fsync`), BullMQ alone
 * fed by the load generator (`bullmq`), and Fastify + graphile-worker on the PostgreSQL server (`graphile`).
 */
import type { BenchContext } from '../context.ts';
import { backendPids } from '../pg-stats.ts';
import type { Receiver } from '../receiver.ts';
import { databaseUrl, dropDatabase } from '../tidings.ts';
import { deleteKeys, redisPids, type PeerQueue } from './peer.ts';
import type { PeerRunOptions } from './peer-run.ts';
import { startPrivateRedis, type PrivateRedis } from './private-redis.ts';
import { redisConnection, type RedisTarget } from './redis.ts';

/** A peer of the scenario (the name its figures carry). */
export type PeerVariant = 'peer' | 'peer fsync' | 'bullmq' | 'graphile';
/** The peers that have an HTTP ingest: every Tidings figure is also given as a ratio to each of them. */
export const INGEST_PEERS = ['peer', 'peer fsync', 'graphile'] as const satisfies readonly PeerVariant[];

/** The stores of one invocation's peers: started by {@link openPeerStores}, closed by `close`. */
export interface PeerStores {
  /** The peers this invocation runs, in the order each run runs them. */
  readonly variants: readonly PeerVariant[];
  /** The options of one workload of `variant`. */
  options(variant: PeerVariant, receiver: Receiver, tag: string, inFlight: number, connections: number): PeerRunOptions;
  /** Deletes the BullMQ keys, stops the private Redis and drops the graphile-worker database. */
  close(): Promise<void>;
}

/** `appendonly`, `appendfsync` and `save` of a Redis (CONFIG GET, read only), or the error. */
async function persistence(target: RedisTarget): Promise<Record<string, string>> {
  const client = redisConnection(target, { retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    const out: Record<string, string> = {};
    for (const key of ['appendonly', 'appendfsync', 'save']) {
      const [, value] = (await client.config('GET', key)) as [string, string];
      out[key] = value ?? '';
    }
    return out;
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    client.disconnect();
  }
}

/**
 * Cleans the BullMQ keys under `prefix` and starts the private Redis (left out, with a line on stderr, when
 * `--redis-server` cannot start). Prints and records the persistence settings of both Redis servers.
 */
export async function openPeerStores(ctx: BenchContext, redis: RedisTarget, prefix: string): Promise<PeerStores> {
  const { options, base } = ctx;
  await deleteKeys(redis, prefix);
  let durable: PrivateRedis | null = null;
  try {
    durable = await startPrivateRedis(options.redisServer, base.logDir);
  } catch (error) {
    ctx.log(`  peers: the private Redis is left out (${(error as Error).message}); the others run`);
  }
  const shared = await persistence(redis);
  const own = durable === null ? null : await persistence(durable.target);
  const ownText = own === null ? 'not running' : JSON.stringify(own);
  ctx.log(`  peers: Redis of --redis-url ${JSON.stringify(shared)}; private Redis ${ownText}`);
  ctx.details.push({ scenario: 'peers', redisPersistence: { shared, private: own } });
  const graphileDb = `${options.dbName}_graphile`;
  const variants: PeerVariant[] =
    durable === null ? ['peer', 'bullmq', 'graphile'] : ['peer', 'peer fsync', 'bullmq', 'graphile'];
  type Store = { queue: PeerQueue; roles: () => Promise<Record<string, readonly number[]>> };
  const queueOf = (variant: PeerVariant): Store => {
    if (variant === 'graphile') {
      const url = databaseUrl(options.databaseUrl, graphileDb);
      return {
        queue: { kind: 'graphile', serverUrl: options.databaseUrl, dbName: graphileDb },
        roles: async () => ({ postgres: await backendPids(url, graphileDb) }),
      };
    }
    if (variant === 'peer fsync' && durable !== null) {
      const pid = durable.pid;
      return { queue: { kind: 'bullmq', redis: durable.target, prefix }, roles: async () => ({ redis: [pid] }) };
    }
    const except = durable === null ? [] : [durable.pid];
    return { queue: { kind: 'bullmq', redis, prefix }, roles: async () => ({ redis: redisPids(except) }) };
  };
  return {
    variants,
    options(variant, receiver, tag, concurrency, connectionsPerOrigin: number) {
      const { queue, roles } = queueOf(variant);
      return {
        queue,
        concurrency,
        connectionsPerOrigin,
        ingest: variant !== 'bullmq',
        tag,
        logDir: base.logDir,
        receiver,
        payloadBytes: options.payloadBytes,
        publishInFlight: options.sizes.publishInFlight,
        waitTimeoutMs: options.sizes.waitTimeoutMs,
        storeRoles: roles,
      };
    },
    async close() {
      const left = await deleteKeys(redis, prefix).catch(() => -1);
      ctx.log(`  peers: deleted ${left < 0 ? 'no (Redis unreachable)' : left} leftover keys under ${prefix}:*`);
      await durable?.stop();
      await dropDatabase(options.databaseUrl, graphileDb).catch(() => undefined);
    },
  };
}
