/**
 * The receipt stores of @tidings/receiver (packages/receiver-kit): one contract for memory, PostgreSQL and Redis
 * (run once; done after; a throw gives the claim up; in_progress while running; claimable again past the ttl),
 * then what each store adds — the PostgreSQL transaction shared with the handler, and what a receiver process
 * killed inside its handler leaves behind in PostgreSQL and in Redis.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { memoryStore } from '../../packages/receiver-kit/src/stores/memory.ts';
import {
  createReceiptsTable,
  postgresStore,
  receiptsTableSql,
} from '../../packages/receiver-kit/src/stores/postgres.ts';
import { redisStore } from '../../packages/receiver-kit/src/stores/redis.ts';
import type { ReceiptStore } from '../../packages/receiver-kit/src/store.ts';
import { deferred } from '../support/deferred.ts';
import { testPostgres, testRedis, type TestRedis } from './support.ts';

const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
const TABLE = 'kit_receipts';
const newId = (): string => `msg_${randomBytes(8).toString('hex')}`;

/** One store under the contract, and how to make a completed id's receipt expire without waiting. */
interface Subject {
  readonly store: ReceiptStore<unknown>;
  expire(id: string): Promise<void>;
}

let clockMs = Date.UTC(2026, 0, 1);
let postgres: Awaited<ReturnType<typeof testPostgres>>;
let redis: TestRedis;
const subjects: Record<string, Subject> = {};

before(async () => {
  postgres = await testPostgres();
  await createReceiptsTable(postgres.pool, TABLE);
  await postgres.pool.query('CREATE TABLE kit_effects (webhook_id text NOT NULL)');
  redis = await testRedis();
  subjects.memory = {
    store: memoryStore({ nowMs: () => clockMs, leaseMs: 10_000, ttlMs: 60_000 }),
    expire: async () => {
      clockMs += 60_001;
    },
  };
  subjects.postgres = {
    store: postgresStore({ pool: postgres.pool, table: TABLE }),
    // Moves the row's expiry into the past (the store compares with the database clock).
    expire: async (id) => {
      await postgres.pool.query(`UPDATE ${TABLE} SET expires_at = now() - interval '1 second' WHERE webhook_id = $1`, [
        id,
      ]);
    },
  };
  subjects.redis = {
    store: redisStore({ redis: redis.redis, keyPrefix: redis.prefix }),
    expire: async (id) => {
      await redis.redis.del(redis.prefix + id);
    },
  };
});
after(async () => {
  await redis?.cleanup();
  await postgres?.stop();
});

for (const name of ['memory', 'postgres', 'redis'] as const) {
  describe(`${name} store`, () => {
    test('runs the work once; a second call for the id answers done without running it', async () => {
      const { store } = subjects[name]!;
      const id = newId();
      let runs = 0;
      assert.deepEqual(await store.once(id, async () => ++runs), { status: 'ran', value: 1 });
      assert.deepEqual(await store.once(id, async () => ++runs), { status: 'done' });
      assert.equal(runs, 1);
    });

    test('a work that throws gives its claim up: the next call for the id runs it', async () => {
      const { store } = subjects[name]!;
      const id = newId();
      await assert.rejects(
        store.once(id, async () => {
          throw new Error('handler down');
        }),
        /handler down/,
      );
      assert.deepEqual(await store.once(id, async () => 'second'), { status: 'ran', value: 'second' });
    });

    test(
      'a call while the first is running answers in_progress with ' + 'a Retry-After; after it completes, done',
      async () => {
        const { store } = subjects[name]!;
        const id = newId();
        const running = deferred();
        const release = deferred();
        const first = store.once(id, async () => {
          running.resolve();
          await release.promise;
          return 'first';
        });
        await running.promise;
        const second = await store.once(id, async () => 'second');
        assert.equal(second.status, 'in_progress');
        assert.ok(second.status === 'in_progress' && second.retryAfterSeconds >= 1);
        release.resolve();
        assert.deepEqual(await first, { status: 'ran', value: 'first' });
        assert.deepEqual(await store.once(id, async () => 'third'), { status: 'done' });
      },
    );

    test('a receipt past its ttl is claimable again', async () => {
      const subject = subjects[name]!;
      const id = newId();
      await subject.store.once(id, async () => 1);
      await subject.expire(id);
      assert.deepEqual(await subject.store.once(id, async () => 2), { status: 'ran', value: 2 });
    });
  });
}

test('memory store: a claim whose handler never ends is claimable again after leaseMs (manual clock)', async () => {
  const store = memoryStore({ nowMs: () => clockMs, leaseMs: 5_000 });
  const id = newId();
  const running = deferred();
  void store.once(id, async () => {
    running.resolve();
    await new Promise(() => undefined);
  });
  await running.promise;
  const held = await store.once(id, async () => 'retry');
  assert.deepEqual(held, { status: 'in_progress', retryAfterSeconds: 5 });
  clockMs += 5_000;
  assert.deepEqual(await store.once(id, async () => 'retry'), { status: 'ran', value: 'retry' });
});

describe('postgres store', () => {
  test(
    'what the handler writes through the given client commits ' + 'with the receipt; a throw rolls both back',
    async () => {
      const store = postgresStore({ pool: postgres.pool, table: TABLE });
      const id = newId();
      const effect = async (client: { query(text: string, values: unknown[]): Promise<unknown> }): Promise<void> => {
        await client.query('INSERT INTO kit_effects (webhook_id) VALUES ($1)', [id]);
      };
      await assert.rejects(
        store.once(id, async (client) => {
          await effect(client);
          throw new Error('after the write');
        }),
      );
      const count = async (sql: string): Promise<number> => Number((await postgres.pool.query(sql, [id])).rows[0].n);
      assert.equal(
        await count('SELECT count(*) AS n FROM kit_effects WHERE webhook_id = $1'),
        0,
        'the write was rolled back',
      );
      assert.equal(await count(`SELECT count(*) AS n FROM ${TABLE} WHERE webhook_id = $1`), 0, 'no receipt either');
      assert.equal((await store.once(id, effect)).status, 'ran');
      assert.equal((await store.once(id, effect)).status, 'done');
      assert.equal(
        await count('SELECT count(*) AS n FROM kit_effects WHERE webhook_id = $1'),
        1,
        'one write, one receipt',
      );
    },
  );

  test('a receiver killed inside its handler leaves no receipt and no write: the retry runs at once', async () => {
    const id = newId();
    await killInsideHandler(['postgres', postgres.database.url!, TABLE, id]);
    const store = postgresStore({ pool: postgres.pool, table: TABLE });
    // The server ends the dead connection's transaction when it sees the socket close; until then the id is held.
    let outcome = await store.once(id, async () => 'retry');
    for (let i = 0; outcome.status === 'in_progress' && i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      outcome = await store.once(id, async () => 'retry');
    }
    assert.deepEqual(outcome, { status: 'ran', value: 'retry' });
    assert.equal(
      (await postgres.pool.query('SELECT count(*)::int AS n FROM kit_effects WHERE webhook_id = $1', [id])).rows[0].n,
      0,
    );
  });

  test('prune deletes expired receipts only; a table name that is not an identifier is refused', async () => {
    const store = postgresStore({ pool: postgres.pool, table: TABLE });
    const [kept, expired] = [newId(), newId()];
    await store.once(kept, async () => 1);
    await store.once(expired, async () => 1);
    await subjects.postgres!.expire(expired);
    assert.ok((await store.prune()) >= 1);
    const left = (
      await postgres.pool.query(`SELECT webhook_id FROM ${TABLE} WHERE webhook_id = ANY($1)`, [[kept, expired]])
    ).rows;
    assert.deepEqual(
      left.map((r) => r.webhook_id),
      [kept],
    );
    assert.throws(() => receiptsTableSql('receipts; DROP TABLE x'), /table must be a name or schema\.name/);
    assert.throws(() => postgresStore({ pool: postgres.pool, table: 'a.b.c' }), /table must be/);
  });
});

describe('redis store', () => {
  test('a receiver killed inside its handler holds the id for its lease, then the retry runs it', async () => {
    const id = newId();
    const leaseMs = 400;
    await killInsideHandler(['redis', redis.prefix, String(leaseMs), id]);
    const store = redisStore({ redis: redis.redis, keyPrefix: redis.prefix, leaseMs });
    const held = await store.once(id, async () => 'retry');
    assert.deepEqual(held, { status: 'in_progress', retryAfterSeconds: 1 });
    // Waits for the lease to end in Redis (the key's expiry), bounded.
    for (let i = 0; i < 100 && (await redis.redis.exists(redis.prefix + id)) === 1; i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(await store.once(id, async () => 'retry'), { status: 'ran', value: 'retry' });
    assert.equal(await redis.redis.get(redis.prefix + id), 'done');
  });

  test('a handler slower than the lease renews it: no second run meanwhile', async () => {
    const store = redisStore({ redis: redis.redis, keyPrefix: redis.prefix, leaseMs: 300 });
    const id = newId();
    const running = deferred();
    const release = deferred();
    const first = store.once(id, async () => {
      running.resolve();
      await release.promise;
    });
    await running.promise;
    // Past two leases of wall time the key is still held (bounded: 900 ms).
    const startedAt = Date.now();
    while (Date.now() - startedAt < 900) {
      assert.equal((await store.once(id, async () => 'second')).status, 'in_progress');
      await new Promise((r) => setTimeout(r, 50));
    }
    release.resolve();
    assert.equal((await first).status, 'ran');
  });
});

/** Starts the crash child, waits until its handler runs, kills it with SIGKILL and waits for its exit. */
async function killInsideHandler(args: string[]): Promise<void> {
  const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the crash child did not reach its handler in 20 s')), 20_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('in handler')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the crash child exited with ${code}`));
      });
    });
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}
