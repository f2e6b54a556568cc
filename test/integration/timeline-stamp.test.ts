/**
 * Timeline rows written by the delivery path carry their stamp without the stamp trigger
 * (docs/adr/0016-hot-path-cost.md, decision 10), on both engines. The publish, claim and record statements write
 * app_id, endpoint_id, since_publish_ms and, on a claimed row, wait_ms themselves; the trigger of migration
 * 1764000008000 runs only for a row that arrives without them, as every other writer's does. The first test disables
 * the trigger and checks every row of a publish → claim → retry → reclaim → success history (with a skipped delivery of
 * a disabled endpoint and a scheduled message) against the instants of a manual clock, so it fails when one of
 * the three statements leaves a column to the trigger or computes it differently; the second does the same on
 * the database clock against the trigger's formulas.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createPublisher } from '../../src/app/publish.ts';
import type { NextStep } from '../../src/domain/retry-schedule.ts';
import type { AttemptRecord, ClaimedDelivery, DeliveryStore } from '../../src/ports/delivery-store.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { ManualClock } from '../support/manual-clock.ts';

const LEASE_MS = 30_000;

function record(d: ClaimedDelivery, next: NextStep): AttemptRecord {
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
    durationMs: 5,
    next,
    throttleEndpointMs: null,
    disableEndpointReason: null,
  };
}

interface StampRow {
  readonly endpoint: string;
  readonly state: string;
  readonly reason: string | null;
  readonly app_id: string | null;
  readonly endpoint_id: string | null;
  readonly since_publish_ms: string | null;
  readonly wait_ms: string | null;
}

for (const engine of ENGINES) {
  describe(`timeline stamps on ${engine.name}`, () => {
    let t: TestDatabase;
    let store: DeliveryStore;
    const cipher = testCipher();
    before(async () => {
      t = await engine.fresh();
      store = createPgDeliveryStore(t.db, cipher);
    });
    after(async () => {
      await t.drop();
    });

    test('the publish, claim and record statements stamp their timeline rows themselves', async () => {
      await t.db.query('ALTER TABLE delivery_events DISABLE TRIGGER delivery_events_stamp');
      try {
        const clock = new ManualClock();
        const t0 = clock.nowMs();
        const at = (ms: number): void => clock.set(t0 + ms);
        const appId = await insertApp(t.db);
        const e1 = (await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/1' })).id;
        const e2 = (await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/2' })).id;
        // A disabled endpoint gets a skipped delivery at publish; a second application's message is scheduled.
        const disabled = (
          await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/off', status: 'disabled' })
        ).id;
        const laterApp = await insertApp(t.db);
        const e3 = (await insertEndpoint(t.db, cipher, { appId: laterApp, url: 'http://127.0.0.1:9/3' })).id;
        const publisher = createPublisher({
          messages: createPgMessageStore(t.db, cipher, () => undefined),
          clock,
          random: cryptoRandom,
        });
        const claim = async () =>
          (await store.claim({ dispatcherId: 'W', limit: 10, leaseMs: LEASE_MS, maxReclaims: 5, now: clock.sqlNow() }))
            .deliveries;

        // t=0 published to e1 and e2 (and skipped for the disabled endpoint), and to e3 scheduled for t=40; t=100
        // all three claimed (e1 and e2 waited 100 ms, e3 60 ms); t=300 e1 and e3 succeed, e2 fails and is
        // due again at 1,300; t=1,800 e2 claimed (waited 500 ms); its lease runs out and it is reclaimed at
        // 31,801 (a reclaim has no queue wait); t=31,900 it succeeds.
        at(0);
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
        // Scheduled for t=40, claimed with the others at t=100: it waited 60 ms past its due time.
        await runTx(t.db, (tx) =>
          publisher.publish(tx, {
            appId: laterApp,
            eventType: 'e',
            eventId: null,
            channels: null,
            tags: null,
            payload: Buffer.from('{}'),
            retentionHours: null,
            deliverAt: new Date(t0 + 40),
          }),
        );
        at(100);
        const first = await claim();
        assert.equal(first.length, 3);
        const of = (ep: string) => first.find((d) => d.endpointId === ep)!;
        at(300);
        await store.recordAttempts(
          [
            record(of(e1), { next: 'succeeded' }),
            record(of(e2), { next: 'retry', delayMs: 1_000 }),
            record(of(e3), { next: 'succeeded' }),
          ],
          clock.sqlNow(),
        );
        at(1_800);
        assert.equal((await claim()).length, 1);
        at(1_800 + LEASE_MS + 1);
        const reclaimed = await claim();
        assert.equal(reclaimed[0]?.reclaimed, true);
        at(31_900);
        await store.recordAttempts([record(reclaimed[0]!, { next: 'succeeded' })], clock.sqlNow());

        const rows = (
          await t.db.query<StampRow>(
            `SELECT d.endpoint_id AS endpoint, e.state, e.reason, e.app_id, e.endpoint_id, e.since_publish_ms::text,
              e.wait_ms::text
           FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id
           ORDER BY d.endpoint_id = $1 DESC, d.endpoint_id = $2 DESC, d.endpoint_id = $3 DESC, e.id`,
            [e1, e2, disabled],
          )
        ).rows;
        const row = (
          endpoint: string,
          state: string,
          reason: string | null,
          sincePublishMs: number,
          waitMs: number | null,
        ): StampRow => ({
          endpoint,
          state,
          reason,
          app_id: endpoint === e3 ? laterApp : appId,
          endpoint_id: endpoint,
          since_publish_ms: String(sincePublishMs),
          wait_ms: waitMs === null ? null : String(waitMs),
        });
        assert.deepEqual(rows, [
          row(e1, 'pending', 'published', 0, null),
          row(e1, 'leased', 'claimed', 100, 100),
          row(e1, 'succeeded', null, 300, null),
          row(e2, 'pending', 'published', 0, null),
          row(e2, 'leased', 'claimed', 100, 100),
          row(e2, 'pending', 'retry_scheduled', 300, null),
          row(e2, 'leased', 'claimed', 1_800, 500),
          row(e2, 'leased', 'reclaimed', 31_801, null),
          row(e2, 'succeeded', null, 31_900, null),
          row(disabled, 'skipped', 'endpoint_disabled', 0, null),
          row(e3, 'pending', 'scheduled', 0, null),
          row(e3, 'leased', 'claimed', 100, 60),
          row(e3, 'succeeded', null, 300, null),
        ]);
      } finally {
        await t.db.query('ALTER TABLE delivery_events ENABLE TRIGGER delivery_events_stamp');
      }
    });

    test("on the database clock, each statement's stamp is the trigger's figure for the row it wrote", async () => {
      await t.db.query('ALTER TABLE delivery_events DISABLE TRIGGER delivery_events_stamp');
      try {
        const appId = await insertApp(t.db);
        await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/4' });
        const publisher = createPublisher({
          messages: createPgMessageStore(t.db, cipher, () => undefined),
          clock: new ManualClock(),
          random: cryptoRandom,
        });
        for (let i = 0; i < 3; i++) {
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
        // now = null: every statement takes clock_timestamp(), as in production.
        const claimed = (
          await store.claim({
            dispatcherId: 'W',
            limit: 10,
            leaseMs: LEASE_MS,
            maxReclaims: 5,
            now: null,
            excludeEndpoints: [],
          })
        ).deliveries.filter((d) => d.appId === appId);
        assert.equal(claimed.length, 3);
        await store.recordAttempts(
          claimed.map((d) => record(d, { next: 'succeeded' })),
          null,
        );
        // The trigger's formulas (migration 1764000008000), applied to each row as written.
        const off = (
          await t.db.query<{ n: number; rows: number }>(
            `SELECT count(*) FILTER (WHERE e.app_id IS DISTINCT FROM d.app_id OR e.endpoint_id IS DISTINCT
              FROM d.endpoint_id
                                     OR e.since_publish_ms IS DISTINCT
                                       FROM greatest(0, round(extract(epoch FROM e.at - d.created_at) * 1000))::bigint
                                     OR e.wait_ms IS DISTINCT FROM CASE WHEN e.state = 'leased' AND e.reason = 'claimed'
                                                                        THEN greatest(0, round(extract(epoch
                                                                          FROM e.at - d.next_attempt_at) *
                                                                            1000))::bigint END)::int AS n,
                  count(*)::int AS rows
           FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE d.app_id = $1`,
            [appId],
          )
        ).rows[0]!;
        assert.deepEqual(
          off,
          { n: 0, rows: 9 },
          "every row (published, claimed, succeeded × 3) carries the trigger's stamp",
        );
      } finally {
        await t.db.query('ALTER TABLE delivery_events ENABLE TRIGGER delivery_events_stamp');
      }
    });

    test('the trigger stamps a row that arrives without its stamp, and leaves a stamped row as it came', async () => {
      const appId = await insertApp(t.db);
      const ep = (await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/3' })).id;
      const msg = `msg_stamp_${engine.name}`;
      await t.db.query(
        `INSERT INTO messages (id, app_id, event_type, created_at) VALUES ($1, $2, 'e', '2026-01-01T00:00:00Z')`,
        [msg, appId],
      );
      const delivery = (
        await t.db.query<{ id: string }>(
          'INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at) VALUES ' +
            `($1, $2, $3, 'pending', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z') RETURNING id::text`,
          [appId, msg, ep],
        )
      ).rows[0]!.id;
      // As the other writers (replay, resend, disable) write theirs: no stamp columns.
      await t.db.query(
        `INSERT INTO delivery_events (delivery_id, state, reason, at) VALUES ($1, 'pending', 'replayed', ` +
          `'2026-01-01T00:00:02.5Z')`,
        [delivery],
      );
      // A stamped row whose since_publish_ms is not the trigger's figure: kept, so the trigger did not run.
      await t.db.query(
        'INSERT INTO delivery_events (delivery_id, state, reason, at, app_id, endpoint_id, since_publish_ms) ' +
          `VALUES ($1, 'pending', 'replayed', '2026-01-01T00:00:03Z', $2, $3, 7)`,
        [delivery, appId, ep],
      );
      const rows = (
        await t.db.query<Omit<StampRow, 'endpoint' | 'state' | 'reason'>>(
          'SELECT app_id, endpoint_id, since_publish_ms::text, wait_ms::text FROM delivery_events WHERE ' +
            'delivery_id = $1 ORDER BY id',
          [delivery],
        )
      ).rows;
      assert.deepEqual(rows, [
        { app_id: appId, endpoint_id: ep, since_publish_ms: '2500', wait_ms: null },
        { app_id: appId, endpoint_id: ep, since_publish_ms: '7', wait_ms: null },
      ]);
    });
  });
}
