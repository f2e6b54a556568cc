/**
 * Failure table (docs/guides/failure-table.md), scenario 5: the database unreachable from a dispatcher at claim time.
 * The dispatcher reaches the private cluster through a TCP proxy that the test cuts (every connection reset, new ones
 * refused); the API reaches it directly, so messages keep being accepted meanwhile.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CLAIM_BACKOFF_BASE_MS, CLAIM_BACKOFF_MAX_MS } from '../../src/app/dispatcher/dispatcher.ts';
import { Ledger, printSummary } from '../support/fault-load.ts';
import { ApiClient, createWorld, type FaultWorld } from '../support/fault-world.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import type { LogLine } from '../support/tidings-process.ts';

const WAIT_MS = 60_000;
const CLAIM_FAILURES = 4;

async function readyStatus(adminUrl: string): Promise<number> {
  return (await fetch(`${adminUrl}/readyz`, { signal: AbortSignal.timeout(10_000) })).status;
}

describe('database unreachable at claim time', () => {
  let world: FaultWorld;
  let proxy: TcpProxy;

  before(async () => {
    world = await createWorld();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: world.cluster.port });
  });
  after(async () => {
    await proxy?.close();
    await world?.close();
  });

  test(
    'scenario 5: a dispatcher cut from the database backs off with jitter, reports not ready, does not crash or ' +
      'send anything, and resumes when the path returns',
    async () => {
      const started = Date.now();
      const apiProcess = await world.startApi();
      const api = new ApiClient(apiProcess.apiUrl ?? '');
      const { appId, endpoints } = await world.setupApp(api, 1, 's5');
      const paths = endpoints.map((e) => e.path);
      const viaProxy = world.databaseUrl.replace(`:${world.cluster.port}/`, `:${proxy.port}/`);
      // Each back-off is a debug line (at warn, the outage is one line when it starts and one when it ends).
      const d = await world.startDispatcher('s5-d', { DATABASE_URL: viaProxy, TIDINGS_LOG_LEVEL: 'debug' });
      const pid = d.pid;
      const ledger = new Ledger();

      const warmup = await api.publish(appId, { warmup: true });
      ledger.accept(warmup.id ?? '', paths);
      await world.receiver.waitFor((rs) => ledger.allSeen(rs), WAIT_MS, 'warm-up delivered through the proxy');
      // Its outcome must be written before the cut: an outcome still waiting to be recorded when the path goes
      // would be retried until its lease expires, and the delivery then sent again (a legitimate duplicate).
      await world.waitForRows<{ state: string }>(
        'SELECT state FROM deliveries WHERE app_id = $1',
        [appId],
        (r) => r[0]?.state === 'succeeded',
        WAIT_MS,
        'warm-up recorded',
      );
      assert.equal(await readyStatus(d.adminUrl ?? ''), 200);

      const cutAtMs = Date.now();
      proxy.setMode('cut');
      const requestsAtCut = (await world.receiver.requests()).length;
      for (let i = 0; i < 10; i++) {
        const res = await api.publish(appId, { n: i });
        assert.equal(res.status, 202, 'the API, on its own path, keeps accepting');
        ledger.accept(res.id ?? '', paths);
      }
      const isFailure = (l: LogLine): boolean => l.msg === 'claim failed; backing off' && (l.time as number) >= cutAtMs;
      while (d.logs(isFailure).length < CLAIM_FAILURES) {
        const seen = d.logs(isFailure).length;
        await d.waitForLog(
          (l) => isFailure(l) && d.logs(isFailure).length > seen,
          WAIT_MS,
          `${CLAIM_FAILURES} failed claims`,
        );
      }
      assert.equal(await readyStatus(d.adminUrl ?? ''), 503, 'readiness reports not ready while claims fail');
      assert.equal(d.alive, true, 'no crash');
      assert.equal(d.pid, pid);
      assert.equal((await world.receiver.requests()).length, requestsAtCut, 'no HTTP request is sent without a claim');

      // Back-off: exponential (base 100 ms · 2^n from the first failure), each delay jittered in [0.5, 1.5]·base,
      // and the next claim waits for it (no hot loop).
      const failures = d.logs(isFailure);
      const delays = failures.map((l) => Number(l.retryInMs));
      const times = failures.map((l) => Number(l.time));
      const firstN = failures.length;
      const ratios: number[] = [];
      for (let k = 0; k < firstN; k++) {
        const base = Math.min(CLAIM_BACKOFF_MAX_MS, CLAIM_BACKOFF_BASE_MS * 2 ** Math.min(k + 1, 16));
        const ratio = (delays[k] ?? 0) / base;
        ratios.push(ratio);
        assert.ok(ratio >= 0.5 && ratio <= 1.5, `failure ${k + 1}: retry in ${delays[k]} ms, base ${base} ms`);
        if (k > 0)
          assert.ok(
            (times[k] ?? 0) - (times[k - 1] ?? 0) >= (delays[k - 1] ?? 0) - 5,
            `claim ${k + 1} waited for the back-off of claim ${k}`,
          );
      }
      assert.ok(
        new Set(ratios.map((r) => r.toFixed(3))).size > 1,
        `the back-off is jittered: ratios ${ratios.join(', ')}`,
      );

      proxy.setMode('pass');
      const restoredAtMs = Date.now();
      await world.receiver.waitFor((rs) => ledger.allSeen(rs), WAIT_MS, 'work resumes when the path returns');
      await world.waitForRows<{ state: string }>(
        'SELECT state FROM deliveries WHERE app_id = $1',
        [appId],
        (rows) => rows.length === 11 && rows.every((r) => r.state === 'succeeded'),
        WAIT_MS,
        'every delivery succeeded',
      );
      const resumedInMs = Date.now() - restoredAtMs;
      let ready = await readyStatus(d.adminUrl ?? '');
      for (let i = 0; i < 50 && ready !== 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        ready = await readyStatus(d.adminUrl ?? '');
      }
      assert.equal(ready, 200, 'ready again');

      const requests = (await world.receiver.requests()).filter((r) => paths.includes(r.path));
      const figures = ledger.figures(requests);
      assert.equal(figures.lost, 0);
      assert.equal(figures.duplicates, 0);
      assert.equal(figures.invalidSignatures, 0);
      const charged = await world.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1 AND attempt_count <> 1',
        [appId],
      );
      assert.equal(charged[0]?.n, 0, 'the cut charged no attempt');
      assert.equal(await world.stuckLeases(), 0);
      printSummary('5 database unreachable at claim time (proxy cut)', figures, started, {
        claim_failures: failures.length,
        retry_in_ms: delays.join('/'),
        resumed_in_ms: resumedInMs,
      });
      await d.stop();
      await apiProcess.stop();
    },
  );

  test(
    'scenario 5b: a dispatcher stopped while its database path is stalled exits after TIDINGS_SHUTDOWN_GRACE + ' +
      'TIDINGS_SHUTDOWN_TIMEOUT with code 1, naming the step; its delivery is sent again after the lease',
    async () => {
      proxy.setMode('pass');
      const apiProcess = await world.startApi('s5b-api');
      const api = new ApiClient(apiProcess.apiUrl ?? '');
      const { appId, endpoints } = await world.setupApp(api, 1, 's5b');
      const paths = endpoints.map((e) => e.path);
      // The first request is held past the grace, so the stop has a lease to release on the stalled path.
      await world.receiver.script(paths[0] ?? '', [{ status: 200, delayMs: 10_000 }], { status: 200 });
      const viaProxy = world.databaseUrl.replace(`:${world.cluster.port}/`, `:${proxy.port}/`);
      const d = await world.startDispatcher('s5b-d', {
        DATABASE_URL: viaProxy,
        TIDINGS_SHUTDOWN_GRACE: '1s',
        TIDINGS_SHUTDOWN_TIMEOUT: '2s',
      });
      const ledger = new Ledger();
      const res = await api.publish(appId, { stalled: true });
      ledger.accept(res.id ?? '', paths);
      await world.receiver.waitFor(
        (rs) => rs.some((r) => r.path === paths[0]),
        WAIT_MS,
        'the held request reached the receiver',
      );
      await world.waitForRows<{ dispatcher_id: string | null }>(
        'SELECT dispatcher_id FROM deliveries WHERE app_id = $1',
        [appId],
        (r) => r[0]?.dispatcher_id === 's5b-d',
        WAIT_MS,
        'the delivery leased by s5b-d',
      );

      proxy.setMode('stall');
      const signalledAt = Date.now();
      const exit = await d.stop(20_000);
      const tookMs = Date.now() - signalledAt;
      proxy.setMode('pass');
      assert.deepEqual(exit, { code: 1, signal: null }, 'a stop that cannot finish exits with code 1');
      // 1 s of grace + 2 s of timeout; far below the 30 s a statement on the stalled path would wait.
      assert.ok(tookMs >= 3_000 && tookMs < 10_000, `the stop gave up after grace + timeout (${tookMs} ms)`);
      const line = d.logs((l) => String(l.msg).startsWith('stop did not finish in time'))[0];
      assert.equal(
        line?.step,
        'dispatcher',
        'the log names the step still running: the lease release on the stalled path',
      );

      // Nothing is lost: the lease left behind expires and another dispatcher sends the message again.
      const next = await world.startDispatcher('s5b-d2');
      await world.waitForRows<{ state: string }>(
        'SELECT state FROM deliveries WHERE app_id = $1',
        [appId],
        (rows) => rows.length === 1 && rows[0]?.state === 'succeeded',
        WAIT_MS,
        'the delivery succeeded after the lease expired',
      );
      const figures = ledger.figures((await world.receiver.requests()).filter((r) => paths.includes(r.path)));
      assert.equal(figures.lost, 0);
      assert.equal(await world.stuckLeases(), 0);
      await next.stop();
      await apiProcess.stop();
    },
  );
});
