/**
 * Failure table (docs/guides/failure-table.md), scenario 8: the receiver is down for the whole retry schedule
 * (compressed to milliseconds). The endpoint points at a TCP proxy in front of the receiver; the proxy resets every
 * connection while the receiver is "down". Attempts must follow the schedule within the jitter bound (read from the
 * timeline rows, database clock), the delivery must end as a visible dead letter, and a replay after
 * recovery must deliver it once with the original webhook-id even when asked twice.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { encodeSecret } from '../../src/domain/signing.ts';
import { Ledger, printSummary } from '../support/fault-load.ts';
import { ApiClient, createWorld, type FaultWorld } from '../support/fault-world.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const WAIT_MS = 60_000;
const SCHEDULE_MS = [300, 600, 1_200];
const JITTER = 0.2;
const POLL_MS = 50;
/**
 * Upper slack over delay·(1 + jitter) + poll, in ms: a claim on a shared machine with its cores saturated may
 * come seconds late, never early (the lower bound is the guarantee; this one catches a delay unit mistaken).
 */
const LATE_SLACK_MS = 5_000;

interface EventRow {
  delivery_id: string;
  state: string;
  reason: string | null;
  at: Date;
}

describe('receiver down for the whole retry schedule', () => {
  let world: FaultWorld;
  let proxy: TcpProxy;

  before(async () => {
    world = await createWorld({
      settings: {
        TIDINGS_RETRY_SCHEDULE: SCHEDULE_MS.map((ms) => `${ms}ms`).join(','),
        TIDINGS_RETRY_JITTER: String(JITTER),
        TIDINGS_POLL_INTERVAL: `${POLL_MS}ms`,
        // The circuit breaker (another mechanism, which defers without spending attempts) would hold the last
        // retries back once 10 attempts in a row failed; this scenario measures the retry schedule alone.
        TIDINGS_BREAKER_THRESHOLD: '1000',
      },
    });
    proxy = await startTcpProxy({ host: '127.0.0.1', port: world.receiver.port });
  });
  after(async () => {
    await proxy?.close();
    await world?.close();
  });

  test(
    'scenario 8: with the receiver down, attempts follow the schedule within the jitter bound, the delivery ends ' +
      'as a visible dead letter, and a replay after recovery delivers it once with the original webhook-id, even ' +
      'when asked twice',
    async () => {
      const started = Date.now();
      const api = new ApiClient((await world.startApi()).apiUrl ?? '');
      const appId = await api.createApp('s8');
      const path = '/s8-0';
      const secret = encodeSecret(randomBytes(24));
      await world.receiver.setSecret(path, secret);
      const endpointId = await api.createEndpoint(appId, `http://127.0.0.1:${proxy.port}${path}`, secret);
      const d = await world.startDispatcher('s8-d');

      proxy.setMode('cut');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await api.publish(appId, { n: i });
        assert.equal(res.status, 202);
        ids.push(res.id ?? '');
      }
      const attemptsTotal = SCHEDULE_MS.length + 1;
      await world.waitForRows<{ state: string }>(
        'SELECT state FROM deliveries WHERE app_id = $1',
        [appId],
        (rows) => rows.length === 3 && rows.every((r) => r.state === 'dead'),
        WAIT_MS,
        'every delivery dead',
      );
      assert.equal(
        (await world.receiver.requests()).filter((r) => r.path === path).length,
        0,
        'nothing reached the receiver while it was down',
      );

      const deliveries = await world.query<{
        id: string;
        message_id: string;
        attempt_count: number;
        dead_reason: string;
      }>('SELECT id, message_id, attempt_count, dead_reason FROM deliveries WHERE app_id = $1 ORDER BY id', [appId]);
      const events = await world.query<EventRow>(
        'SELECT e.delivery_id, e.state, e.reason, e.at FROM delivery_events e JOIN deliveries d ON d.id = ' +
          'e.delivery_id WHERE d.app_id = $1 ORDER BY e.id',
        [appId],
      );
      const gaps: number[] = [];
      for (const delivery of deliveries) {
        assert.deepEqual(
          { attempts: delivery.attempt_count, reason: delivery.dead_reason },
          { attempts: attemptsTotal, reason: 'exhausted' },
        );
        const attempts = await world.query<{ attempt_number: number; succeeded: boolean; error_kind: string | null }>(
          'SELECT attempt_number, succeeded, error_kind FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number',
          [delivery.id],
        );
        assert.deepEqual(
          attempts.map((a) => a.attempt_number),
          [1, 2, 3, 4],
        );
        assert.ok(
          attempts.every((a) => !a.succeeded && a.error_kind !== null),
          JSON.stringify(attempts),
        );
        const mine = events.filter((e) => e.delivery_id === delivery.id);
        assert.deepEqual(
          mine.map((e) => `${e.state}:${e.reason ?? ''}`),
          [
            'pending:published',
            'leased:claimed',
            'pending:retry_scheduled',
            'leased:claimed',
            'pending:retry_scheduled',
            'leased:claimed',
            'pending:retry_scheduled',
            'leased:claimed',
            'dead:exhausted',
          ],
        );
        // Each retry: from the outcome that scheduled it to the claim that took it (database clock).
        for (let k = 0; k < SCHEDULE_MS.length; k++) {
          const scheduled = mine[2 + 2 * k];
          const claimed = mine[3 + 2 * k];
          assert.ok(scheduled !== undefined && claimed !== undefined);
          const gapMs = claimed.at.getTime() - scheduled.at.getTime();
          const delayMs = SCHEDULE_MS[k] ?? 0;
          gaps.push(gapMs);
          assert.ok(
            gapMs >= delayMs * (1 - JITTER) - 5,
            `retry ${k + 1} of ${delivery.id}: claimed ${gapMs} ms after it was scheduled, earlier than ` +
              `${delayMs}·(1−${JITTER})`,
          );
          assert.ok(
            gapMs <= delayMs * (1 + JITTER) + POLL_MS + LATE_SLACK_MS,
            `retry ${k + 1} of ${delivery.id}: claimed ${gapMs} ms after it was scheduled, later than ` +
              `${delayMs}·(1+${JITTER}) + poll + slack`,
          );
        }
      }
      // The jitter spreads synchronized failures: three deliveries failing together do not retry in lockstep.
      const firstGaps = deliveries.map((_, i) => gaps[i * SCHEDULE_MS.length] ?? 0);
      assert.ok(new Set(firstGaps).size > 1, `jittered first retries: ${firstGaps.join(', ')} ms`);

      // Visible to an operator through the API.
      const first = ids[0] ?? '';
      const timeline = await api.request('GET', `/api/v1/app/${appId}/msg/${first}/endpoint/${endpointId}/timeline`);
      assert.equal(timeline.status, 200);
      assert.deepEqual(
        {
          state: (timeline.json as { deliveryState: string }).deliveryState,
          reason: (timeline.json as { deadReason: string }).deadReason,
        },
        { state: 'dead', reason: 'exhausted' },
      );
      const listed = await api.request('GET', `/api/v1/app/${appId}/attempt/msg/${first}`);
      assert.equal((listed.json as { data: unknown[] }).data.length, attemptsTotal);

      // The receiver recovers; the first message is replayed twice while the dispatcher is frozen: queued once.
      proxy.setMode('pass');
      d.pause();
      let queuedOnce: { state: string; n: number }[];
      try {
        for (let i = 0; i < 2; i++) {
          const res = await api.request('POST', `/api/v1/app/${appId}/msg/${first}/endpoint/${endpointId}/resend`);
          assert.equal(res.status, 202, JSON.stringify(res.json));
        }
        queuedOnce = await world.query<{ state: string; n: number }>(
          'SELECT state, count(*)::int AS n FROM deliveries WHERE message_id = $1 GROUP BY state',
          [first],
        );
      } finally {
        d.resume();
      }
      assert.deepEqual(queuedOnce, [{ state: 'pending', n: 1 }], 'two replays queue the delivery once');
      const ledger = new Ledger();
      ledger.accept(first, [path]);
      await world.receiver.waitFor((rs) => ledger.allSeen(rs), WAIT_MS, 'the replay delivered');
      await world.waitForRows<{ state: string }>(
        'SELECT state FROM deliveries WHERE message_id = $1',
        [first],
        (r) => r[0]?.state === 'succeeded',
        WAIT_MS,
        'replayed delivery succeeded',
      );
      const replayAttempts = await world.query<{ attempt_number: number; trigger: string; succeeded: boolean }>(
        'SELECT attempt_number, trigger, succeeded FROM attempts WHERE message_id = $1 ORDER BY attempt_number',
        [first],
      );
      assert.deepEqual(replayAttempts.at(-1), {
        attempt_number: attemptsTotal + 1,
        trigger: 'manual',
        succeeded: true,
      });
      assert.equal(replayAttempts.length, attemptsTotal + 1, 'one replayed attempt');
      const requests = (await world.receiver.requests()).filter((r) => r.path === path);
      assert.deepEqual(
        requests.map((r) => r.webhookId),
        [first],
        'one request, with the original webhook-id',
      );
      const others = await world.query<{ state: string }>(
        'SELECT state FROM deliveries WHERE app_id = $1 AND message_id <> $2',
        [appId, first],
      );
      assert.deepEqual(
        others.map((r) => r.state),
        ['dead', 'dead'],
        'the others stay visible dead letters',
      );
      assert.equal(await world.stuckLeases(), 0);
      const figures = ledger.figures(requests);
      assert.equal(figures.lost, 0);
      assert.equal(figures.duplicates, 0);
      assert.equal(figures.invalidSignatures, 0);
      printSummary('8 receiver down for the whole schedule, then replay', figures, started, {
        dead_letters: 3,
        retry_gaps_ms: gaps.join('/'),
        replays: 2,
        replayed_requests: requests.length,
      });
    },
  );
});
