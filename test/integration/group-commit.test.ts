/**
 * Group commit (ADR 0007) on both engines: concurrent publishes outside a transaction share one statement,
 * each call still gets its own answer (its row, its 409, its own failure), lookups are grouped the same way,
 * and a batcher never runs more statements at once than its limit. Keyed publishes with fresh keys share one
 * transaction with their keys and answers; any other keyed call leaves the group with nothing stored.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, test } from 'node:test';
import { statementBatcher } from '../../src/adapters/postgres/batching.ts';
import { createPgApplicationStore } from '../../src/adapters/postgres/application/application-store.ts';
import { createPgEventTypeStore } from '../../src/adapters/postgres/event-type/event-type-store.ts';
import type { Db, Prepared } from '../../src/adapters/postgres/db.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runAutocommit, runTx } from '../../src/adapters/postgres/tx.ts';
import { AppError } from '../../src/domain/errors.ts';
import type { IdempotencyScope } from '../../src/ports/idempotency-store.ts';
import type { MessageStore, NewMessage } from '../../src/ports/message-store.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';

/** `db` with every statement counted by its prepared name (or its first words). */
function counting(db: Db): { readonly db: Db; readonly calls: (name: string) => number } {
  const counts = new Map<string, number>();
  const counted: Db = {
    ...db,
    query: (text, params) => {
      const name = typeof text === 'string' ? text.trim().slice(0, 40) : (text as Prepared).name;
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return db.query(text, params);
    },
  };
  return { db: counted, calls: (name) => counts.get(name) ?? 0 };
}

const scope = (key: string): IdempotencyScope => ({
  owner: 'admin',
  route: 'POST /api/v1/app/:appId/msg',
  key,
  fingerprint: `fp-${key}`,
  ttlMs: 60_000,
  waitMs: 5_000,
});
/** A grouped keyed publish of `m` under `key`, its answer naming the message (the timestamp left to the store). */
const keyed = (store: MessageStore, key: string, m: NewMessage) =>
  store.insertKeyed(scope(key), m, null, { status: 202, body: { id: m.id, timestamp: null } });

let serial = 0;
function message(appId: string, fields: Partial<NewMessage> = {}): NewMessage {
  serial += 1;
  return {
    id: `msg_group${String(serial).padStart(20, '0')}`,
    appId,
    eventId: null,
    eventType: 'invoice.paid',
    channels: null,
    tags: null,
    payload: Buffer.from(`{"n":${serial}}`),
    retentionHours: null,
    ...fields,
  };
}

for (const engine of ENGINES) {
  describe(`group commit on ${engine.name}`, () => {
    let t: TestDatabase;
    const cipher = testCipher();
    before(async () => {
      t = await engine.fresh();
    });
    after(async () => {
      await t.drop();
    });

    test(
      '50 concurrent publishes share one statement; each gets its own row, deliveries, timeline and after-commit ' +
        'wake',
      async () => {
        const appId = await insertApp(t.db);
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/b', filterTypes: ['other.type'] });
        const { db, calls } = counting(t.db);
        let wakes = 0;
        const store = createPgMessageStore(
          db,
          cipher,
          () => {
            wakes += 1;
          },
          { groupKeyed: true, limits: { maxBatch: 256, maxInFlight: 2 } },
        );
        // Payloads of 50 different lengths: the statement takes them as one bytea and cuts it at given offsets.
        const messages = Array.from({ length: 50 }, (_, i) =>
          message(appId, {
            channels: i % 2 === 0 ? ['even'] : null,
            tags: [`t${i}`],
            payload: Buffer.from(`{"n":${i},"pad":"${'x'.repeat(i * 7)}"}`),
          }),
        );
        const results = await Promise.all(messages.map((m) => runAutocommit(db, (tx) => store.insert(tx, m, null))));
        assert.equal(calls('tidings_publish'), 1, 'one statement for the whole group');
        assert.deepEqual(
          results.map((r) => r.message.id),
          messages.map((m) => m.id),
        );
        assert.ok(
          results.every((r) => r.deliveries === 1),
          'each message fans out to the one subscribed endpoint',
        );
        assert.ok(results.every((r) => r.message.createdAt instanceof Date));
        assert.equal(wakes, 50, 'each call runs its own after-commit hook');
        const stored = await t.db.query<{
          id: string;
          channels: string[] | null;
          tags: string[];
          payload: Buffer;
          payload_key_id: string;
          deliveries: number;
          events: number;
        }>(
          `SELECT m.id, m.channels, m.tags, m.payload, m.payload_key_id, count(DISTINCT d.id)::int AS deliveries,
            count(e.*)::int AS events
         FROM messages m JOIN deliveries d ON d.message_id = m.id JOIN delivery_events e ON e.delivery_id = d.id
         WHERE m.app_id = $1 GROUP BY m.id ORDER BY m.id`,
          [appId],
        );
        assert.equal(stored.rowCount, 50);
        for (const [i, row] of stored.rows.entries()) {
          assert.equal(
            cipher.decrypt(row.payload_key_id, row.payload, row.id).toString('utf8'),
            Buffer.from(messages[i]!.payload).toString('utf8'),
            `message ${i}: its own payload`,
          );
          assert.deepEqual(row.channels, i % 2 === 0 ? ['even'] : null);
          assert.deepEqual(row.tags, [`t${i}`]);
          assert.equal(row.deliveries, 1);
          assert.equal(row.events, 1, 'one "published" timeline row per delivery');
        }
      },
    );

    test('a taken eventId fails its own call with 409; the rest of the group is stored', async () => {
      const appId = await insertApp(t.db);
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
      const store = createPgMessageStore(t.db, cipher, () => undefined, { groupKeyed: true });
      await runAutocommit(t.db, (tx) => store.insert(tx, message(appId, { eventId: 'evt-taken' }), null));
      const group = [
        message(appId),
        message(appId, { eventId: 'evt-taken' }),
        message(appId, { eventId: 'evt-twice' }),
        message(appId, { eventId: 'evt-twice' }),
        message(appId),
      ];
      const settled = await Promise.allSettled(
        group.map((m) => runAutocommit(t.db, (tx) => store.insert(tx, m, null))),
      );
      assert.deepEqual(
        settled.map((s) => s.status),
        ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'],
      );
      for (const s of settled)
        if (s.status === 'rejected')
          assert.ok(s.reason instanceof AppError && s.reason.code === 'conflict', String(s.reason));
      const count = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE app_id = $1', [
        appId,
      ]);
      assert.equal(count.rows[0]!.n, 4);
    });

    test(
      'a message the database refuses (its application is gone) fails alone: the group is retried message by ' +
        'message',
      async () => {
        const appId = await insertApp(t.db);
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
        const { db, calls } = counting(t.db);
        const store = createPgMessageStore(db, cipher, () => undefined, { groupKeyed: true });
        const group = [message(appId), message('app_doesnotexist0000000000000'), message(appId)];
        const settled = await Promise.allSettled(
          group.map((m) => runAutocommit(db, (tx) => store.insert(tx, m, null))),
        );
        assert.deepEqual(
          settled.map((s) => s.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        );
        assert.equal(calls('tidings_publish'), 4, 'the refused group, then each message alone');
        const count = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE id = ANY ($1)', [
          group.map((m) => m.id),
        ]);
        assert.equal(count.rows[0]!.n, 2);
      },
    );

    test(
      'a message whose payload is above the grouping limit is published by a statement of its own; a keyed one ' +
        'takes the ordinary path',
      async () => {
        const appId = await insertApp(t.db);
        const { db, calls } = counting(t.db);
        const store = createPgMessageStore(db, cipher, () => undefined, {
          groupKeyed: true,
          maxGroupedPayloadBytes: 16,
        });
        const small = [message(appId, { payload: Buffer.from('{}') }), message(appId, { payload: Buffer.from('{}') })];
        const big = [
          message(appId, { payload: Buffer.from(`{"pad":"${'x'.repeat(32)}"}`) }),
          message(appId, { payload: Buffer.from(`{"pad":"${'y'.repeat(32)}"}`) }),
        ];
        const results = await Promise.all(
          [...small, ...big].map((m) => runAutocommit(db, (tx) => store.insert(tx, m, null))),
        );
        assert.equal(results.length, 4);
        assert.equal(calls('tidings_publish'), 3, 'one group for the small ones, one statement per large one');
        assert.equal(
          await keyed(store, `group-big-${engine.name}`, message(appId, { payload: big[0]!.payload })),
          null,
        );
        const key = await t.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [`group-big-${engine.name}`]);
        assert.equal(key.rowCount, 0);
      },
    );

    test('a publish inside a transaction runs on that transaction and is undone with it', async () => {
      const appId = await insertApp(t.db);
      const store = createPgMessageStore(t.db, cipher, () => undefined, { groupKeyed: true });
      const m = message(appId);
      await assert.rejects(
        runTx(t.db, async (tx) => {
          await store.insert(tx, m, null);
          throw new Error('roll back');
        }),
        /roll back/,
      );
      const count = await t.db.query('SELECT 1 FROM messages WHERE id = $1', [m.id]);
      assert.equal(count.rowCount, 0);
    });

    test(
      'a statement the database refuses leaves the connection usable: the same prepared statement runs next ' +
        '(regression: it broke the embedded engine)',
      async () => {
        const divide = { name: 'tidings_test_divide', text: 'SELECT 10 / $1::int AS x' };
        await assert.rejects(t.db.query(divide, [0]), /division by zero/);
        assert.deepEqual((await t.db.query(divide, [2])).rows, [{ x: 5 }]);
        await assert.rejects(t.db.query(divide, [0]), /division by zero/);
        assert.deepEqual((await t.db.query(divide, [5])).rows, [{ x: 2 }]);
      },
    );

    test(
      'concurrent keyed publishes with fresh keys commit in one ' + 'transaction, each key with its stored answer',
      async () => {
        const appId = await insertApp(t.db);
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
        let wakes = 0;
        const store = createPgMessageStore(
          t.db,
          cipher,
          () => {
            wakes += 1;
          },
          { groupKeyed: true },
        );
        const keys = Array.from({ length: 30 }, (_, i) => `group-fresh-${engine.name}-${i}`);
        const results = await Promise.all(keys.map((k) => keyed(store, k, message(appId))));
        assert.ok(results.every((r) => r !== null && r.deliveries === 1 && r.answer.status === 202));
        assert.equal(wakes, 30);
        const rows = await t.db.query<{
          key: string;
          response_status: number;
          response_body: { id: string; timestamp: string };
          tx: string;
        }>(
          'SELECT key, response_status, response_body, xmin::text AS tx FROM idempotency_keys WHERE key = ANY ' +
            '($1) ORDER BY key',
          [keys],
        );
        assert.equal(rows.rowCount, 30);
        assert.equal(new Set(rows.rows.map((r) => r.tx)).size, 1, 'every key was written by one transaction');
        const created = await t.db.query<{ id: string; created_at: Date }>(
          'SELECT id, created_at FROM messages WHERE id = ANY ($1)',
          [results.map((r) => r!.message.id)],
        );
        for (const [i, key] of keys.entries()) {
          const row = rows.rows.find((r) => r.key === key)!;
          const result = results[i]!;
          assert.equal(row.response_status, 202);
          assert.equal(row.response_body.id, result.message.id, 'the stored answer names the message stored with it');
          // The statement wrote the timestamp: a replay answers it as the first answer did, and as the message is read
          // back.
          const createdAt = created.rows.find((m) => m.id === result.message.id)!.created_at.toISOString();
          assert.deepEqual(result.answer.body, { id: result.message.id, timestamp: createdAt });
          assert.equal(row.response_body.timestamp, createdAt);
          assert.equal(result.message.createdAt.toISOString(), createdAt);
        }
        const messages = await t.db.query<{ tx: string }>(
          'SELECT DISTINCT xmin::text AS tx FROM messages WHERE id = ANY ($1)',
          [results.map((r) => r!.message.id)],
        );
        assert.deepEqual(
          messages.rows.map((r) => r.tx),
          [rows.rows[0]!.tx],
          'the messages committed with their keys',
        );
      },
    );

    test(
      'a key that exists, a key given twice, a taken eventId and an eventId given twice leave the group with ' +
        'nothing stored; the rest commit',
      async () => {
        const appId = await insertApp(t.db);
        const store = createPgMessageStore(t.db, cipher, () => undefined, { groupKeyed: true });
        const k = (name: string) => `group-mixed-${engine.name}-${name}`;
        assert.notEqual(await keyed(store, k('existing'), message(appId)), null);
        await runAutocommit(t.db, (tx) => store.insert(tx, message(appId, { eventId: 'evt-taken-keyed' }), null));
        const group = [
          { key: k('fresh'), m: message(appId) },
          { key: k('existing'), m: message(appId) },
          { key: k('twice'), m: message(appId) },
          { key: k('twice'), m: message(appId) },
          { key: k('taken-event'), m: message(appId, { eventId: 'evt-taken-keyed' }) },
          { key: k('event-first'), m: message(appId, { eventId: 'evt-twice-keyed' }) },
          { key: k('event-second'), m: message(appId, { eventId: 'evt-twice-keyed' }) },
        ];
        const results = await Promise.all(group.map((g) => keyed(store, g.key, g.m)));
        assert.deepEqual(
          results.map((r) => r !== null),
          [true, false, true, false, false, true, false],
        );
        const keys = await t.db.query<{ key: string }>(
          'SELECT key FROM idempotency_keys WHERE key LIKE $1 ORDER BY key',
          [`group-mixed-${engine.name}-%`],
        );
        assert.deepEqual(
          keys.rows.map((r) => r.key),
          [k('event-first'), k('existing'), k('fresh'), k('twice')],
          'the calls whose eventId is taken claimed no key',
        );
        const stored = await t.db.query<{ id: string }>('SELECT id FROM messages WHERE id = ANY ($1)', [
          group.map((g) => g.m.id),
        ]);
        assert.deepEqual(stored.rows.map((r) => r.id).sort(), [group[0]!.m.id, group[2]!.m.id, group[5]!.m.id].sort());
      },
    );

    if (engine.name === 'server') {
      test(
        'two groups publishing the same eventIds in opposite orders never deadlock: each eventId is stored once, ' +
          'the other call gets 409',
        async () => {
          const appId = await insertApp(t.db);
          const { db, calls } = counting(t.db);
          const a = createPgMessageStore(db, cipher, () => undefined, { groupKeyed: true });
          const b = createPgMessageStore(db, cipher, () => undefined, { groupKeyed: true });
          const rounds = 10;
          for (let round = 0; round < rounds; round++) {
            const ids = Array.from({ length: 20 }, (_, i) => `dl-${round}-${i}`);
            const payload = Buffer.from(JSON.stringify({ pad: 'x'.repeat(20_000) }));
            const settled = await Promise.allSettled([
              ...ids.map((eventId) =>
                runAutocommit(db, (tx) => a.insert(tx, message(appId, { eventId, payload }), null)),
              ),
              ...[...ids]
                .reverse()
                .map((eventId) => runAutocommit(db, (tx) => b.insert(tx, message(appId, { eventId, payload }), null))),
            ]);
            for (const s of settled)
              if (s.status === 'rejected')
                assert.ok(s.reason instanceof AppError && s.reason.code === 'conflict', String(s.reason));
            assert.equal(
              settled.filter((s) => s.status === 'fulfilled').length,
              20,
              'each eventId stored by exactly one call',
            );
          }
          assert.equal(
            calls('tidings_publish'),
            2 * rounds,
            'one statement per group: no group was refused (a deadlock victim would be retried message by message)',
          );
          const count = await t.db.query<{ n: number }>(
            'SELECT count(DISTINCT event_id)::int AS n FROM messages WHERE app_id = $1',
            [appId],
          );
          assert.equal(count.rows[0]!.n, 20 * rounds);
        },
      );

      test(
        'a prepared statement made stale by a schema change fails once; the connection is then replaced and the ' +
          'statement runs (a live migration must not break publishing)',
        async () => {
          await t.db.query('CREATE TABLE stale_shape (a int)');
          await t.db.query('INSERT INTO stale_shape VALUES (1)');
          const read = { name: 'tidings_test_stale', text: 'SELECT * FROM stale_shape' };
          assert.deepEqual((await t.db.query(read)).rows, [{ a: 1 }]);
          await t.db.query('ALTER TABLE stale_shape ALTER COLUMN a TYPE text');
          await assert.rejects(t.db.query(read), /cached plan must not change result type/);
          assert.deepEqual((await t.db.query(read)).rows, [{ a: '1' }]);
          assert.deepEqual((await t.db.query(read)).rows, [{ a: '1' }]);
        },
      );

      test(
        'an eventId that a transaction in flight takes while a keyed group waits for it refuses the group: no ' +
          'key is stored without its message',
        async () => {
          const appId = await insertApp(t.db);
          // The group waits as long as the holder needs (not 50 ms), so that the holder commits while it waits.
          const store = createPgMessageStore(t.db, cipher, () => undefined, {
            groupKeyed: true,
            keyedLockTimeoutMs: 60_000,
          });
          let release!: () => void;
          const released = new Promise<void>((resolve) => {
            release = resolve;
          });
          let taken!: () => void;
          const held = new Promise<void>((resolve) => {
            taken = resolve;
          });
          const holding = runTx(t.db, async (tx) => {
            await store.insert(tx, message(appId, { eventId: 'evt-in-flight' }), null);
            taken();
            await released;
          });
          await held;
          const [late, bystander] = [message(appId, { eventId: 'evt-in-flight' }), message(appId)];
          const group = Promise.all([
            keyed(store, 'group-late-event', late),
            keyed(store, 'group-late-bystander', bystander),
          ]);
          // The group's statement is waiting for the holder's row (its snapshot did not see it), then the holder
          // commits.
          const waiting =
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
          for (let polls = 0; (await t.db.query(waiting)).rowCount === 0; polls++) {
            if (polls >= 10_000) {
              release();
              assert.fail('the group never waited for the holder');
            }
            await new Promise((resolve) => setImmediate(resolve));
          }
          release();
          await holding;
          assert.deepEqual(await group, [null, null], 'both calls take the ordinary path');
          const keys = await t.db.query('SELECT key FROM idempotency_keys WHERE key IN ($1, $2)', [
            'group-late-event',
            'group-late-bystander',
          ]);
          assert.equal(keys.rowCount, 0, 'no key was stored with the answer of a message that was not');
          const stored = await t.db.query('SELECT 1 FROM messages WHERE id = ANY ($1)', [[late.id, bystander.id]]);
          assert.equal(stored.rowCount, 0);
        },
      );

      test(
        'a key held by an in-flight request makes its group give up within the lock timeout: nothing of the ' +
          'group is stored',
        async () => {
          const appId = await insertApp(t.db);
          const store = createPgMessageStore(t.db, cipher, () => undefined, { groupKeyed: true });
          const holder = new pg.Client({ connectionString: t.url! });
          await holder.connect();
          try {
            await holder.query('BEGIN');
            await holder.query(
              `INSERT INTO idempotency_keys (owner, route, key, fingerprint, expires_at) VALUES ('admin', 'POST ` +
                `/api/v1/app/:appId/msg', 'group-held', 'fp', now() + interval '1 hour')`,
            );
            const [held, other] = [message(appId), message(appId)];
            const results = await Promise.all([
              keyed(store, 'group-held', held),
              keyed(store, 'group-bystander', other),
            ]);
            assert.deepEqual(results, [null, null]);
            const stored = await t.db.query(
              'SELECT 1 FROM messages WHERE id = ANY ($1) UNION ALL SELECT 1 FROM idempotency_keys WHERE key = $2',
              [[held.id, other.id], 'group-bystander'],
            );
            assert.equal(stored.rowCount, 0);
          } finally {
            await holder.query('ROLLBACK');
            await holder.end();
          }
        },
      );
    }

    test('application and event-type lookups made together share one statement and answer each ref', async () => {
      const appId = await insertApp(t.db);
      await t.db.query(`UPDATE applications SET uid = 'grouped-uid' WHERE id = $1`, [appId]);
      await t.db.query(`INSERT INTO event_types (name, description) VALUES ('grouped.type', 'd')`);
      const { db, calls } = counting(t.db);
      const apps = createPgApplicationStore(db);
      const types = createPgEventTypeStore(db);
      const [byId, byUid, missing, type, noType] = await Promise.all([
        apps.findApplication(appId),
        apps.findApplication('grouped-uid'),
        apps.findApplication('nope'),
        types.findEventType('grouped.type'),
        types.findEventType('no.such.type'),
      ]);
      assert.equal(byId?.id, appId);
      assert.equal(byUid?.id, appId);
      assert.equal(missing, null);
      assert.equal(type?.name, 'grouped.type');
      assert.equal(noType, null);
      assert.equal(calls('tidings_find_applications'), 1);
      assert.equal(calls('tidings_find_event_types'), 1);
    });
  });
}

describe('statementBatcher limits', () => {
  test(
    'never more statements at once than maxInFlight; calls made ' + 'meanwhile join the next group, up to maxBatch',
    async () => {
      let running = 0;
      let most = 0;
      const sizes: number[] = [];
      const release: (() => void)[] = [];
      const load = statementBatcher<number, number>({ maxBatch: 4, maxInFlight: 1 }, async (keys) => {
        running += 1;
        most = Math.max(most, running);
        sizes.push(keys.length);
        await new Promise<void>((resolve) => release.push(resolve));
        running -= 1;
        return keys.map((k) => k * 2);
      });
      const first = Promise.all([1, 2].map(load));
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(sizes, [2], 'the first group starts at the end of the turn');
      const later = Promise.all([3, 4, 5, 6, 7, 8, 9].map(load));
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(sizes, [2], 'calls made while a group runs wait for it');
      while (sizes.length < 3 || release.length > 0) {
        release.shift()?.();
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.deepEqual(await first, [2, 4]);
      assert.deepEqual(await later, [6, 8, 10, 12, 14, 16, 18]);
      assert.deepEqual(sizes, [2, 4, 3]);
      assert.equal(most, 1);
    },
  );
});
