/**
 * Scenario 4 behind a transaction pooler (docs/guides/poolers-and-replicas.md): the database restarted under load
 * while the API and two dispatchers reach it through a real PgBouncer in transaction mode (strict: every server
 * session reset after each transaction), with LISTEN and migrations on the direct URL. The private cluster is
 * stopped (fast) and started by the test; PgBouncer stays up and opens new server sessions once it is back. The
 * processes must find their way back by themselves, and no acknowledged message may be lost.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ledger, printSummary, startLoad } from '../support/fault-load.ts';
import { ApiClient, createWorld, type FaultWorld } from '../support/fault-world.ts';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';
import type { LogLine, TidingsProcess } from '../support/tidings-process.ts';

const WAIT_MS = 40_000;

describe('database restart under load, through a transaction pooler', () => {
  let world: FaultWorld;
  let bouncer: PgBouncer;

  before(async () => {
    world = await createWorld();
    bouncer = await startPgBouncer({ target: { host: '127.0.0.1', port: world.cluster.port }, poolSize: 10 });
  });
  after(async () => {
    await world?.close();
    await bouncer?.stop();
  });

  test(
    'scenario 4 through PgBouncer: a fast database restart under load loses no acknowledged message, dispatchers ' +
      'resume by themselves, every delivery succeeds once and no lease is left behind',
    async () => {
      await world.keepLogsOnFailure(async () => {
        const started = Date.now();
        const pooled = {
          DATABASE_URL: bouncer.url(new URL(world.databaseUrl).pathname.slice(1)),
          TIDINGS_DATABASE_POOLER: 'transaction',
          TIDINGS_DIRECT_DATABASE_URL: world.databaseUrl,
        };
        const apiProcess = await world.startApi('api', pooled);
        const api = new ApiClient(apiProcess.apiUrl ?? '');
        const { appId, endpoints } = await world.setupApp(api, 2, 'p4');
        const paths = endpoints.map((e) => e.path);
        for (const path of paths) await world.receiver.script(path, [], { status: 200, delayMs: 100 });
        const dispatchers: TidingsProcess[] = [];
        for (const name of ['p4-d1', 'p4-d2']) dispatchers.push(await world.startDispatcher(name, pooled));
        const ledger = new Ledger();
        const load = startLoad({
          api: () => api,
          appId,
          paths,
          ledger,
          maxMessages: 1_500,
          maxMs: 60_000,
          concurrency: 3,
          paceMs: 20,
        });

        await load.waitFor(() => load.accepted >= 40, WAIT_MS, '40 accepted before the outage');
        // A dispatcher may see the outage while the stop is under way: its outage line counts from the request.
        const stoppingAtMs = Date.now();
        await world.cluster.stop('fast');
        const downAtMs = Date.now();
        const triedWhileDown = (answers: readonly { sentAtMs: number }[]): boolean =>
          answers.filter((a) => a.sentAtMs > downAtMs).length >= 5;
        await load.waitFor(triedWhileDown, WAIT_MS, '5 publishes tried while the database is down');
        const sawOutage = (l: LogLine): boolean =>
          (l.msg === 'store call failed' || l.event === 'database.unavailable') && (l.time as number) >= stoppingAtMs;
        for (const d of dispatchers) await d.waitForLog(sawOutage, WAIT_MS, 'a failed store call');
        const upAtMs = Date.now();
        await world.cluster.start();
        const resumed = (l: LogLine): boolean => l.msg === 'claims resumed' && (l.time as number) >= upAtMs;
        for (const d of dispatchers) await d.waitForLog(resumed, WAIT_MS, 'claims resumed');
        const whileDown = load.answers.filter((a) => a.sentAtMs > downAtMs && a.answeredAtMs <= upAtMs);
        const afterUp = load.accepted;
        await load.waitFor(() => load.accepted >= afterUp + 40, WAIT_MS, '40 more accepted after the restart');
        await load.stop();

        // PgBouncer answers for the missing server (SQLSTATE 08P01, or the server's 57P01 as it shuts down): still 503.
        const answeredWhileDown = [...new Set(whileDown.map((a) => a.status))];
        assert.deepEqual(answeredWhileDown, [503], 'every publish answered while the database was down is 503');
        for (const p of [apiProcess, ...dispatchers]) assert.equal(p.alive, true, `${p.name} never exited`);
        await world.receiver.waitFor((rs) => ledger.allSeen(rs), WAIT_MS, 'every acknowledged message delivered');
        await world.waitForRows<{ state: string }>(
          'SELECT DISTINCT state FROM deliveries WHERE app_id = $1',
          [appId],
          (rows) => rows.length === 1 && rows[0]?.state === 'succeeded',
          WAIT_MS,
          'every delivery succeeded',
        );
        const charges = await world.attemptAccounting(appId);
        assert.equal(charges.unrecorded, 0, 'no delivery was charged an attempt that is not recorded');
        assert.equal(charges.notSucceededOnce, 0, 'each delivery has exactly one succeeded attempt');
        assert.equal(await world.stuckLeases(), 0);
        const requests = (await world.receiver.requests()).filter((r) => paths.includes(r.path));
        const figures = ledger.figures(requests);
        assert.equal(figures.lost, 0, `lost: ${ledger.missing(requests).join(', ')}`);
        assert.equal(figures.invalidSignatures, 0);
        const reclaimed = await world.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM delivery_events e
        JOIN deliveries d ON d.id = e.delivery_id WHERE d.app_id = $1 AND e.reason = 'reclaimed'`,
          [appId],
        );
        const reclaims = reclaimed[0]?.n ?? 0;
        const duplicates = `duplicates (${figures.duplicates}) come only from reclaimed leases (${reclaims})`;
        assert.ok(figures.duplicates <= reclaims, duplicates);
        const statuses = [...new Set(whileDown.map((a) => a.status))].join('/');
        printSummary('4p database restart under load through PgBouncer (fast)', figures, started, {
          publishes_tried: load.answers.length,
          while_down: statuses,
          reclaimed: reclaims,
        });
      });
    },
  );
});
