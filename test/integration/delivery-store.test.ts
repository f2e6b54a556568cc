/**
 * The delivery store on real databases (docs/design.md#the-protocol): claim with SKIP LOCKED, leases,
 * reclaim after expiry, fencing, idempotent publish. Concurrent claims and the racing publish need two open
 * transactions and run on the PostgreSQL server only (the embedded engine is one session); the rest run on both.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, beforeEach, describe, test } from 'node:test';
import { CLAIM } from '../../src/adapters/postgres/delivery/delivery-sql.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgIdempotencyStore } from '../../src/adapters/postgres/idempotency/idempotency-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { AppError } from '../../src/domain/errors.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint, succeededRecord } from '../support/fixtures.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { deferred } from '../support/deferred.ts';

const LEASE_MS = 30_000;

for (const engine of ENGINES) {
  describe(`delivery store on ${engine.name}`, () => {
    let t: TestDatabase;
    const cipher = testCipher();
    const clock = new ManualClock();
    before(async () => {
      t = await engine.fresh();
    });
    after(async () => {
      await t.drop();
    });
    // Each test sees only its own due deliveries: claims are not scoped by application.
    beforeEach(async () => {
      await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
    });

    async function publishMany(appId: string, count: number): Promise<void> {
      const publisher = createPublisher({
        messages: createPgMessageStore(t.db, cipher, () => undefined),
        clock,
        random: cryptoRandom,
      });
      for (let i = 0; i < count; i++) {
        await runTx(t.db, (tx) =>
          publisher.publish(tx, {
            appId,
            eventType: 'user.created',
            eventId: null,
            channels: null,
            tags: null,
            payload: Buffer.from(`{"n":${i}}`),
            retentionHours: null,
          }),
        );
      }
    }

    test(
      'a dispatcher that claims and vanishes holds the delivery until its lease expires; another then reclaims ' +
        'it, counted',
      async () => {
        const appId = await insertApp(t.db);
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
        await publishMany(appId, 1);
        const store = createPgDeliveryStore(t.db, cipher);
        const a = await store.claim({
          dispatcherId: 'A',
          limit: 10,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: clock.sqlNow(),
        });
        assert.equal(a.deliveries.length, 1);
        clock.advance(LEASE_MS - 1);
        const during = await store.claim({
          dispatcherId: 'B',
          limit: 10,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: clock.sqlNow(),
        });
        assert.equal(during.deliveries.length, 0, 'nothing is claimable while the lease lives');
        clock.advance(2);
        const b = await store.claim({
          dispatcherId: 'B',
          limit: 10,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: clock.sqlNow(),
        });
        assert.equal(b.deliveries.length, 1);
        assert.equal(b.reclaimed, 1);
        assert.equal(b.deliveries[0]!.deliveryId, a.deliveries[0]!.deliveryId);
        assert.equal(BigInt(b.deliveries[0]!.fencingToken), BigInt(a.deliveries[0]!.fencingToken) + 1n);
        assert.equal(b.deliveries[0]!.attemptNumber, 1, 'a claim never charges an attempt');
        const res = await store.recordAttempts([succeededRecord(b.deliveries[0]!)], clock.sqlNow());
        assert.deepEqual(res.recorded, [b.deliveries[0]!.deliveryId]);
        const row = (
          await t.db.query('SELECT state, reclaim_count, attempt_count FROM deliveries WHERE id = $1', [
            b.deliveries[0]!.deliveryId,
          ])
        ).rows[0];
        assert.deepEqual(row, { state: 'succeeded', reclaim_count: 0, attempt_count: 1 });
        const events = (
          await t.db.query(
            'SELECT state, reason, dispatcher_id FROM delivery_events WHERE delivery_id = $1 ORDER BY id',
            [b.deliveries[0]!.deliveryId],
          )
        ).rows;
        assert.deepEqual(
          events.map((e) => `${e.state}:${e.reason ?? ''}:${e.dispatcher_id ?? ''}`),
          ['pending:published:', 'leased:claimed:A', 'leased:reclaimed:B', 'succeeded::B'],
        );
      },
    );

    test('a stale dispatcher whose token was superseded records nothing and the newer outcome stands', async () => {
      const appId = await insertApp(t.db);
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
      await publishMany(appId, 2);
      const store = createPgDeliveryStore(t.db, cipher);
      const stale = await store.claim({
        dispatcherId: 'A',
        limit: 2,
        leaseMs: LEASE_MS,
        maxReclaims: 5,
        now: clock.sqlNow(),
      });
      assert.equal(stale.deliveries.length, 2);
      clock.advance(LEASE_MS + 1);
      const fresh = await store.claim({
        dispatcherId: 'B',
        limit: 1,
        leaseMs: LEASE_MS,
        maxReclaims: 5,
        now: clock.sqlNow(),
      });
      assert.equal(fresh.deliveries.length, 1);
      const taken = fresh.deliveries[0]!;
      // The stale dispatcher resumes while B still holds the new lease and records both of its outcomes in
      // one batch: the superseded one is fenced out (nothing written), the other is unaffected.
      const [s1, s2] = stale.deliveries;
      const staleRes = await store.recordAttempts(
        [
          {
            ...succeededRecord(s1!),
            statusCode: 500,
            succeeded: false,
            next: { next: 'retry', delayMs: 5000 },
            errorKind: 'http_status',
          },
          {
            ...succeededRecord(s2!),
            statusCode: 500,
            succeeded: false,
            next: { next: 'retry', delayMs: 5000 },
            errorKind: 'http_status',
          },
        ],
        clock.sqlNow(),
      );
      const other = [s1!, s2!].find((s) => s.deliveryId !== taken.deliveryId)!;
      assert.deepEqual(staleRes.fencedOut, [taken.deliveryId]);
      assert.deepEqual(staleRes.recorded, [other.deliveryId]);
      const newer = await store.recordAttempts([{ ...succeededRecord(taken), statusCode: 202 }], clock.sqlNow());
      assert.deepEqual(newer.recorded, [taken.deliveryId], 'the newer lease records its outcome');
      const row = (
        await t.db.query('SELECT state, last_status_code, attempt_count FROM deliveries WHERE id = $1', [
          taken.deliveryId,
        ])
      ).rows[0];
      assert.deepEqual(row, { state: 'succeeded', last_status_code: 202, attempt_count: 1 });
      const attempts = (
        await t.db.query('SELECT response_status_code, dispatcher_id FROM attempts WHERE delivery_id = $1', [
          taken.deliveryId,
        ])
      ).rows;
      assert.deepEqual(
        attempts,
        [{ response_status_code: 202, dispatcher_id: 'B' }],
        'no attempt row from the fenced-out writer',
      );
      const staleEvents = (
        await t.db.query(
          `SELECT count(*)::int AS n FROM delivery_events WHERE delivery_id = $1 AND dispatcher_id = 'A' AND ` +
            `state <> 'leased'`,
          [taken.deliveryId],
        )
      ).rows[0]!;
      assert.equal(staleEvents.n, 0, 'no timeline row from the fenced-out writer');
      const lost = await store.extendLeases([s1!, s2!], LEASE_MS, clock.sqlNow());
      assert.deepEqual(
        [...lost].sort(),
        [s1!.deliveryId, s2!.deliveryId].sort(),
        'the stale heartbeat matches zero rows',
      );
    });

    test(
      "a stale outcome recorded in the same statement as the newer lease's outcome of the same delivery writes " +
        'no attempt or timeline row (regression: a database restart recorded two attempts against one charge)',
      async () => {
        const appId = await insertApp(t.db);
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
        await publishMany(appId, 2);
        const store = createPgDeliveryStore(t.db, cipher);
        const firsts = (
          await store.claim({ dispatcherId: 'A', limit: 2, leaseMs: LEASE_MS, maxReclaims: 5, now: clock.sqlNow() })
        ).deliveries;
        clock.advance(LEASE_MS + 1);
        // The same dispatcher reclaims its own expired leases while the first outcomes still wait to be written.
        const seconds = (
          await store.claim({ dispatcherId: 'A', limit: 2, leaseMs: LEASE_MS, maxReclaims: 5, now: clock.sqlNow() })
        ).deliveries;
        assert.equal(firsts.length, 2);
        const pairs = firsts.map((first) => ({
          first,
          second: seconds.find((d) => d.deliveryId === first.deliveryId)!,
        }));
        // One delivery with the stale outcome before the newer one in the batch, the other after it: whichever
        // order the statement meets them in, only the newer lease's outcome may be written.
        const [p1, p2] = pairs as [(typeof pairs)[0], (typeof pairs)[0]];
        await store.recordAttempts(
          [
            { ...succeededRecord(p1.first), attemptId: 'atmpt_2zzzzzzzzzzzzzzzzzzzzzzzz1', statusCode: 201 },
            { ...succeededRecord(p1.second), attemptId: 'atmpt_2zzzzzzzzzzzzzzzzzzzzzzzz2', statusCode: 202 },
            { ...succeededRecord(p2.second), attemptId: 'atmpt_2zzzzzzzzzzzzzzzzzzzzzzzz3', statusCode: 202 },
            { ...succeededRecord(p2.first), attemptId: 'atmpt_2zzzzzzzzzzzzzzzzzzzzzzzz4', statusCode: 201 },
          ],
          clock.sqlNow(),
        );
        for (const { first, second } of pairs) {
          const row = (
            await t.db.query('SELECT state, last_status_code, attempt_count FROM deliveries WHERE id = $1', [
              first.deliveryId,
            ])
          ).rows[0];
          assert.deepEqual(row, { state: 'succeeded', last_status_code: 202, attempt_count: 1 });
          const attempts = (
            await t.db.query(
              'SELECT response_status_code, fencing_token::text AS token FROM attempts WHERE delivery_id = $1',
              [first.deliveryId],
            )
          ).rows;
          assert.deepEqual(
            attempts,
            [{ response_status_code: 202, token: String(second.fencingToken) }],
            "one attempt row, the newer lease's",
          );
          const outcomes = (
            await t.db.query(
              `SELECT fencing_token::text AS token FROM delivery_events WHERE delivery_id = $1 AND state = 'succeeded'`,
              [first.deliveryId],
            )
          ).rows;
          assert.deepEqual(outcomes, [{ token: String(second.fencingToken) }], 'one timeline row for the outcome');
        }
      },
    );

    test(
      'an expired lease reclaimed maxReclaims times without an ' + 'outcome is dead-lettered as lease_lost_repeatedly',
      async () => {
        const appId = await insertApp(t.db);
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
        await publishMany(appId, 1);
        const store = createPgDeliveryStore(t.db, cipher);
        const claimOnce = () =>
          store.claim({ dispatcherId: 'W', limit: 10, leaseMs: LEASE_MS, maxReclaims: 2, now: clock.sqlNow() });
        const first = await claimOnce();
        assert.equal(first.deliveries.length, 1);
        const id = first.deliveries[0]!.deliveryId;
        for (let i = 0; i < 2; i++) {
          clock.advance(LEASE_MS + 1);
          assert.equal((await claimOnce()).reclaimed, 1);
        }
        clock.advance(LEASE_MS + 1);
        const last = await claimOnce();
        assert.equal(last.deliveries.length, 0);
        assert.equal(last.deadLettered, 1);
        const row = (await t.db.query('SELECT state, dead_reason FROM deliveries WHERE id = $1', [id])).rows[0];
        assert.deepEqual(row, { state: 'dead', dead_reason: 'lease_lost_repeatedly' });
      },
    );

    test(
      'a failed attempt whose endpoint was deleted meanwhile is canceled, and an expired lease on a deleted ' +
        'endpoint is never reclaimed',
      async () => {
        const appId = await insertApp(t.db);
        const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
        await publishMany(appId, 2);
        const store = createPgDeliveryStore(t.db, cipher);
        const claimed = await store.claim({
          dispatcherId: 'W',
          limit: 10,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: clock.sqlNow(),
        });
        assert.equal(claimed.deliveries.length, 2);
        await t.db.query('UPDATE endpoints SET deleted_at = clock_timestamp() WHERE id = $1', [ep.id]);
        const [inFlight, abandoned] = claimed.deliveries;
        await store.recordAttempts(
          [
            {
              ...succeededRecord(inFlight!),
              succeeded: false,
              statusCode: 500,
              errorKind: 'http_status',
              next: { next: 'retry', delayMs: 1000 },
            },
          ],
          clock.sqlNow(),
        );
        clock.advance(LEASE_MS + 1);
        const again = await store.claim({
          dispatcherId: 'V',
          limit: 10,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          now: clock.sqlNow(),
        });
        assert.equal(again.deliveries.length, 0, 'nothing of a deleted endpoint is claimed');
        const rows = (await t.db.query('SELECT id, state FROM deliveries WHERE endpoint_id = $1 ORDER BY id', [ep.id]))
          .rows;
        assert.deepEqual(
          rows.map((r) => r.state),
          ['canceled', 'canceled'],
        );
        const reasons = (
          await t.db.query(`SELECT reason FROM delivery_events WHERE delivery_id = $1 ORDER BY id DESC LIMIT 1`, [
            abandoned!.deliveryId,
          ])
        ).rows[0]!;
        assert.equal(reasons.reason, 'endpoint_deleted');
      },
    );

    test('publish fans out by event type and channel, and a reused eventId is a conflict', async () => {
      const appId = await insertApp(t.db);
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/all' });
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/typed', filterTypes: ['invoice.paid'] });
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/chan', channels: ['eu'] });
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/off', status: 'disabled' });
      const publisher = createPublisher({
        messages: createPgMessageStore(t.db, cipher, () => undefined),
        clock,
        random: cryptoRandom,
      });
      const pub = (eventType: string, channels: string[] | null, eventId: string | null) =>
        runTx(t.db, (tx) =>
          publisher.publish(tx, {
            appId,
            eventType,
            eventId,
            channels,
            tags: null,
            payload: Buffer.from('{}'),
            retentionHours: null,
          }),
        );
      assert.equal((await pub('user.created', null, null)).deliveries, 2, 'all + disabled (skipped)');
      assert.equal((await pub('invoice.paid', ['eu'], 'evt-1')).deliveries, 4);
      await assert.rejects(
        pub('invoice.paid', null, 'evt-1'),
        (e: unknown) => e instanceof AppError && e.code === 'conflict',
      );
      const states = (
        await t.db.query(
          `SELECT state, count(*)::int AS n FROM deliveries WHERE app_id = $1 GROUP BY state ORDER BY state`,
          [appId],
        )
      ).rows;
      assert.deepEqual(states, [
        { state: 'pending', n: 4 },
        { state: 'skipped', n: 2 },
      ]);
    });

    test('the payload is stored encrypted and claimed back byte for byte', async () => {
      const appId = await insertApp(t.db);
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
      const payload = Buffer.from('{ "z":1,  "a": 12345678901234567890, "marker":"PLAINTEXT-MARKER-7f3a" }');
      const publisher = createPublisher({
        messages: createPgMessageStore(t.db, cipher, () => undefined),
        clock,
        random: cryptoRandom,
      });
      const { message } = await runTx(t.db, (tx) =>
        publisher.publish(tx, {
          appId,
          eventType: 'x',
          eventId: null,
          channels: null,
          tags: null,
          payload,
          retentionHours: null,
        }),
      );
      const raw = (await t.db.query('SELECT payload, payload_key_id FROM messages WHERE id = $1', [message.id]))
        .rows[0]!;
      assert.equal(raw.payload_key_id, 'test1');
      assert.equal(Buffer.from(raw.payload).includes('PLAINTEXT-MARKER'), false);
      const store = createPgDeliveryStore(t.db, cipher);
      const claimed = await store.claim({
        dispatcherId: 'W',
        limit: 100,
        leaseMs: LEASE_MS,
        maxReclaims: 5,
        now: clock.sqlNow(),
      });
      const mine = claimed.deliveries.find((d) => d.messageId === message.id)!;
      assert.ok(Buffer.from(mine.payload).equals(payload));
    });

    test(
      'one Idempotency-Key with the same request answers the same ' + 'message; with another body it is refused',
      async () => {
        const appId = await insertApp(t.db);
        const idem = createPgIdempotencyStore(t.db);
        const publisher = createPublisher({
          messages: createPgMessageStore(t.db, cipher, () => undefined),
          clock,
          random: cryptoRandom,
        });
        const scope = (fingerprint: string) => ({
          owner: 'admin',
          route: 'POST /msg',
          key: `k-${appId}`,
          fingerprint,
          ttlMs: 60_000,
          waitMs: 5_000,
        });
        const work = () =>
          idem.run(scope('f1'), async (tx) => {
            const { message } = await publisher.publish(tx, {
              appId,
              eventType: 'x',
              eventId: null,
              channels: null,
              tags: null,
              payload: Buffer.from('{}'),
              retentionHours: null,
            });
            return { status: 201, body: { id: message.id } };
          });
        const first = await work();
        const second = await work();
        assert.equal(first.replayed, false);
        assert.equal(second.replayed, true);
        assert.deepEqual(second.body, first.body);
        await assert.rejects(
          idem.run(scope('f2'), async () => ({ status: 201, body: {} })),
          (e: unknown) => e instanceof AppError && e.code === 'idempotency_key_mismatch',
        );
        assert.equal(
          (await t.db.query('SELECT count(*)::int AS n FROM messages WHERE app_id = $1', [appId])).rows[0]!.n,
          1,
        );
      },
    );

    if (engine.name === 'server') {
      test(
        '(server only: two open transactions) eight due deliveries, batch five: A holds its claim open, B gets ' +
          'the other three, disjoint',
        async () => {
          const appId = await insertApp(t.db);
          await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
          await publishMany(appId, 8);
          const store = createPgDeliveryStore(t.db, cipher);
          const a = await t.db.tx(async (client) => {
            const heldA = await client.query<{ id: string }>(CLAIM, [
              'A',
              5,
              LEASE_MS,
              clock.sqlNow(),
              5,
              [],
              5,
              [],
              [],
              [],
              [],
              5,
            ]);
            // A's transaction is still open here: its five rows stay locked while B claims.
            const b = await store.claim({
              dispatcherId: 'B',
              limit: 5,
              leaseMs: LEASE_MS,
              maxReclaims: 5,
              now: clock.sqlNow(),
            });
            return { a: heldA.rows.map((r) => r.id), b: b.deliveries.map((d) => d.deliveryId) };
          });
          assert.equal(a.a.length, 5);
          assert.equal(a.b.length, 3);
          assert.equal(new Set([...a.a, ...a.b]).size, 8, 'the two claims are disjoint');
        },
      );

      test(
        '(server only: concurrent transactions) a duplicate that waits longer than the idempotency wait while ' +
          'the first still runs gets idempotency_key_in_flight',
        async () => {
          const appId = await insertApp(t.db);
          const idem = createPgIdempotencyStore(t.db);
          const gate = deferred<void>();
          const holding = deferred<void>();
          const scope = (waitMs: number) => ({
            owner: 'admin',
            route: 'POST /msg',
            key: `slow-${appId}`,
            fingerprint: 'same',
            ttlMs: 60_000,
            waitMs,
          });
          const first = idem.run(scope(10_000), async () => {
            holding.resolve();
            await gate.promise;
            return { status: 202, body: { id: 'msg_first' } };
          });
          await holding.promise;
          await assert.rejects(
            idem.run(scope(150), async () => ({ status: 202, body: { id: 'msg_second' } })),
            (e: unknown) => e instanceof AppError && e.code === 'idempotency_key_in_flight',
          );
          gate.resolve();
          assert.deepEqual((await first).body, { id: 'msg_first' });
          const replay = await idem.run(scope(150), async () => ({ status: 202, body: { id: 'never' } }));
          assert.deepEqual(
            { replayed: replay.replayed, body: replay.body },
            { replayed: true, body: { id: 'msg_first' } },
          );
        },
      );

      test(
        '(server only: concurrent transactions) twenty concurrent publishes with one Idempotency-Key make one ' +
          'message; every answer carries its id',
        async () => {
          const appId = await insertApp(t.db);
          await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
          const idem = createPgIdempotencyStore(t.db);
          const publisher = createPublisher({
            messages: createPgMessageStore(t.db, cipher, () => undefined),
            clock,
            random: cryptoRandom,
          });
          const answers = await Promise.all(
            Array.from({ length: 20 }, () =>
              idem.run(
                {
                  owner: 'admin',
                  route: 'POST /msg',
                  key: `race-${appId}`,
                  fingerprint: 'same',
                  ttlMs: 60_000,
                  waitMs: 10_000,
                },
                async (tx) => {
                  const { message } = await publisher.publish(tx, {
                    appId,
                    eventType: 'x',
                    eventId: null,
                    channels: null,
                    tags: null,
                    payload: Buffer.from('{}'),
                    retentionHours: null,
                  });
                  return { status: 201, body: { id: message.id } };
                },
              ),
            ),
          );
          const ids = new Set(answers.map((a) => (a.body as { id: string }).id));
          assert.equal(ids.size, 1);
          assert.equal(answers.filter((a) => !a.replayed).length, 1);
          assert.equal(
            (await t.db.query('SELECT count(*)::int AS n FROM messages WHERE app_id = $1', [appId])).rows[0]!.n,
            1,
          );
          assert.equal(
            (await t.db.query('SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1', [appId])).rows[0]!.n,
            1,
          );
        },
      );

      test(
        '(server only) twenty concurrent requests with an expired Idempotency-Key make one new message; the ' +
          'others replay it (regression: some were answered "in flight" after it committed)',
        async () => {
          const appId = await insertApp(t.db);
          const idem = createPgIdempotencyStore(t.db);
          const publisher = createPublisher({
            messages: createPgMessageStore(t.db, cipher, () => undefined),
            clock,
            random: cryptoRandom,
          });
          const scope = (ttlMs: number) => ({
            owner: 'admin',
            route: 'POST /msg',
            key: `expired-${appId}`,
            fingerprint: 'same',
            ttlMs,
            waitMs: 10_000,
          });
          // The request that re-claims the expired key holds its work until the others wait behind its claim.
          let gate: Promise<void> = Promise.resolve();
          const work = async (tx: Parameters<Parameters<typeof idem.run>[1]>[0]) => {
            await gate;
            const { message } = await publisher.publish(tx, {
              appId,
              eventType: 'x',
              eventId: null,
              channels: null,
              tags: null,
              payload: Buffer.from('{}'),
              retentionHours: null,
            });
            return { status: 202, body: { id: message.id } };
          };
          const first = await idem.run(scope(1), work);
          await t.db.query(
            `UPDATE idempotency_keys SET expires_at = clock_timestamp() - interval '1 second' WHERE key = $1`,
            [`expired-${appId}`],
          );
          const held = deferred<void>();
          gate = held.promise;
          const running = Promise.all(Array.from({ length: 20 }, () => idem.run(scope(60_000), work)));
          // Every other pooled connection (the pool has 10) is now blocked on the key row the first one holds;
          // watched from a connection of its own (the pool's are all taken).
          const watcher = new pg.Client({ connectionString: t.url! });
          await watcher.connect();
          try {
            const waitingDeadline = Date.now() + 10_000;
            for (;;) {
              const waiting = await watcher.query<{ n: number }>(
                'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND ' +
                  `wait_event_type = 'Lock'`,
              );
              if (waiting.rows[0]!.n >= 8) break;
              assert.ok(Date.now() < waitingDeadline, 'the other requests never blocked on the re-claimed key');
              await new Promise((resolve) => setImmediate(resolve));
            }
          } finally {
            held.resolve();
            await watcher.end();
          }
          const answers = await running;
          const ids = new Set(answers.map((a) => (a.body as { id: string }).id));
          assert.equal(ids.size, 1);
          assert.ok(!ids.has((first.body as { id: string }).id), 'the expired answer is not replayed');
          assert.equal(answers.filter((a) => !a.replayed).length, 1);
          assert.equal(
            (await t.db.query('SELECT count(*)::int AS n FROM messages WHERE app_id = $1', [appId])).rows[0]!.n,
            2,
          );
        },
      );
    }
  });
}
