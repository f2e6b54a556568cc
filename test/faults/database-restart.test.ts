/**
 * Scenario 4: the database restarted under load, once with a fast shutdown (sessions
 * terminated) and once with an immediate one (a crash: recovery from the WAL on the next start). The
 * private cluster is stopped and started by the test; the API and two dispatchers are real processes that
 * must find their way back by themselves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CLAIM_BACKOFF_MAX_MS } from '../../src/app/dispatcher/dispatcher.ts';
import { Ledger, printSummary, startLoad, type Answer } from '../support/fault-load.ts';
import { ApiClient, createWorld, type FaultWorld } from '../support/fault-world.ts';
import type { StopMode } from '../support/pg-cluster.ts';
import type { LogLine, TidingsProcess } from '../support/tidings-process.ts';

const WAIT_MS = 90_000;
/**
 * How long the immediate outage lasts after each dispatcher first saw it fail, in ms: long enough for a
 * dispatcher that keeps claiming to have backed off to the cap, and for one whose window is full of outcomes
 * waiting to be recorded to have its record retries at their cap (5 s), so the restart shows how soon a
 * long-backed-off dispatcher comes back. This is the fault's length, chosen by the test; nothing waits on it
 * for a race.
 */
const LONG_OUTAGE_MS = 2 * CLAIM_BACKOFF_MAX_MS;
/**
 * Longest wait from the database's return to a dispatcher's next successful claim, in ms: one capped, jittered back-off
 * plus slack.
 */
const RESUME_BOUND_MS = 1.5 * CLAIM_BACKOFF_MAX_MS + 5_000;

/** Resolves once `p` has logged `count` lines matching `predicate` (event-driven: re-armed on each match). */
async function waitForCount(
  p: TidingsProcess,
  predicate: (l: LogLine) => boolean,
  count: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (p.logs(predicate).length < count) {
    const seen = p.logs(predicate).length;
    await p.waitForLog(
      (l) => predicate(l) && p.logs(predicate).length > seen,
      Math.max(1, deadline - Date.now()),
      `${count} × matching line`,
    );
  }
}

describe('database restart under load', () => {
  let world: FaultWorld;

  before(async () => {
    world = await createWorld();
  });
  after(async () => {
    await world?.close();
  });

  test(
    'scenario 4: a database restart under load (fast, then immediate) loses no acknowledged message, publishes ' +
      'answer 503 while it is down, dispatchers resume by themselves, no attempt is charged but the ones made and ' +
      'nothing dead-lettered',
    async () => {
      await world.keepLogsOnFailure(async () => {
        const started = Date.now();
        const apiProcess = await world.startApi();
        const api = new ApiClient(apiProcess.apiUrl ?? '');
        const { appId, endpoints } = await world.setupApp(api, 2, 's4');
        const paths = endpoints.map((e) => e.path);
        // Answers take 200 ms, so that attempts are in flight (and their outcomes waiting to be recorded) when the
        // database goes.
        for (const path of paths) await world.receiver.script(path, [], { status: 200, delayMs: 200 });
        const dispatchers: TidingsProcess[] = [
          await world.startDispatcher('s4-d1'),
          await world.startDispatcher('s4-d2'),
        ];
        const ledger = new Ledger();
        const load = startLoad({
          api: () => api,
          appId,
          paths,
          ledger,
          maxMessages: 3_000,
          maxMs: 120_000,
          concurrency: 3,
          paceMs: 20,
        });

        const resumedInMs: number[] = [];
        const outages: { mode: StopMode; downAtMs: number; upAtMs: number; answersWhileDown: Answer[] }[] = [];
        for (const mode of ['fast', 'immediate'] as const) {
          const before = load.accepted;
          await load.waitFor(() => load.accepted >= before + 40, WAIT_MS, '40 more accepted before the outage');
          // A dispatcher may see the outage while the stop is under way (its idle connections are terminated
          // first), so its outage line counts from the moment the stop was asked for.
          const stoppingAtMs = Date.now();
          await world.cluster.stop(mode);
          const downAtMs = Date.now();
          await load.waitFor(
            (answers) => answers.filter((a) => a.sentAtMs > downAtMs).length >= 10,
            WAIT_MS,
            '10 publishes tried while the database is down',
          );
          // The outage lasts until every dispatcher has seen it: a failed store call of any kind. A dispatcher
          // whose window is full of outcomes waiting to be recorded does not claim at all until they are written,
          // so its failures are records and heartbeats, not claims. The immediate outage then goes on for
          // LONG_OUTAGE_MS from each dispatcher's first failure.
          const sawOutage = (l: LogLine): boolean =>
            (l.msg === 'store call failed' || l.event === 'database.unavailable') && (l.time as number) >= stoppingAtMs;
          for (const d of dispatchers) await waitForCount(d, sawOutage, 1, WAIT_MS);
          if (mode === 'immediate') {
            const lastFirstFailureMs = Math.max(...dispatchers.map((d) => d.logs(sawOutage)[0]?.time as number));
            const leftMs = lastFirstFailureMs + LONG_OUTAGE_MS - Date.now();
            if (leftMs > 0) await new Promise((resolve) => setTimeout(resolve, leftMs));
          }
          const upAtMs = Date.now();
          await world.cluster.start();
          // Every dispatcher saw a failure, so each logs "claims resumed" at its first successful claim.
          for (const d of dispatchers) {
            await waitForCount(d, (l) => l.msg === 'claims resumed' && (l.time as number) >= upAtMs, 1, WAIT_MS);
            const resumed = d.logs((l) => l.msg === 'claims resumed' && (l.time as number) >= upAtMs)[0];
            resumedInMs.push((resumed?.time as number) - upAtMs);
          }
          outages.push({
            mode,
            downAtMs,
            upAtMs,
            answersWhileDown: load.answers.filter((a) => a.sentAtMs > downAtMs && a.answeredAtMs <= upAtMs),
          });
          const after = load.accepted;
          await load.waitFor(() => load.accepted >= after + 40, WAIT_MS, '40 more accepted after the restart');
        }
        await load.stop();

        for (const ms of resumedInMs)
          assert.ok(
            ms <= RESUME_BOUND_MS,
            `a dispatcher claimed again ${ms} ms after the database returned (bound ${RESUME_BOUND_MS} ms)`,
          );
        for (const o of outages) {
          assert.ok(o.answersWhileDown.length >= 10, `${o.mode}: publishes tried while down`);
          const statuses = [...new Set(o.answersWhileDown.map((a) => a.status))];
          assert.deepEqual(
            statuses,
            [503],
            `${o.mode}: every publish answered while the database was down is 503 (never 2xx); got ` +
              `${JSON.stringify(statuses)}`,
          );
        }

        // Each dispatcher resumed by itself: with the other one frozen, it alone delivers a fresh batch. The
        // backlog of the load is delivered and recorded first, so that the frozen dispatcher holds no request in
        // flight: a request frozen longer than TIDINGS_ATTEMPT_DEADLINE fails by deadline when its process
        // resumes and is sent again, a duplicate of the freeze, not of the restarts.
        await world.receiver.waitFor((rs) => ledger.allSeen(rs), WAIT_MS, 'the backlog delivered before the solo runs');
        await world.waitForRows<{ n: number }>(
          `SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1 AND state IN ('pending', 'leased')`,
          [appId],
          (rows) => rows[0]?.n === 0,
          WAIT_MS,
          'nothing pending or in flight before the solo runs',
        );
        for (const [i, d] of dispatchers.entries()) {
          const other = dispatchers[1 - i];
          other?.pause();
          try {
            const batch = new Ledger();
            for (let n = 0; n < 5; n++) {
              const res = await api.publish(appId, { probe: d.name, n });
              assert.equal(res.status, 202);
              batch.accept(res.id ?? '', paths);
              ledger.accept(res.id ?? '', paths);
            }
            await world.receiver.waitFor(
              (rs) => batch.allSeen(rs),
              WAIT_MS,
              `${d.name} delivers alone after the restarts`,
            );
            const rows = await world.waitForRows<{ dispatcher_id: string }>(
              'SELECT dispatcher_id FROM attempts WHERE message_id = ANY($1)',
              [batch.ids],
              (r) => r.length >= batch.deliveries,
              WAIT_MS,
              `${d.name}: outcomes recorded`,
            );
            assert.deepEqual([...new Set(rows.map((r) => r.dispatcher_id))], [d.name]);
          } finally {
            other?.resume();
          }
        }
        for (const d of dispatchers) assert.equal(d.alive, true, `${d.name} never exited`);
        assert.equal(apiProcess.alive, true, 'the API never exited');

        await world.receiver.waitFor((rs) => ledger.allSeen(rs), WAIT_MS, 'every acknowledged message delivered');
        const states = await world.waitForRows<{ state: string; n: number }>(
          'SELECT state, count(*)::int AS n FROM deliveries WHERE app_id = $1 GROUP BY state',
          [appId],
          (rows) => rows.length === 1 && rows[0]?.state === 'succeeded',
          WAIT_MS,
          'every delivery succeeded',
        );
        assert.ok(
          (states[0]?.n ?? 0) >= ledger.deliveries,
          'one delivery per acknowledged message and endpoint (publishes whose answer was lost may add more)',
        );
        // The outage charges no attempt: every charge is a recorded attempt, each delivery succeeded exactly once
        // (a stale outcome recorded after a reclaim would add a second), and the only failed attempts are
        // receivers that a saturated machine made too slow for the deadline (none on a quiet one).
        const charges = await world.attemptAccounting(appId);
        assert.equal(charges.unrecorded, 0, 'no delivery was charged an attempt that is not recorded');
        assert.equal(charges.notSucceededOnce, 0, 'each delivery has exactly one succeeded attempt');
        assert.equal(
          charges.failedOtherThanTimeout,
          0,
          `no failed attempt but receiver timeouts (kinds: ${charges.failedKinds.join(', ')})`,
        );
        assert.equal(await world.stuckLeases(), 0);

        const requests = (await world.receiver.requests()).filter((r) => paths.includes(r.path));
        const figures = ledger.figures(requests);
        assert.equal(figures.lost, 0, `lost: ${ledger.missing(requests).join(', ')}`);
        assert.equal(figures.invalidSignatures, 0);
        const reclaims = await world.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id WHERE ' +
            `d.app_id = $1 AND e.reason = 'reclaimed'`,
          [appId],
        );
        assert.ok(
          figures.duplicates <= (reclaims[0]?.n ?? 0),
          `duplicates (${figures.duplicates}) come only from reclaimed leases (${reclaims[0]?.n})`,
        );
        const refused = outages.reduce((n, o) => n + o.answersWhileDown.length, 0);
        printSummary('4 database restart under load (fast + immediate)', figures, started, {
          publishes_tried: load.answers.length,
          refused_503_while_down: refused,
          reclaimed: reclaims[0]?.n ?? 0,
          resumed_in_ms: resumedInMs.join('/'),
          unacknowledged_delivered: figures.unacknowledged,
          receiver_timeouts: charges.failed,
        });
      });
    },
  );
});
