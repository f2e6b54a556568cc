/**
 * Failure table (docs/guides/failure-table.md), scenarios 1 and 2: a dispatcher killed (SIGKILL) between two steps of
 * the protocol, by the named fault points `after_send` (the request left, its outcome is not recorded) and
 * `after_claim` (leases taken, nothing sent). Real processes: one API, the dispatcher that dies, the one that takes
 * over, and a receiver that verifies and records every request. Scenario 2b kills a `serve` process (API and dispatcher
 * in one) at `after_claim` as its publish hands the new delivery to its own dispatcher leased (ADR 0018).
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Ledger, printSummary } from '../support/fault-load.ts';
import { ApiClient, createWorld, readMetric, type FaultWorld } from '../support/fault-world.ts';
import type { TidingsProcess } from '../support/tidings-process.ts';

const LEASE_MS = 3_000;
const WAIT_MS = 60_000;

interface DeliveryRow {
  id: string;
  message_id: string;
  state: string;
  attempt_count: number;
}
interface AttemptRow {
  delivery_id: string;
  attempt_number: number;
  succeeded: boolean;
  dispatcher_id: string;
}
interface EventRow {
  delivery_id: string;
  state: string;
  reason: string | null;
  dispatcher_id: string | null;
  at: Date;
}

describe('dispatcher crashes between protocol steps', () => {
  let world: FaultWorld;
  let api: ApiClient;

  before(async () => {
    world = await createWorld();
    const apiProcess = await world.startApi();
    api = new ApiClient(apiProcess.apiUrl ?? '');
  });
  afterEach(async () => {
    await world?.killDispatchers();
  });
  after(async () => {
    await world?.close();
  });

  const deliveriesOf = (appId: string) =>
    world.query<DeliveryRow>(
      'SELECT id, message_id, state, attempt_count FROM deliveries WHERE app_id = $1 ORDER BY id',
      [appId],
    );
  const attemptsOf = (appId: string) =>
    world.query<AttemptRow>(
      'SELECT delivery_id, attempt_number, succeeded, dispatcher_id FROM attempts WHERE app_id = $1 ORDER BY id',
      [appId],
    );
  const eventsOf = (appId: string) =>
    world.query<EventRow>(
      'SELECT e.delivery_id, e.state, e.reason, e.dispatcher_id, e.at FROM delivery_events e JOIN deliveries d ' +
        'ON d.id = e.delivery_id WHERE d.app_id = $1 ORDER BY e.id',
      [appId],
    );

  async function publish(appId: string, paths: readonly string[], count: number, ledger: Ledger): Promise<void> {
    for (let i = 0; i < count; i++) {
      const res = await api.publish(appId, { n: i });
      assert.equal(res.status, 202, JSON.stringify(res.json));
      ledger.accept(res.id ?? '', paths);
    }
  }

  /**
   * The takeover: after the lease, a reclaim by `by`, at least `LEASE_MS` (database clock) after the dead dispatcher's
   * claim.
   */
  function assertReclaimedAfterLease(
    events: readonly EventRow[],
    deliveryId: string,
    dead: string,
    by: string,
  ): number {
    const mine = events.filter((e) => e.delivery_id === deliveryId);
    const claimed = mine.find((e) => e.reason === 'claimed' && e.dispatcher_id === dead);
    const reclaimed = mine.find((e) => e.reason === 'reclaimed' && e.dispatcher_id === by);
    assert.ok(claimed !== undefined && reclaimed !== undefined, `timeline of ${deliveryId}: ${JSON.stringify(mine)}`);
    const gapMs = reclaimed.at.getTime() - claimed.at.getTime();
    assert.ok(gapMs >= LEASE_MS - 5, `reclaimed ${gapMs} ms after the claim, before the ${LEASE_MS} ms lease ended`);
    return gapMs;
  }

  test(
    'scenario 1: a dispatcher killed after the request left and before the outcome was recorded is redelivered ' +
      'after the lease with the same webhook-id, one delivered outcome, the duplicate counted',
    async () => {
      const started = Date.now();
      const { appId, endpoints } = await world.setupApp(api, 1, 's1');
      const paths = endpoints.map((e) => e.path);
      const ledger = new Ledger();
      await publish(appId, paths, 5, ledger);

      const a = await world.startDispatcher('s1-a', { TIDINGS_TEST_FAULT_POINTS: 'after_send:exit' });
      const fired = await a.waitForLog((l) => l.event === 'fault_point.fired', WAIT_MS, 'after_send fired');
      assert.equal(fired.point, 'after_send');
      const exit = await a.waitForExit(WAIT_MS);
      assert.equal(exit.signal, 'SIGKILL', 'the fault point kills the process');
      const firedId = String(fired.webhookId);
      const beforeTakeover = (await world.receiver.requests()).filter((r) => paths.includes(r.path));
      assert.ok(
        beforeTakeover.some((r) => r.webhookId === firedId),
        'the request of the fired attempt reached the receiver',
      );
      assert.equal((await attemptsOf(appId)).length, 0, 'the dead dispatcher recorded no outcome');

      const b = await world.startDispatcher('s1-b');
      const seen = await world.receiver.waitFor(
        (rs) => ledger.allSeen(rs.filter((r) => paths.includes(r.path))),
        WAIT_MS,
        'every message delivered',
      );
      await world.waitForRows<DeliveryRow>(
        'SELECT id, message_id, state, attempt_count FROM deliveries WHERE app_id = $1',
        [appId],
        (rows) => rows.length === 5 && rows.every((r) => r.state === 'succeeded'),
        WAIT_MS,
        'all deliveries succeeded',
      );

      const requests = (await world.receiver.requests()).filter((r) => paths.includes(r.path));
      const figures = ledger.figures(requests);
      assert.equal(figures.lost, 0);
      assert.equal(figures.invalidSignatures, 0);
      assert.equal(
        requests.filter((r) => r.webhookId === firedId).length,
        2,
        'the fired message reached the receiver twice, with one webhook-id',
      );
      assert.ok(
        figures.duplicates >= 1 && figures.duplicates <= beforeTakeover.length,
        `duplicates ${figures.duplicates}: at least the fired one, at most the ${beforeTakeover.length} requests ` +
          'the dead dispatcher sent',
      );

      const deliveries = await deliveriesOf(appId);
      const attempts = await attemptsOf(appId);
      for (const d of deliveries) {
        assert.equal(d.attempt_count, 1, `delivery ${d.id}: one attempt charged`);
        const mine = attempts.filter((x) => x.delivery_id === d.id);
        assert.equal(mine.length, 1, `delivery ${d.id}: one recorded outcome`);
        assert.deepEqual(
          { n: mine[0]?.attempt_number, ok: mine[0]?.succeeded, by: mine[0]?.dispatcher_id },
          { n: 1, ok: true, by: 's1-b' },
        );
      }
      const events = await eventsOf(appId);
      const firedDelivery = deliveries.find((d) => d.message_id === firedId);
      assert.ok(firedDelivery !== undefined);
      const gapMs = assertReclaimedAfterLease(events, firedDelivery.id, 's1-a', 's1-b');
      const reclaimed = await readMetric(b.adminUrl ?? '', 'tidings_deliveries_reclaimed_total');
      assert.equal(reclaimed, 5, 'every lease of the dead dispatcher was reclaimed, and counted');
      assert.equal(await world.stuckLeases(), 0);
      void seen;
      printSummary('1 dispatcher SIGKILL after send, before record', figures, started, {
        reclaimed,
        reclaim_gap_ms: gapMs,
      });
      await b.stop();
    },
  );

  test(
    'scenario 2: a dispatcher killed after its claim and before sending is delivered exactly once after the ' +
      'lease, the attempt number not charged twice',
    async () => {
      const started = Date.now();
      const { appId, endpoints } = await world.setupApp(api, 1, 's2');
      const paths = endpoints.map((e) => e.path);
      const ledger = new Ledger();
      await publish(appId, paths, 3, ledger);

      const a: TidingsProcess = await world.startDispatcher('s2-a', { TIDINGS_TEST_FAULT_POINTS: 'after_claim:exit' });
      const fired = await a.waitForLog((l) => l.event === 'fault_point.fired', WAIT_MS, 'after_claim fired');
      assert.equal(fired.point, 'after_claim');
      assert.equal((await a.waitForExit(WAIT_MS)).signal, 'SIGKILL');
      const claimedIds = fired.deliveryIds as string[];
      assert.equal(claimedIds.length, 3, 'the dead dispatcher held all three leases');
      assert.equal(
        (await world.receiver.requests()).filter((r) => paths.includes(r.path)).length,
        0,
        'no request left before the crash',
      );

      const b = await world.startDispatcher('s2-b');
      await world.receiver.waitFor(
        (rs) => ledger.allSeen(rs.filter((r) => paths.includes(r.path))),
        WAIT_MS,
        'every message delivered',
      );
      await world.waitForRows<DeliveryRow>(
        'SELECT id, message_id, state, attempt_count FROM deliveries WHERE app_id = $1',
        [appId],
        (rows) => rows.length === 3 && rows.every((r) => r.state === 'succeeded'),
        WAIT_MS,
        'all deliveries succeeded',
      );

      const requests = (await world.receiver.requests()).filter((r) => paths.includes(r.path));
      const figures = ledger.figures(requests);
      assert.equal(figures.lost, 0);
      assert.equal(figures.duplicates, 0, 'delivered exactly once');
      assert.equal(figures.invalidSignatures, 0);
      const attempts = await attemptsOf(appId);
      const events = await eventsOf(appId);
      let maxGap = 0;
      for (const d of await deliveriesOf(appId)) {
        assert.equal(d.attempt_count, 1, `delivery ${d.id}: the claim charged no attempt`);
        assert.deepEqual(
          attempts.filter((x) => x.delivery_id === d.id).map((x) => x.attempt_number),
          [1],
          `delivery ${d.id}: one attempt, number 1`,
        );
        maxGap = Math.max(maxGap, assertReclaimedAfterLease(events, d.id, 's2-a', 's2-b'));
      }
      assert.equal(await readMetric(b.adminUrl ?? '', 'tidings_deliveries_reclaimed_total'), 3);
      assert.equal(await world.stuckLeases(), 0);
      printSummary('2 dispatcher SIGKILL after claim, before send', figures, started, {
        reclaimed: 3,
        reclaim_gap_ms: maxGap,
      });
      await b.stop();
    },
  );

  test(
    'scenario 2b: a serve process killed as its publish handed its own dispatcher the lease, before sending, is ' +
      'delivered once after the lease by another dispatcher',
    async () => {
      const started = Date.now();
      const serve = await world.startServe('s2b-serve', { TIDINGS_TEST_FAULT_POINTS: 'after_claim@2:exit' });
      const local = new ApiClient(serve.apiUrl ?? '');
      const { appId, endpoints } = await world.setupApp(local, 1, 's2b');
      const path = endpoints[0]!.path;
      // The first delivery is claimed (the endpoint has not answered this dispatcher yet): after_claim's first pass.
      const ledger = new Ledger();
      const first = await local.publish(appId, { n: 0 });
      assert.equal(first.status, 202);
      ledger.accept(first.id ?? '', [path]);
      // Its outcome recorded: the dispatcher has seen the endpoint answer (it notes that before the outcome is
      // written).
      await world.waitForRows<DeliveryRow>(
        'SELECT id, message_id, state, attempt_count FROM deliveries WHERE app_id = $1',
        [appId],
        (rows) => rows.length === 1 && rows[0]!.state === 'succeeded',
        WAIT_MS,
        'the first delivery succeeded',
      );
      // The second is handed off by its publish statement; the process dies before the answer or the request goes out.
      await local.publish(appId, { n: 1 }).catch(() => undefined);
      const fired = await serve.waitForLog((l) => l.event === 'fault_point.fired', WAIT_MS, 'after_claim fired');
      assert.equal(fired.handedOff, true, 'the second pass was the hand-off, not a claim');
      assert.equal((await serve.waitForExit(WAIT_MS)).signal, 'SIGKILL');
      const [handedId] = fired.deliveryIds as string[];
      const [handed] = await world.query<DeliveryRow>(
        'SELECT id, message_id, state, attempt_count FROM deliveries WHERE id = $1',
        [handedId],
      );
      assert.equal(handed?.state, 'leased', 'the hand-off was committed leased');
      assert.equal(
        (await world.receiver.requests()).filter((r) => r.webhookId === handed.message_id).length,
        0,
        'no request left before the crash',
      );
      // Its publish call got no answer, but the message was committed: it is owed a delivery.
      ledger.accept(handed.message_id, [path]);

      const b = await world.startDispatcher('s2b-d');
      await world.waitForRows<DeliveryRow>(
        'SELECT id, message_id, state, attempt_count FROM deliveries WHERE app_id = $1',
        [appId],
        (rows) => rows.length === 2 && rows.every((r) => r.state === 'succeeded'),
        WAIT_MS,
        'both deliveries succeeded',
      );
      const requests = (await world.receiver.requests()).filter((r) => r.path === path);
      const figures = ledger.figures(requests);
      assert.equal(figures.lost, 0);
      assert.equal(figures.duplicates, 0, 'delivered exactly once');
      assert.equal(figures.invalidSignatures, 0);
      const attempts = await attemptsOf(appId);
      assert.deepEqual(
        attempts.filter((x) => x.delivery_id === handed.id).map((x) => [x.attempt_number, x.dispatcher_id]),
        [[1, 's2b-d']],
        'one attempt, number 1, by the dispatcher that took over',
      );
      const gap = assertReclaimedAfterLease(await eventsOf(appId), handed.id, 's2b-serve', 's2b-d');
      assert.equal(await world.stuckLeases(), 0);
      printSummary('2b serve SIGKILL after its publish handed off the lease, before send', figures, started, {
        reclaimed: 1,
        reclaim_gap_ms: gap,
      });
      await b.stop();
    },
  );
});
