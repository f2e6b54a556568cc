/**
 * Failure table (docs/guides/failure-table.md), scenario 3: the API process killed (SIGKILL) after the publish
 * transaction committed and before the answer left (fault point `after_commit_before_response`). The client never got
 * an answer; its retry with the same Idempotency-Key, on a fresh API process, must return the original message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ledger, printSummary } from '../support/fault-load.ts';
import { ApiClient, createWorld, type FaultWorld } from '../support/fault-world.ts';

const WAIT_MS = 60_000;

describe('API process crash after commit', () => {
  let world: FaultWorld;

  before(async () => {
    world = await createWorld();
  });
  after(async () => {
    await world?.close();
  });

  test(
    'scenario 3: an API process killed after the commit and before the answer: the retry with the same ' +
      'Idempotency-Key returns the original message id, one message row, delivered',
    async () => {
      const started = Date.now();
      const first = await world.startApi('api-1', { TIDINGS_TEST_FAULT_POINTS: 'after_commit_before_response:exit' });
      const api1 = new ApiClient(first.apiUrl ?? '');
      const { appId, endpoints } = await world.setupApp(api1, 1, 's3');
      const paths = endpoints.map((e) => e.path);
      await world.startDispatcher('s3-d');

      const key = `s3-${Date.now()}`;
      const payload = { order: 42, note: 'the answer to this publish is lost' };
      await assert.rejects(api1.publish(appId, payload, key), 'the client sees the connection drop, no answer');
      const fired = await first.waitForLog(
        (l) => l.event === 'fault_point.fired',
        WAIT_MS,
        'after_commit_before_response fired',
      );
      assert.equal(fired.point, 'after_commit_before_response');
      assert.equal(fired.idempotencyKey, key);
      assert.equal((await first.waitForExit(WAIT_MS)).signal, 'SIGKILL');

      const committed = await world.query<{ id: string }>('SELECT id FROM messages WHERE app_id = $1', [appId]);
      assert.equal(committed.length, 1, 'the message committed before the crash');

      const second = await world.startApi('api-2');
      const api2 = new ApiClient(second.apiUrl ?? '');
      const retry = await api2.publish(appId, payload, key);
      assert.equal(retry.status, 202, JSON.stringify(retry.json));
      assert.equal(retry.replayed, true, 'the stored answer is replayed (idempotent-replayed: true)');
      assert.equal(retry.id, committed[0]?.id, 'the retry returns the original message id');
      const again = await api2.publish(appId, payload, key);
      assert.equal(again.id, retry.id, 'and so does every later retry');
      const other = await api2.publish(appId, { order: 43 }, key);
      assert.equal(other.status, 422, 'the same key with another body is refused');

      const rows = await world.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE app_id = $1', [
        appId,
      ]);
      assert.equal(rows[0]?.n, 1, 'one message row');
      const ledger = new Ledger();
      ledger.accept(retry.id ?? '', paths);
      await world.receiver.waitFor((rs) => ledger.allSeen(rs), WAIT_MS, 'the message delivered');
      await world.waitForRows<{ state: string }>(
        'SELECT state FROM deliveries WHERE app_id = $1',
        [appId],
        (r) => r.length === 1 && r[0]?.state === 'succeeded',
        WAIT_MS,
        'delivery succeeded',
      );
      const figures = ledger.figures((await world.receiver.requests()).filter((r) => paths.includes(r.path)));
      assert.equal(figures.lost, 0);
      assert.equal(figures.duplicates, 0);
      assert.equal(figures.invalidSignatures, 0);
      assert.equal(await world.stuckLeases(), 0);
      printSummary('3 API SIGKILL after commit, before response', figures, started, {
        message_rows: 1,
        retry_replayed: true,
      });
    },
  );
});
