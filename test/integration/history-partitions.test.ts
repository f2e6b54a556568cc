/**
 * The history in time partitions (docs/adr/0030-history-partitions.md), on both engines, with a manual clock and the
 * real dispatcher, stores and HTTP sender: partitions appear ahead of time; deliveries retry across several
 * partition boundaries; retention drops whole partitions whose range has aged out and never one holding rows of a
 * delivery still pending or leased; a row whose instant has no partition yet lands in the default partition and
 * moves out when its partition is made; two processes making partitions at once make each one once. The history of
 * dead letters survives the drop of its partitions (docs/adr/0031-kept-history.md): carried over into the default
 * partition, still listed by the API and replayable; a partition left detached by a stopped run is finished by
 * the next run with no row lost or written twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHttpSender } from '../../src/adapters/http-sender/http-sender.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgHistoryPartitions } from '../../src/adapters/postgres/delivery/history-partitions.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createDispatcher, type Dispatcher } from '../../src/app/dispatcher/dispatcher.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { runRetention, type RetentionSettings } from '../../src/app/retention.ts';
import { pgRetentionDeps } from '../../src/main/retention-job.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { silentLogger } from '../support/logger.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = Date.UTC(2027, 0, 4); // a partition boundary at any width that divides a day
const RETRY_MS = 90 * MINUTE;
const settings: RetentionSettings = {
  payloadRetentionMs: 90 * 24 * HOUR,
  succeededAgeMs: 2 * HOUR,
  batch: 100,
  partitions: { widthMs: HOUR, ahead: 2, lockTimeoutMs: 1000 },
};
const suffix = (ms: number): string => {
  const iso = new Date(ms).toISOString();
  return `p${iso.slice(0, 10).replaceAll('-', '')}t${iso.slice(11, 19).replaceAll(':', '')}`;
};

for (const engine of ENGINES) {
  describe(`history partitions (${engine.name})`, () => {
    let t: TestDatabase;
    let receiver: TestReceiver;
    let sender: Sender;
    let dispatcher: Dispatcher;
    const cipher = testCipher();
    const clock = new ManualClock(T0 + 30 * MINUTE);

    before(async () => {
      t = await engine.fresh();
      receiver = await startTestReceiver();
      sender = createHttpSender({
        connectTimeoutMs: 2000,
        headersTimeoutMs: 5000,
        bodyTimeoutMs: 5000,
        deadlineMs: 10_000,
        maxResponseBytes: 65536,
        responsePrefixBytes: 1024,
        maxSocketsPerOrigin: 16,
        egressAllowlist: ['127.0.0.1/32'],
        userAgent: 'test',
      });
      dispatcher = createDispatcher({
        store: createPgDeliveryStore(t.db, cipher),
        sender,
        clock,
        random: cryptoRandom,
        logger: silentLogger,
        settings: {
          dispatcherId: 'D',
          concurrency: 8,
          claimBatch: 8,
          leaseMs: 30_000,
          maxReclaims: 5,
          pollIntervalMs: 50,
          shutdownGraceMs: 0,
          retryPolicy: {
            delaysMs: Array.from({ length: 10 }, () => RETRY_MS),
            jitter: 0,
            retryAfterMinMs: 1000,
            retryAfterMaxMs: HOUR,
          },
        },
        observer: {},
      });
    });
    after(async () => {
      await sender.close();
      await receiver.stop();
      await t?.drop();
    });

    const q = async <R extends Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> =>
      (await t.db.query<R>(sql, params)).rows;
    const partitions = async (table: string): Promise<string[]> =>
      (
        await q<{ name: string }>(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent = $1::regclass ORDER BY 1`,
          [table],
        )
      ).map((r) => r.name);
    const retention = () => runRetention(pgRetentionDeps(t.db), settings, clock);
    /** Runs the dispatcher once at the clock's instant and waits for its attempts to be recorded. */
    const deliverNow = async (): Promise<number> => {
      const n = await dispatcher.tick();
      await dispatcher.drained();
      return n;
    };
    async function publishTo(endpoint: { appId: string }, n: number): Promise<string> {
      const publisher = createPublisher({
        messages: createPgMessageStore(t.db, cipher, () => undefined),
        clock,
        random: cryptoRandom,
      });
      const out = await runTx(t.db, (tx) =>
        publisher.publish(tx, {
          appId: endpoint.appId,
          eventType: 'e',
          eventId: null,
          channels: null,
          tags: null,
          payload: Buffer.from(`{"n":${n}}`),
          retentionHours: null,
        }),
      );
      return out.message.id;
    }
    const deliveryOf = async (messageId: string) =>
      (
        await q<{ id: string; state: string; attempt_count: number }>(
          'SELECT id, state, attempt_count FROM deliveries WHERE message_id = $1',
          [messageId],
        )
      )[0]!;
    const deliveryById = async (id: string) =>
      (
        await q<{ state: string; attempt_count: number }>('SELECT state, attempt_count FROM deliveries WHERE id = $1', [
          id,
        ])
      )[0]!;
    const historyOf = async (deliveryId: string) => ({
      attempts: (
        await q<{ n: number }>('SELECT count(*)::int AS n FROM attempts WHERE delivery_id = $1', [deliveryId])
      )[0]!.n,
      timeline: (
        await q<{ state: string }>('SELECT state FROM delivery_events WHERE delivery_id = $1 ORDER BY id', [deliveryId])
      ).map((r) => r.state),
    });

    test(
      'partitions appear ahead of time; deliveries retry across boundaries; retention drops only partitions no live ' +
        'delivery has rows in',
      async () => {
        const made = await retention();
        assert.equal(made.partitionsMade, 6, 'the current partition and 2 ahead, for both tables');
        for (const table of ['attempts', 'delivery_events']) {
          assert.deepEqual(await partitions(table), [
            `${table}_default`,
            ...[0, 1, 2].map((k) => `${table}_${suffix(T0 + k * HOUR)}`),
          ]);
        }
        assert.equal((await retention()).partitionsMade, 0, 'nothing to make twice');

        const appId = await insertApp(t.db);
        const failing = await insertEndpoint(t.db, cipher, { appId, url: receiver.url('/failing') });
        await receiver.setSecret('/failing', failing.secret);
        await receiver.script('/failing', [], { status: 500 });
        const live = await deliveryOf(await publishTo({ appId }, 1));
        assert.equal(await deliverNow(), 1);

        // A second application whose one delivery succeeds in the next hour: a partition of settled history only.
        const okApp = await insertApp(t.db);
        const ok = await insertEndpoint(t.db, cipher, { appId: okApp, url: receiver.url('/ok') });
        await receiver.setSecret('/ok', ok.secret);
        clock.advance(HOUR); // T0 + 1h30
        const settled = await deliveryOf(await publishTo({ appId: okApp }, 2));
        assert.equal(await deliverNow(), 1);
        assert.equal((await deliveryById(settled.id)).state, 'succeeded');

        // The live delivery retries every 90 minutes: T0+2h, T0+3h30, T0+5h, each in a later partition.
        let dropped = 0;
        for (let step = 1; step <= 3; step++) {
          clock.set(T0 + 30 * MINUTE + step * RETRY_MS);
          dropped += (await retention()).partitionsDropped;
          assert.equal(await deliverNow(), 1, `retry ${step}`);
        }
        const liveNow = await deliveryById(live.id);
        assert.equal(liveNow.state, 'pending');
        assert.equal(liveNow.attempt_count, 4);
        const spread = await q<{ p: string }>(
          `SELECT DISTINCT tableoid::regclass::text AS p FROM attempts WHERE delivery_id = $1 ORDER BY 1`,
          [live.id],
        );
        assert.equal(spread.length, 4, 'its four attempts lie in four partitions');
        assert.ok((await partitions('attempts')).includes(`attempts_${suffix(T0 + 6 * HOUR)}`), 'made ahead');

        // At T0+5h with an age of 2 h, the ranges ending by T0+3h have aged out. The first and the third hold rows of
        // the live delivery; the second holds only the settled one's.
        const report = await retention();
        assert.equal(dropped + report.partitionsDropped, 2, 'the second hour of both tables');
        assert.ok(report.partitionsKeptForLive >= 4);
        for (const table of ['attempts', 'delivery_events']) {
          const names = await partitions(table);
          assert.ok(!names.includes(`${table}_${suffix(T0 + HOUR)}`), `${table}: the settled hour is dropped`);
          assert.ok(names.includes(`${table}_${suffix(T0)}`), `${table}: the live delivery's first hour is kept`);
          assert.ok(names.includes(`${table}_${suffix(T0 + 2 * HOUR)}`), `${table}: its second attempt's hour is kept`);
        }
        assert.deepEqual(await historyOf(settled.id), { attempts: 0, timeline: [] }, 'the settled history went');
        const kept = await historyOf(live.id);
        assert.equal(kept.attempts, 4, 'the live delivery keeps every attempt');
        assert.equal(kept.timeline.filter((s) => s === 'leased').length, 4, 'and every claim of its timeline');

        // Once it succeeds and its history ages out, its partitions go too.
        await receiver.script('/failing', [], { status: 200 });
        clock.set(T0 + 30 * MINUTE + 4 * RETRY_MS); // T0+6h30
        await retention();
        assert.equal(await deliverNow(), 1);
        clock.set(T0 + 9 * HOUR);
        const last = await retention();
        assert.equal(last.partitionsKeptForLive, 0);
        for (const table of ['attempts', 'delivery_events']) {
          const names = await partitions(table);
          for (let k = 0; k < 7; k++)
            assert.ok(!names.includes(`${table}_${suffix(T0 + k * HOUR)}`), `${table} +${k}h`);
          assert.ok(names.includes(`${table}_${suffix(T0 + 9 * HOUR)}`));
        }
      },
    );

    test(
      'a row whose instant has no partition yet lands in the default partition and moves out when its partition ' +
        'is made',
      async () => {
        const far = T0 + 40 * 24 * HOUR;
        clock.set(far + 10 * MINUTE);
        const appId = await insertApp(t.db);
        const ep = await insertEndpoint(t.db, cipher, { appId, url: receiver.url('/far') });
        await receiver.setSecret('/far', ep.secret);
        const d = await deliveryOf(await publishTo({ appId }, 3));
        assert.ok((await deliverNow()) >= 1);
        const where = async () =>
          (
            await q<{ p: string }>(
              `SELECT tableoid::regclass::text AS p FROM attempts WHERE delivery_id = $1
             UNION ALL SELECT tableoid::regclass::text FROM delivery_events WHERE delivery_id = $1 AND at >= $2`,
              [d.id, new Date(far)],
            )
          ).map((r) => r.p);
        const before = await where();
        assert.ok(before.length >= 3, 'its attempt and timeline rows are written');
        assert.ok(
          before.every((p) => p.endsWith('_default')),
          before.join(),
        );
        const made = await retention();
        assert.ok(made.partitionsMade >= 2);
        const moved = await where();
        assert.equal(moved.length, before.length, 'no row is lost in the move');
        assert.ok(
          moved.every((p) => p.endsWith(suffix(far))),
          moved.join(),
        );
        assert.deepEqual((await historyOf(d.id)).attempts, 1);
      },
    );

    /** A delivery that goes dead at its first attempt (410) at the clock's instant; returns its ids. */
    async function deadLetter(path: string, n: number) {
      const appId = await insertApp(t.db);
      const ep = await insertEndpoint(t.db, cipher, { appId, url: receiver.url(path) });
      await receiver.setSecret(path, ep.secret);
      await receiver.script(path, [], { status: 410 });
      const msgId = await publishTo({ appId }, n);
      const d = await deliveryOf(msgId);
      assert.equal(await deliverNow(), 1);
      assert.equal((await deliveryById(d.id)).state, 'dead');
      return { appId, endpointId: ep.id, msgId, deliveryId: d.id };
    }
    /** Every history row of the delivery, with the table it lies in, in a stable order. */
    const rowsOf = async (deliveryId: string) =>
      q<{ t: string; id: string; p: string }>(
        `SELECT 'attempts' AS t, id, tableoid::regclass::text AS p FROM attempts WHERE delivery_id = $1
         UNION ALL SELECT 'delivery_events', id::text, tableoid::regclass::text FROM delivery_events
         WHERE delivery_id = $1 ORDER BY 1, 2`,
        [deliveryId],
      );

    test(
      "a dead letter's attempts and timeline older than the age survive the drop of their partitions, are listed " +
        'by the API, and its replay delivers it',
      async () => {
        const base = T0 + 120 * 24 * HOUR;
        clock.set(base + 30 * MINUTE);
        await retention();
        const dead = await deadLetter('/gone', 4);
        const okApp = await insertApp(t.db);
        const ok = await insertEndpoint(t.db, cipher, { appId: okApp, url: receiver.url('/ok2') });
        await receiver.setSecret('/ok2', ok.secret);
        const settled = await deliveryOf(await publishTo({ appId: okApp }, 5));
        assert.equal(await deliverNow(), 1);
        const before = await rowsOf(dead.deliveryId);
        assert.ok(before.length >= 4, 'an attempt and a timeline of publish, claim and death');
        assert.ok(before.every((r) => r.p.endsWith(suffix(base))));

        clock.set(base + 4 * HOUR);
        const report = await retention();
        for (const table of ['attempts', 'delivery_events'])
          assert.ok(!(await partitions(table)).includes(`${table}_${suffix(base)}`), `${table}: its hour is dropped`);
        assert.equal(report.historyRowsCarried, before.length);
        const after = await rowsOf(dead.deliveryId);
        assert.deepEqual(
          after.map((r) => [r.t, r.id]),
          before.map((r) => [r.t, r.id]),
          'every row kept, once',
        );
        assert.ok(
          after.every((r) => r.p.endsWith('_default')),
          after.map((r) => r.p).join(),
        );
        assert.deepEqual(await historyOf(settled.id), { attempts: 0, timeline: [] }, 'a succeeded history goes');

        const api: ApiHarness = await startApi(engine.fresh, {}, { clock, database: t });
        try {
          const get = async (path: string) => {
            const res = await api.request('GET', path);
            assert.equal(res.status, 200, path);
            return (await res.json()) as { data: { id: string; status?: number; state?: string }[] };
          };
          const listed = await get(`/api/v1/app/${dead.appId}/attempt/msg/${dead.msgId}`);
          assert.equal(listed.data.length, 1, 'its attempt is listed');
          const byEndpoint = await get(`/api/v1/app/${dead.appId}/attempt/endpoint/${dead.endpointId}`);
          assert.equal(byEndpoint.data.length, 1);
          const timeline = await get(
            `/api/v1/app/${dead.appId}/msg/${dead.msgId}/endpoint/${dead.endpointId}/timeline`,
          );
          assert.deepEqual(
            timeline.data.map((e) => e.id),
            after.filter((r) => r.t === 'delivery_events').map((r) => r.id),
            'its whole timeline is listed',
          );
          assert.ok(
            timeline.data.some((e) => e.state === 'dead'),
            JSON.stringify(timeline.data),
          );

          // Replayed once its endpoint, which the 410 disabled, is enabled again: delivered, old history kept.
          await receiver.script('/gone', [], { status: 200 });
          const enable = await api.request('PATCH', `/api/v1/app/${dead.appId}/endpoint/${dead.endpointId}`, {
            body: JSON.stringify({ disabled: false }),
            headers: { 'content-type': 'application/json' },
          });
          assert.equal(enable.status, 200, await enable.text());
          const replay = await api.request('POST', `/api/v1/app/${dead.appId}/dead-letter/replay`, {
            body: JSON.stringify({ since: new Date(base).toISOString() }),
            headers: { 'content-type': 'application/json' },
          });
          const started = await replay.text();
          assert.equal(replay.status, 202, started);
          const task = (JSON.parse(started) as { id: string }).id;
          for (let i = 0; (await api.svix.backgroundTask.get(task)).status === 'running'; i++) {
            assert.ok(i < 500, 'the replay task finishes');
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          clock.advance(MINUTE);
          assert.equal(await deliverNow(), 1);
          assert.equal((await deliveryById(dead.deliveryId)).state, 'succeeded');
          const replayed = await get(`/api/v1/app/${dead.appId}/attempt/msg/${dead.msgId}`);
          assert.equal(replayed.data.length, 2, 'the old attempt and the replay');
        } finally {
          await api.close();
        }
      },
    );

    test(
      'a partition a stopped run left detached, with or without its rows carried over, is finished by the next run ' +
        'with no row lost or written twice',
      async () => {
        const base = T0 + 160 * 24 * HOUR;
        clock.set(base + 30 * MINUTE);
        await retention();
        const dead = await deadLetter('/gone2', 6);
        const before = await rowsOf(dead.deliveryId);
        // The first step of the drop, done as a run would before it stopped: both partitions detached; the timeline's
        // rows were even carried over already, in a transaction that committed before the stop.
        for (const table of ['attempts', 'delivery_events'])
          await t.db.query(`ALTER TABLE ${table} DETACH PARTITION ${table}_${suffix(base)}`);
        await t.db.query(
          `INSERT INTO delivery_events OVERRIDING SYSTEM VALUE SELECT * FROM delivery_events_${suffix(base)}`,
        );
        assert.ok((await rowsOf(dead.deliveryId)).every((r) => r.t === 'delivery_events'));

        clock.set(base + 4 * HOUR);
        const report = await retention();
        assert.ok(report.partitionsDropped >= 2);
        const left = await q<{ n: number }>(`SELECT count(*)::int AS n FROM pg_class WHERE relname IN ($1, $2)`, [
          `attempts_${suffix(base)}`,
          `delivery_events_${suffix(base)}`,
        ]);
        assert.equal(left[0]!.n, 0, 'both detached tables are dropped');
        assert.deepEqual(
          (await rowsOf(dead.deliveryId)).map((r) => [r.t, r.id]),
          before.map((r) => [r.t, r.id]),
          'every row kept, once',
        );
      },
    );

    test('two processes making partitions at once make each one once', async () => {
      clock.set(T0 + 80 * 24 * HOUR);
      const a = createPgHistoryPartitions(t.db);
      const b = createPgHistoryPartitions(t.db);
      const input = { nowMs: clock.nowMs(), widthMs: HOUR, ahead: 3, lockTimeoutMs: 1000 };
      const [x, y] = await Promise.all([a.ensure(input), b.ensure(input)]);
      assert.equal(x.length + y.length, 8, [...x, ...y].join());
      assert.equal(new Set([...x, ...y]).size, 8);
      assert.deepEqual(await b.ensure(input), []);
    });
  });
}
