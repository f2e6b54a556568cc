/**
 * The statistics routes on both engines: a timeline built through the real publish, claim and record
 * statements under a manual clock, and the overview and time-in-state figures checked against it by hand.
 * The expected percentiles are PostgreSQL's percentile_cont (linear interpolation between the closest
 * ranks); the API estimates them from rollup histograms, so they are compared within the documented bound
 * (PERCENTILE_RELATIVE_ERROR). Half of the timeline is rolled up before the tests, so every read mixes
 * rollup rows, raw edges and the raw tail above the watermark.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { createPgStatsRollup } from '../../src/adapters/postgres/delivery/stats-rollup.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { PERCENTILE_RELATIVE_ERROR } from '../../src/domain/duration-histogram.ts';
import type { NextStep } from '../../src/domain/retry-schedule.ts';
import type { AttemptRecord, ClaimedDelivery, DeliveryStore } from '../../src/ports/delivery-store.ts';
import { ENGINES } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

const LEASE_MS = 30_000;

function record(d: ClaimedDelivery, durationMs: number, next: NextStep): AttemptRecord {
  const ok = next.next === 'succeeded';
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
    durationMs,
    next,
    throttleEndpointMs: null,
    disableEndpointReason: null,
  };
}

interface Pct {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  count: number;
}
interface TimeInStateBody {
  window: string;
  since: string;
  until: string;
  bucketMs: number;
  appId: string | null;
  endpointId: string | null;
  queueWaitMs: Pct;
  attemptLatencyMs: Pct;
  timeToDeliveredMs: Pct;
  attempts: number;
  succeeded: number;
  retriesScheduled: number;
  retryRate: number | null;
  deadLetterInflow: number;
  reclaims: number;
  series: { at: string; attempts: number; succeeded: number; failed: number }[];
}

/** Asserts exact counts, and percentiles within the histogram's bound of the exact percentile_cont figures. */
function assertPct(actual: Pct, expected: Pct, what: string): void {
  assert.equal(actual.count, expected.count, `${what}: count`);
  for (const k of ['p50', 'p90', 'p99'] as const) {
    if (expected[k] === null) assert.equal(actual[k], null, `${what}: ${k}`);
    else
      assert.ok(
        Math.abs(actual[k]! - expected[k]) <= PERCENTILE_RELATIVE_ERROR * expected[k] + 1e-9,
        `${what}: ${k} = ${actual[k]}, expected ${expected[k]} ± ${(PERCENTILE_RELATIVE_ERROR * 100).toFixed(2)} %`,
      );
  }
}

for (const engine of ENGINES) {
  describe(`stats API on ${engine.name}`, () => {
    const clock = new ManualClock();
    const t0 = clock.nowMs();
    let h: ApiHarness;
    let store: DeliveryStore;
    let appA: string, appB: string, e1: string, e2: string, e3: string;
    const at = (ms: number): void => clock.set(t0 + ms);
    const publish = async (appId: string): Promise<void> => {
      const publisher = createPublisher({
        messages: createPgMessageStore(h.database.db, h.cipher, () => undefined),
        clock,
        random: cryptoRandom,
      });
      await runTx(h.database.db, (tx) =>
        publisher.publish(tx, {
          appId,
          eventType: 'e',
          eventId: null,
          channels: null,
          tags: null,
          payload: Buffer.from('{}'),
          retentionHours: null,
        }),
      );
    };
    const claim = async (limit = 10) =>
      (await store.claim({ dispatcherId: 'W', limit, leaseMs: LEASE_MS, maxReclaims: 5, now: clock.sqlNow() }))
        .deliveries;
    const get = async <T>(path: string, token?: string): Promise<T> => {
      const res = await h.request('GET', path, token === undefined ? {} : { token });
      assert.equal(res.status, 200, `${path}: ${res.status} ${await res.clone().text()}`);
      return (await res.json()) as T;
    };

    before(async () => {
      h = await startApi(engine.fresh, {}, { clock });
      store = createPgDeliveryStore(h.database.db, h.cipher, {
        policy: {
          breakerThreshold: 2,
          breakerCooldownMs: 1000,
          breakerMaxCooldownMs: 1000,
          autoDisableAfterMs: 86_400_000,
        },
      });
      appA = await insertApp(h.database.db, 'A');
      appB = await insertApp(h.database.db, 'B');
      e1 = (await insertEndpoint(h.database.db, h.cipher, { appId: appA, url: 'http://127.0.0.1:9/1' })).id;
      e2 = (await insertEndpoint(h.database.db, h.cipher, { appId: appA, url: 'http://127.0.0.1:9/2' })).id;
      e3 = (await insertEndpoint(h.database.db, h.cipher, { appId: appB, url: 'http://127.0.0.1:9/3' })).id;

      // t=0 publish m1 (A: e1, e2) and m2 (B: e3); t=100 all three claimed (queue wait 100 each).
      at(0);
      await publish(appA);
      await publish(appB);
      at(100);
      const first = await claim();
      assert.equal(first.length, 3);
      const by = (batch: readonly ClaimedDelivery[], ep: string) => batch.find((d) => d.endpointId === ep)!;
      // t=300: e1 succeeds in 50 ms, e2 fails in 200 ms (retry due at 1300), e3 succeeds in 20 ms.
      at(300);
      await store.recordAttempts(
        [
          record(by(first, e1), 50, { next: 'succeeded' }),
          record(by(first, e2), 200, { next: 'retry', delayMs: 1000 }),
          record(by(first, e3), 20, { next: 'succeeded' }),
        ],
        clock.sqlNow(),
      );
      // t=1800: e2 claimed again (waited 500 ms past its due time), fails in 80 ms and is dead-lettered; its
      // breaker opens (threshold 2).
      at(1800);
      const second = await claim();
      assert.deepEqual(
        second.map((d) => d.endpointId),
        [e2],
      );
      at(1900);
      await store.recordAttempts([record(second[0]!, 80, { next: 'dead', reason: 'exhausted' })], clock.sqlNow());
      // t=2000: m3 to B, claimed at once (wait 0); the lease expires, t=32001 it is reclaimed; t=32100 it succeeds in
      // 10 ms.
      at(2000);
      await publish(appB);
      assert.equal((await claim()).length, 1);
      at(2000 + LEASE_MS + 1);
      const reclaimed = await claim();
      assert.equal(reclaimed.length, 1);
      assert.equal(reclaimed[0]!.reclaimed, true);
      at(32_100);
      await store.recordAttempts([record(reclaimed[0]!, 10, { next: 'succeeded' })], clock.sqlNow());
      // Fold the first half of the timeline into the rollups; the rest stays the raw tail.
      const maxId = Number(
        (await h.database.db.query<{ n: string }>('SELECT max(id)::bigint AS n FROM delivery_events')).rows[0]!.n,
      );
      const step = await createPgStatsRollup(h.database.db).step(clock.sqlNow(), Math.floor(maxId / 2));
      assert.equal(step.rolledIds, Math.floor(maxId / 2));
      assert.equal(step.caughtUp, false);
    });
    after(async () => {
      await h.close();
    });

    test(
      'time-in-state over the whole installation: percentiles, counts ' + 'and the attempts series match the timeline',
      async () => {
        at(32_100);
        const r = await get<TimeInStateBody>('/api/v1/stats/time-in-state?window=5m');
        assert.equal(r.window, '5m');
        assert.equal(r.until, new Date(t0 + 32_100).toISOString());
        assert.equal(r.since, new Date(t0 + 32_100 - 300_000).toISOString());
        assert.equal(r.appId, null);
        // waits [0, 100, 100, 100, 500]; latencies [10, 20, 50, 80, 200]; delivered [300, 300, 30100].
        assertPct(r.queueWaitMs, { p50: 100, p90: 340, p99: 484, count: 5 }, 'queue wait');
        assertPct(r.attemptLatencyMs, { p50: 50, p90: 152, p99: 195.2, count: 5 }, 'attempt latency');
        assertPct(r.timeToDeliveredMs, { p50: 300, p90: 24_140, p99: 29_504, count: 3 }, 'time to delivered');
        assert.deepEqual(
          [r.attempts, r.succeeded, r.retriesScheduled, r.deadLetterInflow, r.reclaims],
          [5, 3, 1, 1, 1],
        );
        assert.equal(r.retryRate, 1 / 5);
        assert.equal(r.bucketMs, 10_000);
        assert.equal(r.series.length, 31, '(until − 5 min, until] in 10 s buckets');
        const nonZero = r.series.filter((p) => p.attempts > 0);
        assert.deepEqual(nonZero, [
          { at: new Date(t0).toISOString(), attempts: 4, succeeded: 2, failed: 2 },
          { at: new Date(t0 + 30_000).toISOString(), attempts: 1, succeeded: 1, failed: 0 },
        ]);
      },
    );

    test('the figures stay the same while the roll-up catches up with the timeline', async () => {
      at(32_100);
      const reads = [
        '/api/v1/stats/time-in-state?window=5m',
        `/api/v1/stats/time-in-state?window=1h&app_id=${appA}`,
        `/api/v1/stats/time-in-state?window=24h&app_id=${appB}&endpoint_id=${e3}`,
        '/api/v1/stats/time-in-state?window=7d',
      ];
      const before = await Promise.all(reads.map((p) => get<TimeInStateBody>(p)));
      const rollup = createPgStatsRollup(h.database.db);
      let step = await rollup.step(clock.sqlNow(), 1_000);
      while (!step.caughtUp) step = await rollup.step(clock.sqlNow(), 1_000);
      const [rows] = (
        await h.database.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM stats_rollups WHERE app_id = '' AND level_ms = 1000",
        )
      ).rows;
      assert.ok(rows!.n > 0, 'the rollups hold the timeline');
      const after = await Promise.all(reads.map((p) => get<TimeInStateBody>(p)));
      assert.deepEqual(after, before);
      assert.equal(after[3]!.attempts, 5);
      assertPct(after[3]!.attemptLatencyMs, { p50: 50, p90: 152, p99: 195.2, count: 5 }, '7d attempt latency');
    });

    test('time-in-state of one application and of one endpoint count only theirs', async () => {
      at(32_100);
      const a = await get<TimeInStateBody>(`/api/v1/stats/time-in-state?window=1h&app_id=${appA}`);
      assert.equal(a.appId, appA);
      assertPct(a.queueWaitMs, { p50: 100, p90: 420, p99: 492, count: 3 }, 'A queue wait');
      assertPct(a.attemptLatencyMs, { p50: 80, p90: 176, p99: 197.6, count: 3 }, 'A attempt latency');
      assertPct(a.timeToDeliveredMs, { p50: 300, p90: 300, p99: 300, count: 1 }, 'A time to delivered');
      assert.deepEqual([a.attempts, a.succeeded, a.retriesScheduled, a.deadLetterInflow, a.reclaims], [3, 1, 1, 1, 0]);
      assert.equal(a.bucketMs, 60_000);
      const e = await get<TimeInStateBody>(`/api/v1/stats/time-in-state?window=24h&app_id=${appB}&endpoint_id=${e3}`);
      assert.equal(e.endpointId, e3);
      assert.deepEqual([e.attempts, e.succeeded, e.reclaims, e.queueWaitMs.count], [2, 2, 1, 2]);
      assertPct(e.timeToDeliveredMs, { p50: 15_200, p90: 27_120, p99: 29_802, count: 2 }, 'e3 time to delivered');
    });

    test('time-in-state leaves out what happened before the window', async () => {
      at(301_100); // the 5 min window is (1100, 301100]: the second claim of e2 onwards
      const r = await get<TimeInStateBody>('/api/v1/stats/time-in-state?window=5m');
      assertPct(r.queueWaitMs, { p50: 250, p90: 450, p99: 495, count: 2 }, 'queue wait');
      assert.deepEqual([r.attempts, r.succeeded, r.retriesScheduled, r.deadLetterInflow, r.reclaims], [2, 1, 0, 1, 1]);
    });

    test('an application credential sees only its application; another application is not found', async () => {
      at(32_100);
      const token = await h.appKey(appB);
      const own = await get<TimeInStateBody>('/api/v1/stats/time-in-state?window=5m', token);
      assert.equal(own.appId, appB);
      assert.equal(own.attempts, 2);
      const overview = await get<{ appId: string }>('/api/v1/stats/overview', token);
      assert.equal(overview.appId, appB);
      assert.equal(
        (await errorOf(await h.request('GET', `/api/v1/stats/time-in-state?app_id=${appA}`, { token }))).status,
        404,
      );
      assert.equal(
        (await errorOf(await h.request('GET', `/api/v1/stats/overview?app_id=${appA}`, { token }))).status,
        404,
      );
      assert.equal(
        (
          await errorOf(
            await h.request('GET', `/api/v1/stats/time-in-state?app_id=${appB}&endpoint_id=${e1}`, { token }),
          )
        ).status,
        404,
      );
    });

    test(
      'a window that is not 5m, 1h, 24h or 7d, or an endpoint without its application, is refused naming the ' +
        'field',
      async () => {
        const bad = await errorOf(await h.request('GET', '/api/v1/stats/time-in-state?window=2h'));
        assert.equal(bad.status, 422);
        assert.match(JSON.stringify(bad.detail), /window/);
        const noApp = await errorOf(await h.request('GET', `/api/v1/stats/time-in-state?endpoint_id=${e1}`));
        assert.equal(noApp.status, 422);
        assert.match(JSON.stringify(noApp.detail), /app_id/);
      },
    );

    test('overview: deliveries by state, backlog, dead letters of the last 24 h, open breakers', async () => {
      // t=32150: m4 to A (e1, e2): both claimed (e2 as the half-open probe); e1's fails, retry due in 60 s.
      at(32_150);
      await publish(appA);
      const m4 = await claim();
      assert.equal(m4.length, 2);
      await store.recordAttempts(
        [
          record(
            m4.find((d) => d.endpointId === e1)!,
            5,
            { next: 'retry', delayMs: 60_000 },
          ),
        ],
        clock.sqlNow(),
      );
      // t=32150: m5 to B (e3) stays due; t=32200 it is 50 ms overdue.
      await publish(appB);
      at(32_200);
      const all = await get<Record<string, unknown>>('/api/v1/stats/overview');
      assert.deepEqual(all, {
        appId: null,
        deliveries: { pending: 2, leased: 1, succeeded: 3, dead: 1, skipped: 0, canceled: 0 },
        backlog: {
          dueNow: 1,
          oldestDueAgeMs: 50,
          leasedInFlight: 1,
          scheduledLater: 1,
          held: 0,
          heldBy: { paused: 0, breaker: 0, throttled: 0 },
        },
        deadLettersLast24h: 1,
        openBreakers: { count: 1, endpointIds: [e2] },
        runningTasks: 0,
      });
      const b = await get<Record<string, unknown>>(`/api/v1/stats/overview?app_id=${appB}`);
      assert.deepEqual(b, {
        appId: appB,
        deliveries: { pending: 1, leased: 0, succeeded: 2, dead: 0, skipped: 0, canceled: 0 },
        backlog: {
          dueNow: 1,
          oldestDueAgeMs: 50,
          leasedInFlight: 0,
          scheduledLater: 0,
          held: 0,
          heldBy: { paused: 0, breaker: 0, throttled: 0 },
        },
        deadLettersLast24h: 0,
        openBreakers: { count: 0, endpointIds: [] },
        runningTasks: 0,
      });
      at(32_200 + 86_400_000);
      const later = await get<{ deadLettersLast24h: number; backlog: { leasedInFlight: number } }>(
        `/api/v1/stats/overview?app_id=${appA}`,
      );
      assert.equal(later.deadLettersLast24h, 0, 'the dead letter is older than 24 h');
      assert.equal(later.backlog.leasedInFlight, 0, "the probe's lease has expired");
    });
  });
}
