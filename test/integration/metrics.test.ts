/**
 * Prometheus metrics: bounded label sets (no tenant identifier whatever the number of applications),
 * /metrics behind TIDINGS_METRICS_TOKEN, backlog gauges equal to the database's counts and shared by
 * concurrent scrapes, and the time histograms counting each written attempt once (fenced-out writes not).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { createPgBacklogReader } from '../../src/adapters/postgres/delivery/stats-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createPublisher } from '../../src/app/publish.ts';
import { deliveryStoreMetrics } from '../../src/main/delivery-metrics.ts';
import { registerBacklogGauges } from '../../src/observability/backlog-gauges.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { AttemptRecord, ClaimedDelivery } from '../../src/ports/delivery-store.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

const cipher = testCipher();
const METRICS_TOKEN = 'metrics-token-0123456789';

/** Label sets of one metric family in a Prometheus text page. */
function labelSets(text: string, family: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(family) && !l.startsWith('#'))
    .map((l) => l.slice(family.length).split(' ')[0]!);
}

describe('metrics over the API', () => {
  let h: ApiHarness;
  before(async () => {
    h = await startApi(freshServerDatabase, { TIDINGS_METRICS_TOKEN: METRICS_TOKEN });
  });
  after(async () => {
    await h.close();
  });
  const scrape = async (): Promise<string> => {
    const res = await h.request('GET', '/metrics', { token: METRICS_TOKEN });
    assert.equal(res.status, 200);
    return res.text();
  };

  test(
    "the publish counter's label set stays constant when 500 " + 'applications publish, and no application id appears',
    async () => {
      const before = labelSets(await scrape(), 'tidings_messages_published_total');
      const ids: string[] = [];
      for (let i = 0; i < 500; i += 8) {
        await Promise.all(
          Array.from({ length: Math.min(8, 500 - i) }, async (_, k) => {
            const app = await h.svix.application.create({ name: `tenant ${i + k}` });
            ids.push(app.id);
            await h.svix.message.create(app.id, { eventType: 'e.x', payload: { n: i + k } });
          }),
        );
      }
      const text = await scrape();
      assert.deepEqual(labelSets(text, 'tidings_messages_published_total'), before);
      assert.match(text, /^tidings_messages_published_total 500$/m);
      for (const id of ids) assert.ok(!text.includes(id), `application id ${id} in /metrics`);
    },
  );

  test('with TIDINGS_METRICS_TOKEN set, /metrics without that Bearer token is 401', async () => {
    for (const token of [null, 'wrong-token-0123456789', 'admin']) {
      const res = await h.request('GET', '/metrics', token === 'admin' ? {} : { token });
      assert.equal(res.status, 401, `token ${String(token)}`);
      assert.equal(((await res.json()) as { code: string }).code, 'authentication_failed');
    }
  });
});

describe('backlog gauges and time histograms on the PostgreSQL server', () => {
  let t: TestDatabase;
  before(async () => {
    t = await freshServerDatabase();
  });
  after(async () => {
    await t.drop();
  });

  const publish = async (appId: string, count: number): Promise<void> => {
    const publisher = createPublisher({
      messages: createPgMessageStore(t.db, cipher, () => undefined),
      clock: { nowMs: () => Date.now(), sqlNow: () => null },
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
          payload: Buffer.from('{}'),
          retentionHours: null,
        }),
      );
    }
  };
  const outcome = (d: ClaimedDelivery, ok: boolean, token = d.fencingToken): AttemptRecord => ({
    deliveryId: d.deliveryId,
    fencingToken: token,
    dispatcherId: d.dispatcherId,
    endpointId: d.endpointId,
    attemptId: `atmpt_${d.deliveryId}_${token}`,
    attemptNumber: d.attemptNumber,
    trigger: 'scheduled',
    url: d.url,
    succeeded: ok,
    statusCode: ok ? 200 : 500,
    responseBody: '',
    location: null,
    errorKind: ok ? null : 'http_status',
    errorDetail: null,
    durationMs: 3,
    next: ok ? { next: 'succeeded' } : { next: 'retry', delayMs: 600_000 },
    throttleEndpointMs: null,
    disableEndpointReason: null,
  });
  const gauge = async (registry: Registry, name: string, kind?: string): Promise<number> => {
    const m = (await registry.getSingleMetric(name)!.get()).values.find(
      (v) => kind === undefined || v.labels.kind === kind,
    );
    return m?.value ?? Number.NaN;
  };

  test(
    'backlog gauges equal the counts in the database through a burst, claims and retries; concurrent scrapes ' +
      'share one query',
    async () => {
      const appId = await insertApp(t.db);
      const eps = [
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' }),
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/b' }),
      ];
      await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/p', status: 'paused' });
      const registry = new Registry();
      const read = createPgBacklogReader(t.db);
      let queries = 0;
      let now = 0;
      const gauges = registerBacklogGauges(registry, {
        read: async (cap) => {
          queries += 1;
          return read(cap);
        },
        cap: 10_000,
        cacheMs: 5000,
        nowMs: () => now,
      });
      const truth = async () =>
        (
          await t.db.query<{ due: number; scheduled: number; held: number; leased: number }>(`
      SELECT count(*) FILTER (WHERE state = 'pending' AND next_attempt_at <= now())::int AS due,
             count(*) FILTER (WHERE state = 'pending' AND next_attempt_at > now()
               AND next_attempt_at < 'infinity')::int AS scheduled,
             count(*) FILTER (WHERE state = 'pending' AND next_attempt_at = 'infinity')::int AS held,
             count(*) FILTER (WHERE state = 'leased' AND lease_expires_at > now())::int AS leased FROM deliveries`)
        ).rows[0]!;
      const check = async (what: string) => {
        now += 5000;
        await gauges.refresh();
        const want = await truth();
        for (const kind of ['due', 'scheduled', 'held', 'leased'] as const)
          assert.equal(await gauge(registry, 'tidings_backlog_deliveries', kind), want[kind], `${what}: ${kind}`);
      };
      await publish(appId, 40); // 80 due, 40 held
      await check('after the burst');
      const store = createPgDeliveryStore(t.db, cipher);
      const claimed = (await store.claim({ dispatcherId: 'W', limit: 30, leaseMs: 60_000, maxReclaims: 5, now: null }))
        .deliveries;
      await check('after a claim');
      // Five failures on each endpoint: under the breaker's threshold of 10 consecutive ones, whatever order the
      // claim returned the deliveries in.
      const failing = eps.flatMap((ep) => claimed.filter((d) => d.endpointId === ep.id).slice(0, 5));
      assert.equal(failing.length, 10);
      await store.recordAttempts(
        failing.map((d) => outcome(d, false)),
        null,
      );
      await check('after ten retries');
      assert.ok((await gauge(registry, 'tidings_backlog_oldest_due_age_seconds')) > 0);
      assert.equal(await gauge(registry, 'tidings_breakers_open'), 0);
      await t.db.query(`UPDATE endpoints SET breaker_state = 'open' WHERE id = $1`, [eps[0]!.id]);
      now += 5000;
      await gauges.refresh();
      assert.equal(await gauge(registry, 'tidings_breakers_open'), 1);

      now += 5000;
      const before = queries;
      await Promise.all([registry.metrics(), registry.metrics(), registry.metrics(), registry.metrics()]);
      assert.equal(queries - before, 1, 'four concurrent scrapes, one query');
      await registry.metrics();
      assert.equal(queries - before, 1, 'a scrape within the cache time runs no query');
    },
  );

  test('the backlog counts stop at the cap', async () => {
    const read = createPgBacklogReader(t.db);
    const r = await read(7);
    assert.equal(r.due, 7);
    assert.equal(r.held, 7);
  });

  test('the time histograms count each written attempt once; a fenced-out write counts nothing', async () => {
    await t.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
    const appId = await insertApp(t.db);
    await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/h' });
    await publish(appId, 6);
    const metrics = createMetrics({ defaultMetrics: false });
    const store = createPgDeliveryStore(t.db, cipher, { observer: deliveryStoreMetrics(metrics) });
    const claimed = (await store.claim({ dispatcherId: 'W', limit: 10, leaseMs: 60_000, maxReclaims: 5, now: null }))
      .deliveries;
    assert.equal(claimed.length, 6);
    const [a, b, c, ...rest] = claimed;
    await store.recordAttempts(
      [outcome(a!, true), outcome(b!, false), outcome(c!, true, String(BigInt(c!.fencingToken) + BigInt(1)))],
      null,
    );
    await store.recordAttempts(
      rest.map((d) => outcome(d, true)),
      null,
    );
    const count = async (name: string): Promise<number> =>
      (await metrics.registry.getSingleMetric(name)!.get()).values.find(
        (v) => (v as { metricName?: string }).metricName === `${name}_count`,
      )!.value;
    assert.equal(await count('tidings_queue_wait_seconds'), 5, 'five written, one fenced out');
    assert.equal(await count('tidings_publish_to_first_attempt_seconds'), 5);
    assert.equal(await count('tidings_publish_to_delivered_seconds'), 4, 'four successes written');
    assert.equal(await count('tidings_record_batch_size'), 2, 'two statements');
    const sum = (await metrics.registry.getSingleMetric('tidings_record_batch_size')!.get()).values.find(
      (v) => (v as { metricName?: string }).metricName === 'tidings_record_batch_size_sum',
    )!.value;
    assert.equal(sum, 6, 'rows sent per statement: 3 + 3');
  });
});
