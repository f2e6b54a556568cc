/**
 * The peers' Redis connections, on ioredis (the client BullMQ documents). BullMQ needs
 * `maxRetriesPerRequest: null` on the connections of its workers and queues.
 */
import { Redis, type RedisOptions } from 'ioredis';

/** Where the peers' Redis is: host, port and database index. */
export interface RedisTarget {
  readonly host: string;
  readonly port: number;
  readonly db: number;
}

/**
 * Parses `--redis-url` (`redis://host:port/db`).
 * @throws Error for another scheme or a database index that is not a non-negative integer
 */
export function redisTarget(url: string): RedisTarget {
  const u = new URL(url);
  if (u.protocol !== 'redis:') throw new Error(`--redis-url must be a redis:// URL, not "${url}"`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new Error(`--redis-url: bad database index in "${url}"`);
  return { host: u.hostname || '127.0.0.1', port: u.port === '' ? 6379 : Number(u.port), db };
}

/** A new connection to `target`, as BullMQ wants it (no per-request retry limit); `extra` adds ioredis options. */
export function redisConnection(target: RedisTarget, extra: RedisOptions = {}): Redis {
  return new Redis({ host: target.host, port: target.port, db: target.db, maxRetriesPerRequest: null, ...extra });
}
