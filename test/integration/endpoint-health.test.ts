/**
 * Endpoint health and flow control (docs/adr/0004-endpoint-flow-control.md) on real databases: the breaker state
 * machine under a manual clock (every transition, cool-down growth, the single probe), fairness across endpoints,
 * auto-disable with operational events; and with four dispatchers on the PostgreSQL server: exact failure counters,
 * the in-flight cap measured at the receiver, the rate limit, one probe per cool-down.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createHttpSender } from '../../src/adapters/http-sender/http-sender.ts';
import { createPgDeliveryStore, type FlowPolicy } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { createPgOperationalEvents } from '../../src/adapters/postgres/delivery/operational-events.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom, systemClock } from '../../src/adapters/system/system-clock.ts';
import { createDispatcher, type Dispatcher } from '../../src/app/dispatcher/dispatcher.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/domain/retry-schedule.ts';
import type { Clock } from '../../src/ports/clock.ts';
import type { AttemptRecord, ClaimedDelivery, DeliveryStore } from '../../src/ports/delivery-store.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { silentLogger } from '../support/logger.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { startTestReceiver, type TestReceiver, type ReceivedRequest } from '../support/test-receiver.ts';

const LEASE_MS = 30_000;
const cipher = testCipher();

function outcome(d: ClaimedDelivery, ok: boolean, delayMs = 0): AttemptRecord {
  return {
    deliveryId: d.deliveryId,
    fencingToken: d.fencingToken,
    dispatcherId: d.dispatcherId,
    endpointId: d.endpointId,
    attemptId: `atmpt_${d.deliveryId}_${d.fencingToken}`,
    attemptNumber: d.attemptNumber,
    trigger: 'scheduled',
    url: d.url,
    succeeded: ok,
    statusCode: ok ? 200 : 500,
    responseBody: '',
    location: null,
    errorKind: ok ? null : 'http_status',
    errorDetail: null,
    durationMs: 1,
    next: ok ? { next: 'succeeded' } : { next: 'retry', delayMs },
    throttleEndpointMs: null,
    disableEndpointReason: null,
  };
}

async function publish(t: TestDatabase, clock: Clock, appId: string, count: number): Promise<void> {
  const publisher = createPublisher({
    messages: createPgMessageStore(t.db, cipher, () => undefined),
    clock,
    random: cryptoRandom,
  });
  for (let i = 0; i < count; i++) {
    await runTx(t.db, (tx) =>
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
  }
}

async function endpointRow(t: TestDatabase, id: string): Promise<Record<string, unknown>> {
  return (
    await t.db.query(
      'SELECT status, breaker_state, consecutive_failures, breaker_opened_count, breaker_open_until FROM ' +
        'endpoints WHERE id = $1',
      [id],
    )
  ).rows[0]!;
}

for (const engine of ENGINES) {
  describe(`endpoint health on ${engine.name}`, () => {
    let t: TestDatabase;
    const clock = new ManualClock();
    before(async () => {
      t = await engine.fresh();
    });
    after(async () => {
      await t.drop();
    });
    beforeEach(async () => {
      await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
    });

    const policy: FlowPolicy = {
      breakerThreshold: 3,
      breakerCooldownMs: 1000,
      breakerMaxCooldownMs: 3000,
      autoDisableAfterMs: 60_000,
    };
    const claim = (store: DeliveryStore, limit = 10, dispatcherId = 'W') =>
      store.claim({ dispatcherId, limit, leaseMs: LEASE_MS, maxReclaims: 5, now: clock.sqlNow() });

    test(
      'breaker: closed → open after the threshold; deferred without attempts; one probe after the cool-down; a ' +
        'failed probe re-opens with a doubled cool-down; a successful one closes it',
      async () => {
        const appId = await insertApp(t.db);
        const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
        await publish(t, clock, appId, 6);
        const store = createPgDeliveryStore(t.db, cipher, { policy });
        const first = await claim(store, 3);
        assert.equal(first.deliveries.length, 3);
        await store.recordAttempts(
          first.deliveries.map((d) => outcome(d, false)),
          clock.sqlNow(),
        );
        const opened = await endpointRow(t, ep.id);
        assert.equal(opened.breaker_state, 'open');
        assert.equal(opened.consecutive_failures, 3);
        assert.equal((opened.breaker_open_until as Date).getTime(), clock.nowMs() + 1000);

        assert.equal((await claim(store)).deliveries.length, 0, 'an open breaker defers every delivery');
        const charged = (
          await t.db.query(`SELECT sum(attempt_count)::int AS n FROM deliveries WHERE endpoint_id = $1`, [ep.id])
        ).rows[0]!;
        assert.equal(charged.n, 3, 'deferred deliveries are not charged attempts');

        clock.advance(999);
        assert.equal((await claim(store)).deliveries.length, 0);
        clock.advance(1);
        const probe = await claim(store, 10);
        assert.equal(probe.deliveries.length, 1, 'exactly one probe after the cool-down');
        assert.equal((await endpointRow(t, ep.id)).breaker_state, 'half_open');
        assert.equal((await claim(store, 10)).deliveries.length, 0, 'no second probe while the first is in flight');

        await store.recordAttempts([outcome(probe.deliveries[0]!, false)], clock.sqlNow());
        const reopened = await endpointRow(t, ep.id);
        assert.equal(reopened.breaker_state, 'open');
        assert.equal((reopened.breaker_open_until as Date).getTime(), clock.nowMs() + 2000, 'the cool-down doubles');
        clock.advance(1999);
        assert.equal((await claim(store)).deliveries.length, 0);
        clock.advance(1);
        const probe2 = await claim(store, 10);
        assert.equal(probe2.deliveries.length, 1);
        await store.recordAttempts([outcome(probe2.deliveries[0]!, true)], clock.sqlNow());
        const closed = await endpointRow(t, ep.id);
        assert.deepEqual(
          { state: closed.breaker_state, failures: closed.consecutive_failures, opened: closed.breaker_opened_count },
          { state: 'closed', failures: 0, opened: 0 },
        );
        assert.equal((await claim(store, 10)).deliveries.length, 5, 'the schedule resumes once the breaker closes');
        const kinds = (
          await t.db.query('SELECT kind FROM endpoint_events WHERE endpoint_id = $1 ORDER BY id', [ep.id])
        ).rows.map((r) => r.kind);
        assert.deepEqual(kinds, [
          'breaker_opened',
          'breaker_half_open',
          'breaker_opened',
          'breaker_half_open',
          'breaker_closed',
        ]);
      },
    );

    test(
      'a 429 with Retry-After holds that endpoint back for the stated time while other endpoints keep being ' +
        'claimed',
      async () => {
        const appId = await insertApp(t.db);
        const stormy = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/storm' });
        await publish(t, clock, appId, 4);
        const calmApp = await insertApp(t.db);
        const calm = await insertEndpoint(t.db, cipher, { appId: calmApp, url: 'http://127.0.0.1:9/calm' });
        const store = createPgDeliveryStore(t.db, cipher, { policy: { ...policy, breakerThreshold: 1000 } });
        const first = await claim(store, 1);
        assert.equal(first.deliveries[0]!.endpointId, stormy.id);
        await store.recordAttempts(
          [{ ...outcome(first.deliveries[0]!, false, 1000), statusCode: 429, throttleEndpointMs: 60_000 }],
          clock.sqlNow(),
        );
        await publish(t, clock, calmApp, 2);
        clock.advance(1000);
        const during = await claim(store, 10);
        assert.deepEqual(
          new Set(during.deliveries.map((d) => d.endpointId)),
          new Set([calm.id]),
          'only the calm endpoint is served while the other is throttled',
        );
        clock.advance(59_000);
        const afterThrottle = await claim(store, 10);
        assert.equal(
          afterThrottle.deliveries.filter((d) => d.endpointId === stormy.id).length,
          4,
          'the throttled endpoint resumes when the Retry-After time is over',
        );
      },
    );

    test('breaker cool-down growth stops at the maximum', async () => {
      const appId = await insertApp(t.db);
      const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
      await publish(t, clock, appId, 3);
      const store = createPgDeliveryStore(t.db, cipher, { policy });
      await store.recordAttempts(
        (await claim(store, 3)).deliveries.map((d) => outcome(d, false)),
        clock.sqlNow(),
      );
      const cooldowns: number[] = [];
      for (let i = 0; i < 4; i++) {
        const row = await endpointRow(t, ep.id);
        const until = (row.breaker_open_until as Date).getTime();
        cooldowns.push(until - clock.nowMs());
        clock.set(until);
        const p = await claim(store, 10);
        assert.equal(p.deliveries.length, 1);
        await store.recordAttempts([outcome(p.deliveries[0]!, false)], clock.sqlNow());
      }
      assert.deepEqual(cooldowns, [1000, 2000, 3000, 3000]);
    });

    test('fairness: a quiet endpoint is served in the same claim as an endpoint with a large backlog', async () => {
      const appId = await insertApp(t.db);
      const busy = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/busy' });
      await publish(t, clock, appId, 300);
      const quietApp = await insertApp(t.db);
      const quiet = await insertEndpoint(t.db, cipher, { appId: quietApp, url: 'http://127.0.0.1:9/quiet' });
      clock.advance(1);
      await publish(t, clock, quietApp, 1);
      const store = createPgDeliveryStore(t.db, cipher, { policy });
      const got = await claim(store, 20);
      assert.equal(
        got.deliveries.filter((d) => d.endpointId === quiet.id).length,
        1,
        'the quiet endpoint is not drained behind the busy one',
      );
      assert.equal(
        got.deliveries.filter((d) => d.endpointId === busy.id).length,
        10,
        'each endpoint gets at most its share of one claim',
      );
      const next = await claim(store, 20);
      assert.equal(
        next.deliveries.length,
        20,
        'with the quiet endpoint served, the busy one gets the whole next claim',
      );
    });

    test(
      'an endpoint failing for longer than the auto-disable period is disabled with a reason, its waiting ' +
        'deliveries skipped, and an operational event published',
      async () => {
        const opsApp = await insertApp(t.db, 'operations');
        await insertEndpoint(t.db, cipher, { appId: opsApp, url: 'http://127.0.0.1:9/ops' });
        const appId = await insertApp(t.db);
        const ep = await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
        await publish(t, clock, appId, 3);
        const operational = createPgOperationalEvents(
          opsApp,
          createPgMessageStore(t.db, cipher, () => undefined),
          clock,
          cryptoRandom,
        );
        const store = createPgDeliveryStore(t.db, cipher, {
          policy: { ...policy, breakerThreshold: 1000 },
          operational,
        });
        const a = await claim(store, 1);
        await store.recordAttempts([outcome(a.deliveries[0]!, false, 100)], clock.sqlNow());
        clock.advance(60_000);
        const b = await claim(store, 1);
        await store.recordAttempts([outcome(b.deliveries[0]!, false, 100)], clock.sqlNow());
        const row = (await t.db.query('SELECT status, status_reason FROM endpoints WHERE id = $1', [ep.id])).rows[0]!;
        assert.equal(row.status, 'disabled');
        assert.match(String(row.status_reason), /every attempt failed since/);
        const states = (
          await t.db.query(
            `SELECT state, count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 GROUP BY 1 ORDER BY 1`,
            [ep.id],
          )
        ).rows;
        assert.deepEqual(states, [{ state: 'skipped', n: 3 }]);
        const ops = (
          await t.db.query(`SELECT event_type FROM messages WHERE app_id = $1 ORDER BY id`, [opsApp])
        ).rows.map((r) => r.event_type);
        assert.ok(ops.includes('endpoint.disabled'), `operational events: ${ops.join(', ')}`);
      },
    );
  });
}

describe('flow control with four dispatchers (PostgreSQL server)', () => {
  let t: TestDatabase;
  let receiver: TestReceiver;
  let sender: Sender;
  before(async () => {
    t = await ENGINES[0].fresh();
    receiver = await startTestReceiver();
    sender = createHttpSender({
      connectTimeoutMs: 2000,
      headersTimeoutMs: 5000,
      bodyTimeoutMs: 5000,
      deadlineMs: 10_000,
      maxResponseBytes: 65536,
      responsePrefixBytes: 256,
      maxSocketsPerOrigin: 64,
      egressAllowlist: ['127.0.0.1/32'],
      userAgent: 'test',
    });
  });
  after(async () => {
    await sender.close();
    await receiver.stop();
    await t.drop();
  });
  beforeEach(async () => {
    await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
  });

  const dispatchers = (count: number, clock: Clock, policy: FlowPolicy): Dispatcher[] =>
    Array.from({ length: count }, (_, i) =>
      createDispatcher({
        store: createPgDeliveryStore(t.db, cipher, { policy }),
        sender,
        clock,
        random: cryptoRandom,
        logger: silentLogger,
        settings: {
          dispatcherId: `D${i}`,
          concurrency: 25,
          claimBatch: 25,
          leaseMs: LEASE_MS,
          maxReclaims: 5,
          pollIntervalMs: 20,
          shutdownGraceMs: 5000,
          retryPolicy: DEFAULT_RETRY_POLICY,
          endpointWindowShare: 1,
          windowReserve: 0,
        }, // one endpoint per test: it may take each dispatcher's whole window
      }),
    );

  /** Most requests of `path` in flight at once at the receiver ([arrival, arrival + delay] intervals). */
  const maxOverlap = (requests: readonly ReceivedRequest[], delayMs: number): number => {
    const edges = requests
      .flatMap(
        (r) =>
          [
            [r.receivedAtMs, 1],
            [r.receivedAtMs + delayMs, -1],
          ] as const,
      )
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let most = 0;
    for (const [, step] of edges) most = Math.max(most, (now += step));
    return most;
  };

  test('100 concurrent failures on one endpoint leave its consecutive-failure counter at exactly 100', async () => {
    const clock = new ManualClock();
    const appId = await insertApp(t.db);
    const ep = await insertEndpoint(t.db, cipher, { appId, url: receiver.url('/fail100') });
    await receiver.script('/fail100', [], { status: 500 });
    await publish(t, clock, appId, 100);
    const ds = dispatchers(4, clock, {
      breakerThreshold: 1_000_000,
      breakerCooldownMs: 1000,
      breakerMaxCooldownMs: 1000,
      autoDisableAfterMs: 86_400_000,
    });
    const claimed = await Promise.all(ds.map((d) => d.tick()));
    assert.equal(
      claimed.reduce((a, b) => a + b, 0),
      100,
    );
    await Promise.all(ds.map((d) => d.drained()));
    const row = (await t.db.query('SELECT consecutive_failures FROM endpoints WHERE id = $1', [ep.id])).rows[0]!;
    assert.equal(row.consecutive_failures, 100);
  });

  test('a breaker that opened lets exactly one probe through per cool-down across four dispatchers', async () => {
    const clock = new ManualClock();
    const appId = await insertApp(t.db);
    const ep = await insertEndpoint(t.db, cipher, { appId, url: receiver.url('/probe') });
    await receiver.script('/probe', [], { status: 500 });
    await publish(t, clock, appId, 40);
    const ds = dispatchers(4, clock, {
      breakerThreshold: 5,
      breakerCooldownMs: 1000,
      breakerMaxCooldownMs: 8000,
      autoDisableAfterMs: 86_400_000,
    });
    // Open it: the first claims take everything (failures are recorded after the claims).
    await Promise.all(ds.map((d) => d.tick()));
    await Promise.all(ds.map((d) => d.drained()));
    assert.equal(
      (await t.db.query('SELECT breaker_state FROM endpoints WHERE id = $1', [ep.id])).rows[0]!.breaker_state,
      'open',
    );
    for (let round = 0; round < 3; round++) {
      const until = (await t.db.query('SELECT breaker_open_until FROM endpoints WHERE id = $1', [ep.id])).rows[0]!
        .breaker_open_until as Date;
      clock.set(until.getTime());
      // A retry delay of the default schedule (5 s) is longer than the cool-down: make the rest due now.
      await t.db.query(`UPDATE deliveries SET next_attempt_at = $2 WHERE endpoint_id = $1 AND state = 'pending'`, [
        ep.id,
        clock.sqlNow(),
      ]);
      const claims = await Promise.all(ds.map((d) => d.tick()));
      assert.equal(
        claims.reduce((a, b) => a + b, 0),
        1,
        `round ${round}: exactly one probe`,
      );
      await Promise.all(ds.map((d) => d.drained()));
    }
  });

  test(
    'with an in-flight cap of 5, the receiver never sees more than ' + '5 concurrent requests from that endpoint',
    async () => {
      const appId = await insertApp(t.db);
      const ep = await insertEndpoint(t.db, cipher, { appId, url: receiver.url('/capped') });
      await t.db.query('UPDATE endpoints SET max_in_flight = 5 WHERE id = $1', [ep.id]);
      const delayMs = 60;
      await receiver.script('/capped', [], { status: 200, delayMs });
      await publish(t, systemClock, appId, 60);
      const ds = dispatchers(4, systemClock, {
        breakerThreshold: 10,
        breakerCooldownMs: 1000,
        breakerMaxCooldownMs: 1000,
        autoDisableAfterMs: 86_400_000,
      });
      for (const d of ds) d.start();
      const seen = await receiver.waitForCount(60, 60_000, (r) => r.path === '/capped');
      await Promise.all(ds.map((d) => d.stop()));
      const most = maxOverlap(seen, delayMs);
      assert.ok(most <= 5, `at most 5 in flight, saw ${most}`);
      assert.ok(most >= 4, `the cap is used (saw ${most} at once)`);
    },
  );

  test('a rate limit of 50/s holds within 10 % over 10 s across four dispatchers', async () => {
    const appId = await insertApp(t.db);
    const ep = await insertEndpoint(t.db, cipher, { appId, url: receiver.url('/rated') });
    await t.db.query('UPDATE endpoints SET rate_limit_per_s = 50, rate_burst = 5 WHERE id = $1', [ep.id]);
    await publish(t, systemClock, appId, 700);
    const ds = dispatchers(4, systemClock, {
      breakerThreshold: 10,
      breakerCooldownMs: 1000,
      breakerMaxCooldownMs: 1000,
      autoDisableAfterMs: 86_400_000,
    });
    for (const d of ds) d.start();
    const seen = await receiver.waitForCount(560, 30_000, (r) => r.path === '/rated');
    await Promise.all(ds.map((d) => d.stop()));
    const start = seen[0]!.receivedAtMs + 500;
    const inWindow = seen.filter((r) => r.receivedAtMs >= start && r.receivedAtMs < start + 10_000).length;
    assert.ok(inWindow >= 450 && inWindow <= 550, `50/s over 10 s should be 500 ± 10 %, got ${inWindow}`);
  });
});
