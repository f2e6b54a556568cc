/**
 * Shared pieces of the receiver kit's tests: requests signed with the public `standardwebhooks` signer, a Redis
 * client whose keys carry a prefix of their own (deleted afterwards), and a database of its own on the
 * PostgreSQL server.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { encodeSecret } from '../../src/domain/signing.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { REDIS_URL } from '../support/services.ts';

/** A fresh `whsec_` secret. */
export function newSecret(): string {
  return encodeSecret(randomBytes(32));
}

/** A request as Tidings would send it: Standard Webhooks headers over `body`, signed with `secret`. */
export function signed(
  secret: string,
  options: { id?: string; body?: string; timestampSeconds?: number } = {},
): { headers: Record<string, string>; body: Buffer } {
  const id = options.id ?? `msg_${randomBytes(8).toString('hex')}`;
  const body = options.body ?? JSON.stringify({ order: id });
  const seconds = options.timestampSeconds ?? Math.floor(Date.now() / 1000);
  const signature = new Webhook(secret).sign(id, new Date(seconds * 1000), body);
  return {
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(seconds),
      'webhook-signature': signature,
      'content-type': 'application/json',
    },
    body: Buffer.from(body),
  };
}

/**
 * Redis (REDIS_URL of test/support/services.ts) with a unique key prefix; `cleanup()` deletes every key under it
 * and disconnects.
 */
export interface TestRedis {
  readonly redis: Redis;
  readonly prefix: string;
  cleanup(): Promise<void>;
}

export async function testRedis(): Promise<TestRedis> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const prefix = `tidings-test:${randomBytes(6).toString('hex')}:`;
  return {
    redis,
    prefix,
    async cleanup() {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      redis.disconnect();
    },
  };
}

/** An empty database of its own on the PostgreSQL server, with a pool on it. */
export async function testPostgres(): Promise<{ database: TestDatabase; pool: pg.Pool; stop(): Promise<void> }> {
  const database = await freshServerDatabase({ migrate: false });
  const pool = new pg.Pool({ connectionString: database.url!, max: 6 });
  return {
    database,
    pool,
    async stop() {
      await pool.end();
      await database.drop();
    },
  };
}
