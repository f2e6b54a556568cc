/**
 * Failure table (docs/guides/failure-table.md), scenario 7: a rolling restart of every dispatcher under load, three
 * runs with SIGTERM (graceful: stop claiming, finish in-flight attempts within the grace period) and three with SIGKILL
 * (leases expire and are reclaimed). The receiver takes 100 ms per answer, so attempts are in flight at every signal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ledger, printSummary, startLoad } from '../support/fault-load.ts';
import { ApiClient, createWorld, type FaultWorld } from '../support/fault-world.ts';
import type { TidingsProcess } from '../support/tidings-process.ts';

const WAIT_MS = 90_000;
const RUNS = 3;
const DISPATCHERS = 3;
const GRACE_MS = 5_000;

describe('rolling restart of all dispatchers under load', () => {
  let world: FaultWorld;
  let api: ApiClient;
  let slots: TidingsProcess[] = [];
  let generation = 0;

  before(async () => {
    world = await createWorld();
    api = new ApiClient((await world.startApi()).apiUrl ?? '');
    // All at once, as an orchestrator starts replicas (this used to fail: see the first test).
    slots = await Promise.all(Array.from({ length: DISPATCHERS }, (_, i) => world.startDispatcher(`s7-d${i}-g0`)));
  });
  after(async () => {
    await world?.close();
  });

  /** One run: load on a fresh app, each dispatcher in turn signalled and replaced; returns the figures. */
  async function rollingRun(
    signal: 'SIGTERM' | 'SIGKILL',
    run: number,
  ): Promise<{
    figures: ReturnType<Ledger['figures']>;
    reclaimed: number;
    stopMs: number[];
    released: number;
    finishedAfterSignal: number;
  }> {
    const { appId, endpoints } = await world.setupApp(api, 2, `s7-${signal.toLowerCase()}-${run}`);
    const paths = endpoints.map((e) => e.path);
    for (const path of paths) await world.receiver.script(path, [], { status: 200, delayMs: 100 });
    const ledger = new Ledger();
    const load = startLoad({
      api: () => api,
      appId,
      paths,
      ledger,
      maxMessages: 2_000,
      maxMs: 120_000,
      concurrency: 2,
      paceMs: 50,
    });
    const stopMs: number[] = [];
    let released = 0;
    await load.waitFor(() => load.accepted >= 20, WAIT_MS, '20 accepted before the restarts');
    // Surge-style rolling update: the replacements start together (start-up is the slow part on a shared
    // machine), then each old dispatcher in turn is signalled under load.
    generation += 1;
    const olds = slots;
    slots = await Promise.all(olds.map((_, i) => world.startDispatcher(`s7-d${i}-g${generation}`)));
    let finishedAfterSignal = 0;
    for (const old of olds) {
      const now = load.accepted;
      await load.waitFor(() => load.accepted >= now + 10, WAIT_MS, '10 more accepted before the next signal');
      const t0 = Date.now();
      const exit = signal === 'SIGTERM' ? await old.stop(GRACE_MS + 30_000) : await old.kill();
      stopMs.push(Date.now() - t0);
      if (signal === 'SIGTERM') {
        assert.deepEqual(exit, { code: 0, signal: null }, `${old.name} stopped gracefully`);
        released += old.logs('leases released at shutdown').reduce((n, l) => n + Number(l.released ?? 0), 0);
      } else {
        assert.equal(exit.signal, 'SIGKILL');
      }
      finishedAfterSignal += old.logs((l) => l.msg === 'delivery.attempted' && Number(l.time) >= t0).length;
    }
    const now = load.accepted;
    await load.waitFor(() => load.accepted >= now + 10, WAIT_MS, '10 more accepted after the restarts');
    await load.stop();
    await world.receiver.waitFor((rs) => ledger.allSeen(rs), WAIT_MS, 'every acknowledged message delivered');
    await world.waitForRows<{ n: number }>(
      `SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1 AND state <> 'succeeded'`,
      [appId],
      (r) => r[0]?.n === 0,
      WAIT_MS,
      'every delivery succeeded',
    );
    const requests = (await world.receiver.requests()).filter((r) => paths.includes(r.path));
    const figures = ledger.figures(requests);
    assert.equal(figures.lost, 0, `lost: ${ledger.missing(requests).join(', ')}`);
    assert.equal(figures.invalidSignatures, 0);
    const charges = await world.attemptAccounting(appId);
    assert.equal(charges.unrecorded, 0, 'no attempt charged by a restart that is not recorded');
    assert.equal(charges.notSucceededOnce, 0, 'each delivery has exactly one succeeded attempt');
    assert.equal(
      charges.failedOtherThanTimeout,
      0,
      `no failed attempt but receiver timeouts (kinds: ${charges.failedKinds.join(', ')})`,
    );
    const reclaims = await world.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE ' +
        `d.app_id = $1 AND e.reason = 'reclaimed'`,
      [appId],
    );
    assert.equal(await world.stuckLeases(), 0);
    return { figures, reclaimed: reclaims[0]?.n ?? 0, stopMs, released, finishedAfterSignal };
  }

  test(
    'dispatchers started at the same moment against one database all start (regression: a concurrent start-up ' +
      'exited with "Another migration is already running")',
    () => {
      assert.equal(slots.length, DISPATCHERS);
      for (const d of slots) assert.equal(d.alive, true, `${d.name} runs`);
    },
  );

  for (let run = 1; run <= RUNS; run++) {
    test(
      `scenario 7 (SIGTERM, run ${run}/${RUNS}): a rolling graceful restart under load loses nothing and sends ` +
        'no duplicate when every request finishes within the grace period',
      async () => {
        const started = Date.now();
        const { figures, reclaimed, stopMs, released, finishedAfterSignal } = await rollingRun('SIGTERM', run);
        assert.ok(
          stopMs.every((ms) => ms < GRACE_MS + 10_000),
          `each graceful stop ended within the grace period (${stopMs.join(', ')} ms)`,
        );
        assert.equal(released, 0, 'every in-flight attempt finished; no lease had to be handed back');
        assert.equal(reclaimed, 0, 'no lease was left to expire');
        assert.equal(figures.duplicates, 0, 'zero duplicates');
        printSummary(`7 rolling restart SIGTERM run ${run}`, figures, started, {
          reclaimed,
          stop_ms: stopMs.join('/'),
          finished_in_grace: finishedAfterSignal,
        });
      },
    );
  }

  for (let run = 1; run <= RUNS; run++) {
    test(
      `scenario 7 (SIGKILL, run ${run}/${RUNS}): a rolling kill under load loses nothing; duplicates come only ` +
        'from reclaimed leases and are counted',
      async () => {
        const started = Date.now();
        const { figures, reclaimed } = await rollingRun('SIGKILL', run);
        assert.ok(
          figures.duplicates <= reclaimed,
          `duplicates (${figures.duplicates}) ≤ reclaimed leases (${reclaimed})`,
        );
        printSummary(`7 rolling restart SIGKILL run ${run}`, figures, started, { reclaimed });
      },
    );
  }

  test('the last dispatchers stop gracefully', async () => {
    for (const d of slots) assert.deepEqual(await d.stop(GRACE_MS + 30_000), { code: 0, signal: null });
    slots = [];
  });
});
