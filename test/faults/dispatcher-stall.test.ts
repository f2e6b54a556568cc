/**
 * Failure table (docs/guides/failure-table.md), scenario 6: a dispatcher stalled longer than its lease — frozen with
 * SIGSTOP while its request is in flight (6a), cut off by a stalled database path (TCP proxy) while its request is in
 * flight (6b), or held at the `before_record` fault point with its outcome not yet written (6c). Another dispatcher
 * takes the delivery over; when the stalled one goes on, its heartbeat (6a, 6b; the heartbeat no longer renews an
 * outcome being recorded) and its outcome write must change nothing and be logged as fenced.
 *
 * The receiver answers the stalled dispatcher's request with 500 (a retry) and the takeover's with 200:
 * if the stale write were not fenced out, the older outcome would overwrite the newer one.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { QUERY_TIMEOUT_MS } from '../../src/adapters/postgres/db.ts';
import { Ledger, printSummary } from '../support/fault-load.ts';
import { ApiClient, createWorld, type FaultWorld } from '../support/fault-world.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import type { LogLine, TidingsProcess } from '../support/tidings-process.ts';

const WAIT_MS = 60_000;

interface AttemptRow {
  dispatcher_id: string;
  fencing_token: string;
  succeeded: boolean;
  response_status_code: number | null;
}
interface EventRow {
  state: string;
  reason: string | null;
  dispatcher_id: string | null;
  fencing_token: string | null;
}

const isLeaseLost = (l: LogLine): boolean =>
  l.msg === 'lease lost: attempts abandoned, nothing will be written for them';
const isFencedWrite = (l: LogLine): boolean =>
  l.msg === 'attempt outcome fenced out: a newer lease holds this delivery';

describe('dispatcher stalled longer than its lease', () => {
  let world: FaultWorld;
  let api: ApiClient;

  before(async () => {
    world = await createWorld();
    api = new ApiClient((await world.startApi()).apiUrl ?? '');
  });
  afterEach(async () => {
    await world?.killDispatchers();
  });
  after(async () => {
    await world?.close();
  });

  /** One message to a fresh endpoint whose first answer is a 500 after `firstDelayMs`, then 200s. */
  async function oneMessage(
    prefix: string,
    firstDelayMs: number,
  ): Promise<{ appId: string; path: string; messageId: string; ledger: Ledger }> {
    const { appId, endpoints } = await world.setupApp(api, 1, prefix);
    const path = endpoints[0]?.path ?? '';
    await world.receiver.script(path, [{ status: 500, delayMs: firstDelayMs }], { status: 200 });
    const res = await api.publish(appId, { prefix });
    assert.equal(res.status, 202);
    const ledger = new Ledger();
    ledger.accept(res.id ?? '', [path]);
    return { appId, path, messageId: res.id ?? '', ledger };
  }

  /** The checks after the stalled dispatcher went on; returns the figures line extras. */
  async function assertNewerOutcomeStands(
    appId: string,
    path: string,
    messageId: string,
    ledger: Ledger,
    stale: string,
    takeover: string,
  ): Promise<ReturnType<Ledger['figures']>> {
    const delivery = await world.query<{ id: string; state: string; attempt_count: number; fencing_token: string }>(
      'SELECT id, state, attempt_count, fencing_token FROM deliveries WHERE app_id = $1',
      [appId],
    );
    assert.equal(delivery.length, 1);
    assert.deepEqual(
      { state: delivery[0]?.state, attempts: delivery[0]?.attempt_count },
      { state: 'succeeded', attempts: 1 },
      'the newer outcome stands',
    );
    const attempts = await world.query<AttemptRow>(
      'SELECT dispatcher_id, fencing_token, succeeded, response_status_code FROM attempts WHERE app_id = $1',
      [appId],
    );
    assert.deepEqual(
      attempts.map((a) => [a.dispatcher_id, a.succeeded, a.response_status_code]),
      [[takeover, true, 200]],
      "only the takeover's outcome was written",
    );
    const events = await world.query<EventRow>(
      'SELECT e.state, e.reason, e.dispatcher_id, e.fencing_token FROM delivery_events e WHERE e.delivery_id = ' +
        '$1 ORDER BY e.id',
      [delivery[0]?.id],
    );
    assert.deepEqual(
      events.map((e) => `${e.state}:${e.reason ?? ''}:${e.dispatcher_id ?? ''}`),
      ['pending:published:', `leased:claimed:${stale}`, `leased:reclaimed:${takeover}`, `succeeded::${takeover}`],
    );
    assert.equal(
      delivery[0]?.fencing_token,
      events[2]?.fencing_token,
      "the delivery keeps the takeover's fencing token",
    );
    const requests = (await world.receiver.requests()).filter((r) => r.path === path);
    assert.ok(requests.every((r) => r.webhookId === messageId));
    assert.equal(requests.length, 2, 'at most one extra request reached the receiver');
    const figures = ledger.figures(requests);
    assert.equal(figures.lost, 0);
    assert.equal(figures.invalidSignatures, 0);
    assert.equal(await world.stuckLeases(), 0);
    return figures;
  }

  test(
    'scenario 6a: a dispatcher frozen (SIGSTOP) past its lease is taken over; resumed, its heartbeat and its ' +
      'stale outcome change nothing and are logged as fenced; one extra request; the newer outcome stands',
    async () => {
      const started = Date.now();
      const a: TidingsProcess = await world.startDispatcher('s6a-a');
      // The first answer takes 1.5 s: the request is in flight when the dispatcher is frozen.
      const { appId, path, messageId, ledger } = await oneMessage('s6a', 1_500);
      await world.receiver.waitForCount(1, WAIT_MS, (r) => r.path === path);
      a.pause();
      const frozenAtMs = Date.now();
      const b = await world.startDispatcher('s6a-b');
      await world.receiver.waitForCount(2, WAIT_MS, (r) => r.path === path);
      await world.waitForRows<{ state: string }>(
        'SELECT state FROM deliveries WHERE app_id = $1',
        [appId],
        (r) => r[0]?.state === 'succeeded',
        WAIT_MS,
        'the takeover recorded its outcome',
      );
      a.resume();
      const frozenMs = Date.now() - frozenAtMs;
      // On resume the overdue heartbeat and the answer that arrived while frozen race in the event loop. When
      // the heartbeat runs first it is fenced (the lease is lost, logged); when the answer is handled first the
      // attempt is no longer in flight at the next heartbeat, and only its outcome's write is fenced.
      const first = await Promise.race([
        a.waitForLog(isLeaseLost, WAIT_MS, 'lease lost (heartbeat fenced)').then((line) => ({ lost: line })),
        a.waitForLog(isFencedWrite, WAIT_MS, 'stale outcome fenced out').then(() => ({ lost: null })),
      ]);
      if (first.lost !== null) assert.ok((first.lost.deliveryIds as string[]).length === 1);
      // The stale outcome is either written and refused (fenced out) or, when the heartbeat answered first,
      // never written at all; either way no row changes. Both are logged.
      const staleOutcome = await Promise.race([
        a.waitForLog(isFencedWrite, WAIT_MS, 'stale outcome fenced out').then(() => 'write fenced out'),
        a.waitForLog((l) => l.msg === 'delivery.attempted', WAIT_MS, 'stale outcome recorded').then(() => 'written'),
      ]);
      assert.equal(staleOutcome, 'write fenced out', 'the stale outcome was written and matched zero rows');
      const figures = await assertNewerOutcomeStands(appId, path, messageId, ledger, 's6a-a', 's6a-b');
      printSummary('6a dispatcher SIGSTOP past its lease', figures, started, {
        frozen_ms: frozenMs,
        stale_heartbeat: first.lost === null ? 'none in flight' : 'fenced',
        stale_outcome: staleOutcome,
      });
      await a.stop();
      await b.stop();
    },
  );

  test(
    'scenario 6b: a dispatcher whose database path stalls past its lease while its request is in flight is taken ' +
      'over; when the path returns its outcome write matches zero rows and is logged as fenced, and nothing it did ' +
      'is written',
    async () => {
      const started = Date.now();
      const proxy: TcpProxy = await startTcpProxy({ host: '127.0.0.1', port: world.cluster.port });
      try {
        const viaProxy = world.databaseUrl.replace(`:${world.cluster.port}/`, `:${proxy.port}/`);
        const a = await world.startDispatcher('s6b-a', { DATABASE_URL: viaProxy });
        // The takeover is started (and frozen, so that it claims nothing) before the stall: its start-up on a
        // busy machine must not lengthen the stall past the client's query timeout, which would end the stalled
        // statements with an error.
        const b = await world.startDispatcher('s6b-b');
        b.pause();
        // A claim the takeover sent just before it froze may still be waiting for its turn in PostgreSQL: once it
        // has run (no claim in flight), the frozen takeover cannot be the one that claims the message below.
        await world.waitForRows<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' " +
            "AND pid <> pg_backend_pid() AND query LIKE '%tidings_claim%'",
          [],
          (r) => r[0]?.n === 0,
          WAIT_MS,
          'no claim in flight',
        );
        const { appId, path, messageId, ledger } = await oneMessage('s6b', 1_500);
        await world.receiver.waitForCount(1, WAIT_MS, (r) => r.path === path);
        proxy.setMode('stall');
        const stalledAtMs = Date.now();
        b.resume();
        await world.receiver.waitForCount(2, WAIT_MS, (r) => r.path === path);
        await world.waitForRows<{ state: string }>(
          'SELECT state FROM deliveries WHERE app_id = $1',
          [appId],
          (r) => r[0]?.state === 'succeeded',
          WAIT_MS,
          'the takeover recorded its outcome',
        );
        proxy.setMode('pass');
        const stalledMs = Date.now() - stalledAtMs;
        assert.ok(
          stalledMs < QUERY_TIMEOUT_MS,
          `the stall (${stalledMs} ms) ended before the stalled statements' client-side timeout ` +
            `(${QUERY_TIMEOUT_MS} ms)`,
        );
        // The stale outcome write is fenced out: that is what the guarantee needs. Whether the heartbeat also
        // reports the lost lease depends on the pool: a heartbeat that waits on an open connection through the
        // stall answers "lease lost" when the path returns, but one that needs a new connection fails with a
        // connect timeout during the stall, and once the outcome is waiting to be written the heartbeat no
        // longer renews that lease. Scenario 6a shows the fenced heartbeat without depending on the pool.
        await a.waitForLog(isFencedWrite, WAIT_MS, 'stale outcome fenced out');
        assert.equal(a.logs('delivery.attempted').length, 0, 'the stalled dispatcher recorded nothing');
        const heartbeat = a.logs(isLeaseLost).length > 0 ? 'fenced' : 'failed during the stall';
        const figures = await assertNewerOutcomeStands(appId, path, messageId, ledger, 's6b-a', 's6b-b');
        printSummary('6b dispatcher database path stalled past its lease', figures, started, {
          stalled_ms: stalledMs,
          stale_heartbeat: heartbeat,
          stale_outcome: 'write fenced out',
        });
        await a.stop();
        await b.stop();
      } finally {
        await proxy.close();
      }
    },
  );

  test(
    'scenario 6c: a dispatcher held at before_record (its outcome not yet written) past its lease is taken over; ' +
      'its late outcome write matches zero rows and is logged as fenced',
    async () => {
      const started = Date.now();
      const a = await world.startDispatcher('s6c-a', { TIDINGS_TEST_FAULT_POINTS: 'before_record:stall_ms=3000' });
      const { appId, path, messageId, ledger } = await oneMessage('s6c', 0);
      await a.waitForLog(
        (l) => l.event === 'fault_point.fired' && l.point === 'before_record',
        WAIT_MS,
        'before_record fired',
      );
      // Frozen inside the hold, so the takeover cannot lose a race against the end of the hold.
      a.pause();
      const frozenAtMs = Date.now();
      const b = await world.startDispatcher('s6c-b');
      await world.receiver.waitForCount(2, WAIT_MS, (r) => r.path === path);
      await world.waitForRows<{ state: string }>(
        'SELECT state FROM deliveries WHERE app_id = $1',
        [appId],
        (r) => r[0]?.state === 'succeeded',
        WAIT_MS,
        'the takeover recorded its outcome',
      );
      a.resume();
      const heldMs = Date.now() - frozenAtMs;
      await a.waitForLog(isFencedWrite, WAIT_MS, 'late outcome fenced out');
      assert.equal(a.logs('delivery.attempted').length, 0, 'the late outcome was not written');
      const figures = await assertNewerOutcomeStands(appId, path, messageId, ledger, 's6c-a', 's6c-b');
      printSummary('6c dispatcher held before recording past its lease', figures, started, {
        held_ms: heldMs,
        stale_outcome: 'write fenced out',
      });
      await a.stop();
      await b.stop();
    },
  );
});
