/**
 * The dispatcher's in-flight window (docs/adr/0009-window-share-within-a-claim.md): an endpoint's share holds
 * within one claim at every window size, endpoints on one origin do not share a connection pool, and
 * endpoints that do not answer together leave the window's reserve to endpoints that do. Real loopback
 * receivers (child processes); latencies are read from the times Tidings recorded (database clock).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createHttpSender } from '../../src/adapters/http-sender/http-sender.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom, systemClock } from '../../src/adapters/system/system-clock.ts';
import { createDispatcher, type Dispatcher } from '../../src/app/dispatcher/dispatcher.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/domain/retry-schedule.ts';
import type { ClaimWindow } from '../../src/ports/delivery-store.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { silentLogger } from '../support/logger.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

const cipher = testCipher();

async function publish(t: TestDatabase, appId: string, count: number): Promise<string[]> {
  const publisher = createPublisher({
    messages: createPgMessageStore(t.db, cipher, () => undefined),
    clock: systemClock,
    random: cryptoRandom,
  });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const m = await runTx(t.db, (tx) =>
      publisher.publish(tx, {
        appId,
        eventType: 'e',
        eventId: null,
        channels: null,
        tags: null,
        payload: Buffer.from(`{"i":${i}}`),
        retentionHours: null,
      }),
    );
    ids.push(m.message.id);
  }
  return ids;
}

/** An application with one endpoint at `url` (each endpoint its own application, so publishes do not fan out). */
async function endpointAt(t: TestDatabase, url: string): Promise<{ appId: string; id: string }> {
  const appId = await insertApp(t.db);
  const ep = await insertEndpoint(t.db, cipher, { appId, url });
  return { appId, id: ep.id };
}

/** Publish → first attempt of each message, in ms, from the rows Tidings wrote (database clock), sorted. */
async function firstAttemptLatencies(t: TestDatabase, ids: readonly string[]): Promise<number[]> {
  const rows = (
    await t.db.query<{ ms: number }>(
      `SELECT extract(epoch FROM (min(a.created_at) - m.created_at)) * 1000 AS ms FROM messages m JOIN attempts a
        ON a.message_id = m.id
     WHERE m.id = ANY ($1) AND a.succeeded GROUP BY m.id, m.created_at`,
      [ids],
    )
  ).rows;
  return rows.map((r) => Number(r.ms)).sort((a, b) => a - b);
}

/** Resolves once every delivery of `ids` has a recorded successful attempt (told by the dispatcher's observer). */
const deliveredWaiters = new Set<() => void>();
async function waitForSucceeded(t: TestDatabase, ids: readonly string[], timeoutMs: number): Promise<void> {
  const count = async (): Promise<number> =>
    (
      await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM deliveries WHERE message_id = ANY ($1) AND state = 'succeeded'`,
        [ids],
      )
    ).rows[0]!.n;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const n = await count();
    if (n === ids.length) return;
    const left = until - Date.now();
    if (left <= 0) throw new Error(`${n} of ${ids.length} delivered within ${timeoutMs} ms`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, left);
      function done(): void {
        clearTimeout(timer);
        deliveredWaiters.delete(done);
        resolve();
      }
      deliveredWaiters.add(done);
    });
  }
}

for (const engine of ENGINES) {
  describe(`the claim keeps the window's shares on ${engine.name}`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await engine.fresh();
    });
    after(async () => {
      await t.drop();
    });
    beforeEach(async () => {
      await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
    });
    const claim = (limit: number, window: ClaimWindow) =>
      createPgDeliveryStore(t.db, cipher).claim({
        dispatcherId: 'W',
        limit,
        leaseMs: 30_000,
        maxReclaims: 5,
        now: null,
        window,
      });

    test(
      'one claim gives an endpoint no more than its share less what ' + 'it already holds, reclaimed leases included',
      async () => {
        const a = await endpointAt(t, 'http://127.0.0.1:9/a');
        await publish(t, a.appId, 10);
        const none = new Map<string, number>();
        const first = await claim(4, { share: 2, held: none, answering: [], unresponsive: [], budget: 4 });
        assert.equal(first.deliveries.length, 2, 'window 4, share 2: a lone endpoint with a backlog gets 2, not 4');
        const second = await claim(4, {
          share: 2,
          held: new Map([[a.id, 1]]),
          answering: [],
          unresponsive: [],
          budget: 4,
        });
        assert.equal(second.deliveries.length, 1, 'holding 1 of its 2, it gets 1 more');
        await t.db.query(
          `UPDATE deliveries SET lease_expires_at = now() - interval '1 second' WHERE endpoint_id = $1 AND state ` +
            `= 'leased'`,
          [a.id],
        );
        const third = await claim(10, { share: 2, held: none, answering: [a.id], unresponsive: [], budget: 10 });
        assert.equal(third.deliveries.length, 2, 'three expired leases and a backlog: still 2');
        assert.ok(
          third.deliveries.every((d) => d.reclaimed),
          'expired leases are taken first',
        );
      },
    );

    test(
      'endpoints not known to answer share the budget; one holding nothing still gets one delivery unless it is ' +
        'known unresponsive',
      async () => {
        const [a, b, c, d] = [
          await endpointAt(t, 'http://127.0.0.1:9/a'),
          await endpointAt(t, 'http://127.0.0.1:9/b'),
          await endpointAt(t, 'http://127.0.0.1:9/c'),
          await endpointAt(t, 'http://127.0.0.1:9/d'),
        ];
        for (const e of [a, b, c, d]) await publish(t, e.appId, 5);
        const per = (got: { deliveries: readonly { endpointId: string }[] }, id: string): number =>
          got.deliveries.filter((x) => x.endpointId === id).length;
        const spent = await claim(8, { share: 4, held: new Map(), answering: [d.id], unresponsive: [c.id], budget: 0 });
        assert.deepEqual(
          [a, b, c, d].map((e) => per(spent, e.id)),
          [1, 1, 0, 2],
          'budget spent: unproven a and b get their first delivery, unresponsive c nothing, answering d its fair ' +
            'part of the claim (8 / 4)',
        );
        const three = await claim(8, {
          share: 4,
          held: new Map(),
          answering: [],
          unresponsive: [a.id, b.id, c.id, d.id],
          budget: 3,
        });
        assert.equal(
          three.deliveries.length,
          3,
          'four unresponsive endpoints with a backlog take the budget of 3 together, no more',
        );
      },
    );
  });
}

describe('the dispatcher window under load (PostgreSQL server, loopback receivers)', () => {
  let t: TestDatabase;
  let holes: TestReceiver;
  let other: TestReceiver;
  const senders: Sender[] = [];
  const running: Dispatcher[] = [];
  before(async () => {
    t = await freshServerDatabase();
    holes = await startTestReceiver();
    other = await startTestReceiver();
    await holes.script('/hole-1', [], { stall: true });
    await holes.script('/hole-2', [], { stall: true });
  });
  after(async () => {
    await Promise.all(running.map((d) => d.stop()));
    await Promise.all(senders.map((s) => s.close()));
    await holes.stop();
    await other.stop();
    await t.drop();
  });
  beforeEach(async () => {
    await Promise.all(running.splice(0).map((d) => d.stop()));
    await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
    await holes.reset();
    await holes.script('/hole-1', [], { stall: true });
    await holes.script('/hole-2', [], { stall: true });
  });

  const start = (concurrency: number, timeoutMs: number, socketsPerPool: number, claimAhead = 0): Dispatcher => {
    const sender = createHttpSender({
      connectTimeoutMs: 2000,
      headersTimeoutMs: timeoutMs,
      bodyTimeoutMs: timeoutMs,
      deadlineMs: timeoutMs + 1000,
      maxResponseBytes: 4096,
      responsePrefixBytes: 256,
      maxSocketsPerOrigin: socketsPerPool,
      egressAllowlist: ['127.0.0.1/32'],
      userAgent: 'test',
    });
    senders.push(sender);
    const d = createDispatcher({
      store: createPgDeliveryStore(t.db, cipher),
      sender,
      clock: systemClock,
      random: cryptoRandom,
      logger: silentLogger,
      observer: {
        attempted: (_r, recorded) => {
          if (recorded) for (const w of [...deliveredWaiters]) w();
        },
      },
      settings: {
        dispatcherId: `W${running.length}`,
        concurrency,
        claimBatch: 100,
        claimAheadCount: claimAhead,
        attemptDeadlineMs: timeoutMs + 1000,
        leaseMs: timeoutMs + 10_000,
        maxReclaims: 5,
        pollIntervalMs: 20,
        shutdownGraceMs: 50,
        retryPolicy: DEFAULT_RETRY_POLICY,
      },
    });
    running.push(d);
    d.start();
    return d;
  };
  const leased = async (endpointId: string): Promise<number> =>
    (
      await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND state = 'leased'`,
        [endpointId],
      )
    ).rows[0]!.n;

  test(
    'window 4: a black-holed endpoint with a backlog holds 2 slots, and a healthy endpoint published after it is ' +
      'served at once',
    async () => {
      const hole = await endpointAt(t, holes.url('/hole-1'));
      const healthy = await endpointAt(t, other.url('/ok'));
      await publish(t, hole.appId, 20);
      start(4, 6000, 4);
      await holes.waitForCount(2, 10_000, (r) => r.path === '/hole-1');
      const ids = await publish(t, healthy.appId, 5);
      await waitForSucceeded(t, ids, 5000);
      assert.equal(await leased(hole.id), 2, 'the black hole holds exactly its share of 2');
      assert.equal(
        (await holes.requests()).filter((r) => r.path === '/hole-1').length,
        2,
        'no third request reached the black hole',
      );
      const latencies = await firstAttemptLatencies(t, ids);
      // Starved, each would wait for a 6 s timeout of the black hole; the bound leaves room for a busy machine.
      assert.ok(
        latencies.at(-1)! < 2500,
        `healthy publish → delivery ${latencies.map((x) => x.toFixed(0)).join(', ')} ms`,
      );
    },
  );

  test(
    'window 1,024 claiming 100 ahead (the default): the black hole has 512 requests open, never more, and 50 ' +
      'deliveries waiting for a slot',
    async () => {
      const hole = await endpointAt(t, holes.url('/hole-1'));
      const healthy = await endpointAt(t, other.url('/ok'));
      await publish(t, hole.appId, 700);
      start(1024, 30_000, 1024, 100);
      await holes.waitForCount(512, 30_000, (r) => r.path === '/hole-1');
      const ids = await publish(t, healthy.appId, 20);
      await waitForSucceeded(t, ids, 10_000);
      // A claim's share is over the window and what is claimed ahead: floor(1,124 × 0.5) = 562 leases.
      assert.equal(await leased(hole.id), 562, 'the black hole holds 512 open requests and 50 waiting deliveries');
      assert.equal(
        (await holes.requests()).filter((r) => r.path === '/hole-1').length,
        512,
        'a waiting delivery does not open past the share of open requests',
      );
    },
  );

  test(
    'window 1,024: a black-holed endpoint with a backlog of 700 never holds more than its share of 512, across ' +
      'claims of 100',
    async () => {
      const hole = await endpointAt(t, holes.url('/hole-1'));
      const healthy = await endpointAt(t, other.url('/ok'));
      await publish(t, hole.appId, 700);
      start(1024, 30_000, 1024);
      await holes.waitForCount(512, 30_000, (r) => r.path === '/hole-1');
      // Later claims run (they deliver these), and would hand the black hole more if its share leaked.
      const ids = await publish(t, healthy.appId, 20);
      await waitForSucceeded(t, ids, 10_000);
      assert.equal(await leased(hole.id), 512);
      assert.equal((await holes.requests()).filter((r) => r.path === '/hole-1').length, 512);
    },
  );

  test(
    'a healthy endpoint on the same origin as a black hole keeps its latency (each endpoint has its own ' +
      'connection pool)',
    async () => {
      const hole = await endpointAt(t, holes.url('/hole-1'));
      const healthy = await endpointAt(t, holes.url('/ok'));
      await publish(t, hole.appId, 20);
      start(8, 6000, 4); // the black hole's share (4) is every connection one pool may open
      await holes.waitForCount(4, 10_000, (r) => r.path === '/hole-1');
      const ids = await publish(t, healthy.appId, 10);
      await waitForSucceeded(t, ids, 8000);
      const latencies = await firstAttemptLatencies(t, ids);
      assert.ok(
        latencies.at(-1)! < 2500,
        `healthy (same origin) publish → delivery ${latencies.map((x) => x.toFixed(0)).join(', ')} ms`,
      );
    },
  );

  test(
    'two black-holed endpoints with backlogs leave the reserve of the window to a healthy endpoint published ' +
      'after them',
    async () => {
      const hole1 = await endpointAt(t, holes.url('/hole-1'));
      const hole2 = await endpointAt(t, holes.url('/hole-2'));
      const healthy = await endpointAt(t, other.url('/ok'));
      await publish(t, hole1.appId, 10);
      await publish(t, hole2.appId, 10);
      start(4, 6000, 4);
      await holes.waitForCount(3, 10_000, (r) => r.path.startsWith('/hole-'));
      const ids = await publish(t, healthy.appId, 5);
      await waitForSucceeded(t, ids, 5000);
      assert.equal(
        (await leased(hole1.id)) + (await leased(hole2.id)),
        3,
        'the two black holes hold 3 of 4 slots: one is kept for answering endpoints',
      );
      const latencies = await firstAttemptLatencies(t, ids);
      assert.ok(
        latencies.at(-1)! < 2500,
        `healthy publish → delivery ${latencies.map((x) => x.toFixed(0)).join(', ')} ms`,
      );
    },
  );
});
