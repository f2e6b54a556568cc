import { randomUUID } from 'node:crypto';
import { DEFAULT_LEASE_MS, DEFAULT_TTL_MS, positiveMs, retryAfterSeconds, type ReceiptStore } from '../store.ts';

/** What the store needs of a Redis client (an `ioredis` `Redis` or `Cluster` fits). */
export interface RedisLike {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  readonly redis: RedisLike;
  /** Prefix of every key (default `tidings:receipt:`); the key of a message is the prefix + its `webhook-id`. */
  readonly keyPrefix?: string;
  /** How long a handled id is remembered, ms (default 7 days). */
  readonly ttlMs?: number;
  /**
   * How long a claim holds the id, ms (default 30 s): a handler that crashes leaves its id claimable again after
   * at most this long. While the handler runs, the lease is renewed every third of it, so a slow handler keeps it.
   */
  readonly leaseMs?: number;
}

/** The value of a key whose handler completed. A claim's value is `progress:<random token>`. */
export const DONE = 'done';

// KEYS[1] = key, ARGV[1] = claim token, ARGV[2] = lease ms. SET NX with the lease; when taken: {0, value, ttl ms}.
const CLAIM = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, '', 0} end
return {0, redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1])}`;
// KEYS[1] = key, ARGV[1] = claim token, ARGV[2] = ttl ms. Marks the id done unless another claim took it over.
const FINISH = `local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or not v then redis.call('SET', KEYS[1], '${DONE}', 'PX', ARGV[2]) return 1 end
return 0`;
// KEYS[1] = key, ARGV[1] = claim token. Gives the claim up (the handler failed) if it is still this one.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
// KEYS[1] = key, ARGV[1] = claim token, ARGV[2] = lease ms. Renews the lease of a claim that is still this one.
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/**
 * A {@link ReceiptStore} on Redis: `SET key progress:<token> NX PX leaseMs` claims the id; when the handler
 * completes the key becomes `done` for `ttlMs`; when it throws the key is deleted, so the retry runs it again.
 * A second request while the key says `progress` gets `in_progress` with the lease's remaining time; one that
 * finds `done` gets `done`. Each step is one Lua script, atomic on the key.
 *
 * The handler's side effect and the `done` mark are two writes: a crash between them (after the effect, before
 * the mark) lets the retry after the lease run the handler again. Make the effect idempotent where that
 * matters, or use the PostgreSQL store, which commits both in one transaction.
 */
export function redisStore(options: RedisStoreOptions): ReceiptStore<undefined> {
  const prefix = options.keyPrefix ?? 'tidings:receipt:';
  const ttlMs = positiveMs('ttlMs', options.ttlMs ?? DEFAULT_TTL_MS);
  const leaseMs = positiveMs('leaseMs', options.leaseMs ?? DEFAULT_LEASE_MS);
  const { redis } = options;
  return {
    async once(id, work) {
      const key = prefix + id;
      const token = `progress:${randomUUID()}`;
      const [claimed, value, pttl] = (await redis.eval(CLAIM, 1, key, token, leaseMs)) as [number, string, number];
      if (claimed !== 1) {
        if (value === DONE) return { status: 'done' };
        return { status: 'in_progress', retryAfterSeconds: retryAfterSeconds(pttl > 0 ? pttl : 1000) };
      }
      const renew = setInterval(
        () => {
          redis.eval(EXTEND, 1, key, token, leaseMs).catch(() => undefined);
        },
        Math.max(1, Math.floor(leaseMs / 3)),
      );
      renew.unref();
      let result;
      try {
        result = await work(undefined);
      } catch (error) {
        clearInterval(renew);
        await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
        throw error;
      }
      clearInterval(renew);
      await redis.eval(FINISH, 1, key, token, ttlMs);
      return { status: 'ran', value: result };
    },
  };
}
