/**
 * A receiver process that dies inside its handler (test/receiver-kit/stores.test.ts): it claims one id in the
 * store named by its arguments, writes "in handler" on stdout once the handler runs, and waits there until the
 * test kills it with SIGKILL. Arguments: `postgres <database url> <table> <id>` or
 * `redis <key prefix> <lease ms> <id>`.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { postgresStore } from '../../packages/receiver-kit/src/stores/postgres.ts';
import { redisStore } from '../../packages/receiver-kit/src/stores/redis.ts';
import { REDIS_URL } from '../support/services.ts';

const [kind, where, option, id] = process.argv.slice(2);
const forever = new Promise<never>(() => undefined);
const keepAlive = setInterval(() => undefined, 60_000);
if (kind === 'postgres') {
  const pool = new pg.Pool({ connectionString: where, max: 1 });
  await postgresStore({ pool, table: option! }).once(id!, async (client) => {
    await client.query(`INSERT INTO kit_effects (webhook_id) VALUES ($1)`, [id]);
    process.stdout.write('in handler\n');
    return forever;
  });
} else {
  const redis = new Redis(REDIS_URL);
  await redisStore({ redis, keyPrefix: where!, leaseMs: Number(option) }).once(id!, async () => {
    process.stdout.write('in handler\n');
    return forever;
  });
}
clearInterval(keepAlive);
