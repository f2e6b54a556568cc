/**
 * Small statements (src/adapters/postgres/db.ts; docs/adr/0016-hot-path-cost.md, decision 24): a publish
 * statement of few messages and a record of few outcomes run on the stores' `small` pool, and a pool opened
 * with `genericPlans` plans them once: a generic plan from their first execution, where a connection planning
 * as PostgreSQL chooses plans each of their first five executions, and every later one whose values make a
 * custom plan look cheaper, with the values. Larger statements run on the stores' own pool. On the embedded
 * engine, whose one session runs everything, the small statements take the setting in a transaction of their
 * own (`withGenericPlans`). `pg_prepared_statements` is read on the connection that ran the statements.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDb, SMALL_STATEMENT_ROWS, withGenericPlans, type Db } from '../../src/adapters/postgres/db.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runAutocommit } from '../../src/adapters/postgres/tx.ts';
import type { NewMessage } from '../../src/ports/message-store.ts';
import { testCipher } from '../support/cipher.ts';
import { freshEmbeddedDatabase, freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint, succeededRecord } from '../support/fixtures.ts';

const MESSAGES = 8;
let t: TestDatabase;
before(async () => {
  t = await freshServerDatabase();
});
after(async () => {
  await t.drop();
});

/** Per prepared statement of the one connection of `db`: how often it was planned generically and with values. */
async function planCounts(db: Db): Promise<Map<string, { generic: number; custom: number }>> {
  const rows = (
    await db.query<{ name: string; generic_plans: string; custom_plans: string }>(
      `SELECT name, generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name LIKE 'tidings\\_%'`,
    )
  ).rows;
  return new Map(rows.map((r) => [r.name, { generic: Number(r.generic_plans), custom: Number(r.custom_plans) }]));
}

/**
 * Publishes {@link MESSAGES} messages one at a time (each its own publish statement), then claims and records
 * them one at a time, through stores whose small statements go to a one-connection pool opened with
 * `genericPlans` as given; returns that pool's plan counts.
 */
async function deliverOneByOne(genericPlans: boolean): Promise<Map<string, { generic: number; custom: number }>> {
  const db = await openDb({ databaseUrl: t.url, dataDir: '', poolSize: 1, genericPlans });
  try {
    const small = { db, maxRows: SMALL_STATEMENT_ROWS };
    const cipher = testCipher();
    const appId = await insertApp(t.db);
    await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
    const messages = createPgMessageStore(t.db, cipher, () => undefined, { small });
    for (let i = 0; i < MESSAGES; i += 1) {
      await runAutocommit(t.db, (tx) => messages.insert(tx, message(appId), null));
    }
    const deliveries = createPgDeliveryStore(t.db, cipher, { small });
    for (let i = 0; i < MESSAGES; i += 1) {
      const claimed = (
        await deliveries.claim({ dispatcherId: 'D', limit: 1, leaseMs: 60_000, maxReclaims: 5, now: null })
      ).deliveries;
      assert.equal(claimed.length, 1, `delivery ${i} claimed`);
      assert.equal((await deliveries.recordAttempts(claimed.map(succeededRecord), null)).recorded.length, 1);
    }
    return await planCounts(db);
  } finally {
    await db.close();
  }
}

let serial = 0;
function message(appId: string): NewMessage {
  serial += 1;
  return {
    id: `msg_small${String(serial).padStart(18, '0')}`,
    appId,
    eventId: null,
    eventType: 'invoice.paid',
    channels: null,
    tags: null,
    payload: Buffer.from('{}'),
    retentionHours: null,
  };
}

const HOT = ['tidings_publish', 'tidings_record_attempts'] as const;

test(
  'publishes and records of one row run on the small pool, which plans them once, for any values, when opened ' +
    'with genericPlans',
  async () => {
    const counts = await deliverOneByOne(true);
    for (const name of HOT) {
      const c = counts.get(name);
      assert.ok(c !== undefined, `${name} was prepared on the connection`);
      assert.deepEqual(c, { generic: MESSAGES, custom: 0 }, `${name}: every execution ran its generic plan`);
    }
  },
);

test(
  'a small pool opened without genericPlans plans them with their ' + 'values, the first five executions at least',
  async () => {
    const counts = await deliverOneByOne(false);
    for (const name of HOT) {
      const c = counts.get(name);
      assert.ok(c !== undefined && c.custom >= 5, `${name} planned with values: ${JSON.stringify(c)}`);
    }
  },
);

test(
  'groups and record batches of up to SMALL_STATEMENT_ROWS rows run on the small pool, larger ones and lone ' +
    "messages on the store's own",
  async () => {
    const db = await openDb({ databaseUrl: t.url, dataDir: '', poolSize: 1, genericPlans: true });
    try {
      const small = { db, maxRows: SMALL_STATEMENT_ROWS };
      const cipher = testCipher();
      const appId = await insertApp(t.db);
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
      const ran = async (name: string): Promise<number> => (await planCounts(db)).get(name)?.generic ?? 0;
      // One group per call of `group`: the batcher takes every call made before its statement starts.
      const messages = createPgMessageStore(t.db, cipher, () => undefined, {
        small,
        groupKeyed: true,
        maxGroupedPayloadBytes: 64,
        limits: { maxBatch: 100, maxInFlight: 1 },
      });
      const group = (n: number) =>
        Promise.all(
          Array.from({ length: n }, () => runAutocommit(t.db, (tx) => messages.insert(tx, message(appId), null))),
        );
      await group(SMALL_STATEMENT_ROWS);
      assert.equal(await ran('tidings_publish'), 1, 'a group of SMALL_STATEMENT_ROWS messages ran on the small pool');
      await group(SMALL_STATEMENT_ROWS + 1);
      assert.equal(await ran('tidings_publish'), 1, "a larger group ran on the store's pool");
      // A payload over the group limit is published alone, on the store's pool (its statements are not bounded
      // by the batcher's groups in flight).
      await runAutocommit(t.db, (tx) =>
        messages.insert(
          tx,
          { ...message(appId), payload: Buffer.from(JSON.stringify({ big: 'x'.repeat(100) })) },
          null,
        ),
      );
      assert.equal(await ran('tidings_publish'), 1, "a message published alone ran on the store's pool");
      const keyed = (n: number) =>
        Promise.all(
          Array.from({ length: n }, () => {
            const m = message(appId);
            const scope = {
              owner: 'admin',
              route: 'POST /api/v1/app/:appId/msg',
              key: `key-${m.id}`,
              fingerprint: `fp-${m.id}`,
              ttlMs: 60_000,
              waitMs: 5_000,
            };
            return messages.insertKeyed(scope, m, null, { status: 202, body: { id: m.id, timestamp: null } });
          }),
        );
      assert.ok(
        (await keyed(2)).every((r) => r !== null),
        'the keyed group stored its messages',
      );
      assert.equal(await ran('tidings_publish_keyed'), 1, 'a keyed group of 2 ran on the small pool');
      assert.ok((await keyed(SMALL_STATEMENT_ROWS + 1)).every((r) => r !== null));
      assert.equal(await ran('tidings_publish_keyed'), 1, "a larger keyed group ran on the store's pool");

      const deliveries = createPgDeliveryStore(t.db, cipher, { small });
      const claim = async (n: number) =>
        (await deliveries.claim({ dispatcherId: 'D', limit: n, leaseMs: 60_000, maxReclaims: 5, now: null }))
          .deliveries;
      const four = await claim(SMALL_STATEMENT_ROWS);
      assert.equal(
        (await deliveries.recordAttempts(four.map(succeededRecord), null)).recorded.length,
        SMALL_STATEMENT_ROWS,
      );
      assert.equal(
        await ran('tidings_record_attempts'),
        1,
        'a record of SMALL_STATEMENT_ROWS outcomes ran on the small pool',
      );
      const five = await claim(SMALL_STATEMENT_ROWS + 1);
      assert.equal(five.length, SMALL_STATEMENT_ROWS + 1);
      assert.equal(
        (await deliveries.recordAttempts(five.map(succeededRecord), null)).recorded.length,
        SMALL_STATEMENT_ROWS + 1,
      );
      assert.equal(await ran('tidings_record_attempts'), 1, "a larger record ran on the store's pool");
    } finally {
      await db.close();
    }
  },
);

test(
  'on the embedded engine the small statements run with generic plans in their own transaction, and the session ' +
    'keeps its setting',
  async () => {
    const e = await freshEmbeddedDatabase();
    try {
      const small = { db: withGenericPlans(e.db), maxRows: SMALL_STATEMENT_ROWS };
      const cipher = testCipher();
      const appId = await insertApp(e.db);
      await insertEndpoint(e.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
      const messages = createPgMessageStore(e.db, cipher, () => undefined, { small });
      for (let i = 0; i < MESSAGES; i += 1)
        await runAutocommit(e.db, (tx) => messages.insert(tx, message(appId), null));
      const deliveries = createPgDeliveryStore(e.db, cipher, { small });
      for (let i = 0; i < MESSAGES; i += 1) {
        const claimed = (
          await deliveries.claim({ dispatcherId: 'D', limit: 1, leaseMs: 60_000, maxReclaims: 5, now: null })
        ).deliveries;
        assert.equal((await deliveries.recordAttempts(claimed.map(succeededRecord), null)).recorded.length, 1);
      }
      const counts = await planCounts(e.db);
      for (const name of HOT)
        assert.deepEqual(
          counts.get(name),
          { generic: MESSAGES, custom: 0 },
          `${name}: every execution ran its generic plan`,
        );
      assert.equal(
        (await e.db.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows[0]!.plan_cache_mode,
        'auto',
        'the session setting is untouched',
      );
      assert.equal(
        (await e.db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages')).rows[0]!.n,
        MESSAGES,
        'every message committed',
      );
    } finally {
      await e.drop();
    }
  },
);
