/**
 * End to end (docs/adr/0003-svix-compatibility.md): secret rotation, recover and replay-missing with an in-process
 * Tidings (API + dispatcher on the PostgreSQL server, driven by the official svix client) and a real receiver process
 * that verifies every request with `standardwebhooks`. Retry schedules are in milliseconds; time after the grace
 * period is reached by moving the row's `previous_secret_until`, never by sleeping.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { BackgroundTaskStatus, Webhook as SvixWebhook, type Svix } from 'svix';
import { encodeSecret } from '../../src/domain/signing.ts';
import type { TestDatabase } from '../support/db.ts';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import type { LogTap, LogLine } from '../support/log-tap.ts';
import type { ReceivedRequest, TestReceiver } from '../support/test-receiver.ts';

/** 3 attempts in all: a message whose receiver keeps failing is a dead letter within ~50 ms. */
const SCHEDULE = '10ms,20ms';
const WAIT_MS = 60_000;

const attempted =
  (predicate: (l: LogLine) => boolean) =>
  (l: LogLine): boolean =>
    l.event === 'delivery.attempted' && predicate(l);

/** Does `secret` verify this request, with the standardwebhooks verifier and with the svix one? */
function verifies(secret: string, r: ReceivedRequest): { standardwebhooks: boolean; svix: boolean } {
  const headers = {
    'webhook-id': r.webhookId ?? '',
    'webhook-timestamp': r.webhookTimestamp ?? '',
    'webhook-signature': r.webhookSignature ?? '',
  };
  const attempt = (verify: () => unknown): boolean => {
    try {
      verify();
      return true;
    } catch {
      return false;
    }
  };
  return {
    standardwebhooks: attempt(() => new StandardWebhook(secret).verify(r.body, headers)),
    svix: attempt(() => new SvixWebhook(secret).verify(r.body, headers)),
  };
}

describe('Svix API end to end on the PostgreSQL server: rotation, recover, replay-missing', () => {
  let world: InProcessWorld;
  let database: TestDatabase;
  let receiver: TestReceiver;
  let svix: Svix;
  let logs: LogTap;

  before(async () => {
    world = await startInProcessWorld({
      TIDINGS_RETRY_SCHEDULE: SCHEDULE,
      TIDINGS_RETRY_JITTER: '0',
      TIDINGS_REPLAY_RATE: '500',
      TIDINGS_TASK_BATCH: '20',
      // The failing phase must end in dead letters, not be held back by the endpoint's circuit breaker.
      TIDINGS_BREAKER_THRESHOLD: '1000000',
    });
    ({ database, receiver, svix, logs } = world);
  });

  after(async () => {
    await world?.stop();
  });

  async function taskEnded(taskId: string) {
    await logs.waitFor((l) => l.msg === 'task.ended' && l.taskId === taskId, WAIT_MS, `the end of task ${taskId}`);
    return svix.backgroundTask.get(taskId);
  }

  test(
    'secret rotation: during the grace period verifiers with the old and with the new secret both accept; after ' +
      'it only the new one',
    async () => {
      const app = await svix.application.create({ name: 'rotation' });
      const oldSecret = encodeSecret(randomBytes(32));
      const newSecret = encodeSecret(randomBytes(32));
      await receiver.setSecret('/rotate', [oldSecret, newSecret]);
      const ep = await svix.endpoint.create(app.id, { url: receiver.url('/rotate'), secret: oldSecret });
      const deliver = async (label: string): Promise<ReceivedRequest> => {
        const msg = await svix.message.create(app.id, { eventType: 'rotation.test', payload: { label } });
        const [request] = await receiver.waitForCount(
          1,
          WAIT_MS,
          (r) => r.path === '/rotate' && r.webhookId === msg.id,
        );
        assert.equal(request!.signatureValid, true);
        return request!;
      };

      const before = await deliver('before');
      assert.deepEqual(verifies(oldSecret, before), { standardwebhooks: true, svix: true });
      assert.deepEqual(verifies(newSecret, before), { standardwebhooks: false, svix: false });

      await svix.endpoint.rotateSecret(app.id, ep.id, { key: newSecret });
      assert.equal((await svix.endpoint.getSecret(app.id, ep.id)).key, newSecret);
      const during = await deliver('during');
      assert.equal(
        during.webhookSignature!.split(' ').length,
        2,
        'two signatures while the previous secret is in its grace period',
      );
      assert.deepEqual(
        verifies(oldSecret, during),
        { standardwebhooks: true, svix: true },
        'a receiver still on the old secret accepts',
      );
      assert.deepEqual(
        verifies(newSecret, during),
        { standardwebhooks: true, svix: true },
        'a receiver already on the new secret accepts',
      );

      // The grace period ends: move its end into the past (the seam the claim reads), no sleeping.
      await database.db.query(
        `UPDATE endpoints SET previous_secret_until = clock_timestamp() - interval '1 second' WHERE id = $1`,
        [ep.id],
      );
      const afterGrace = await deliver('after');
      assert.equal(afterGrace.webhookSignature!.split(' ').length, 1);
      assert.deepEqual(
        verifies(oldSecret, afterGrace),
        { standardwebhooks: false, svix: false },
        'the old secret no longer verifies',
      );
      assert.deepEqual(verifies(newSecret, afterGrace), { standardwebhooks: true, svix: true });
    },
  );

  test(
    'recover: of 50 failed and 50 delivered messages in the window exactly the 50 are sent again, with their ' +
      'webhook-id; a second recover sends nothing',
    async () => {
      const app = await svix.application.create({ name: 'recover' });
      const secret = encodeSecret(randomBytes(32));
      await receiver.setSecret('/recover', secret);
      const ep = await svix.endpoint.create(app.id, { url: receiver.url('/recover'), secret });
      const onPath = (r: ReceivedRequest) => r.path === '/recover';

      // 50 delivered.
      const delivered: string[] = [];
      for (let i = 0; i < 50; i++)
        delivered.push((await svix.message.create(app.id, { eventType: 'recover.ok', payload: { i } })).id);
      await receiver.waitForCount(50, WAIT_MS, onPath);
      // 50 that fail every attempt and end as dead letters.
      await receiver.script('/recover', [], { status: 503 });
      const failed: string[] = [];
      for (let i = 0; i < 50; i++)
        failed.push((await svix.message.create(app.id, { eventType: 'recover.failing', payload: { i } })).id);
      const failedSet = new Set(failed);
      await logs.waitForCount(
        attempted((l) => failedSet.has(String(l.messageId)) && l.next === 'dead'),
        50,
        WAIT_MS,
        'dead letters',
      );
      const states = async () =>
        (
          await database.db.query<{ state: string; n: number }>(
            'SELECT state, count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 GROUP BY state ORDER BY state',
            [ep.id],
          )
        ).rows;
      assert.deepEqual(await states(), [
        { state: 'dead', n: 50 },
        { state: 'succeeded', n: 50 },
      ]);
      assert.equal((await svix.endpoint.getStats(app.id, ep.id)).fail, 50);
      const sentBefore = (await receiver.requests()).filter(onPath).length;
      assert.equal(sentBefore, 50 + 50 * 3, '50 delivered once, 50 tried three times');

      // The receiver is back; recover the window that holds all 100.
      await receiver.script('/recover', [], { status: 200 });
      const since = (await svix.message.get(app.id, delivered[0]!)).timestamp;
      const task = await taskEnded((await svix.endpoint.recover(app.id, ep.id, { since })).id);
      assert.equal(task.status, BackgroundTaskStatus.Finished);
      assert.equal(task.data.messagesSent, 50);
      await logs.waitForCount(
        attempted((l) => failedSet.has(String(l.messageId)) && l.next === 'succeeded'),
        50,
        WAIT_MS,
        'recovered deliveries',
      );
      assert.deepEqual(await states(), [{ state: 'succeeded', n: 100 }]);
      const resent = (await receiver.requests()).filter(onPath).slice(sentBefore);
      assert.equal(resent.length, 50, 'exactly the 50 failed messages were sent again');
      assert.deepEqual(new Set(resent.map((r) => r.webhookId)), failedSet, 'each with its original webhook-id');
      assert.ok(resent.every((r) => r.signatureValid === true));
      const attempts = (await svix.messageAttempt.listByMsg(app.id, failed[0]!)).data;
      assert.deepEqual(
        attempts.map((a) => a.responseStatusCode),
        [200, 503, 503, 503],
        'the history is kept; newest first',
      );

      // Everything succeeded: a second recover of the same window queues nothing and nothing is sent.
      const second = await taskEnded((await svix.endpoint.recover(app.id, ep.id, { since })).id);
      assert.equal(second.data.messagesSent, 0);
      assert.deepEqual(await states(), [{ state: 'succeeded', n: 100 }], 'nothing pending or in flight');
      assert.equal((await receiver.requests()).filter(onPath).length, sentBefore + 50);
    },
  );

  test(
    'replay-missing after re-enabling sends each message kept ' + 'while the endpoint was disabled exactly once',
    async () => {
      const app = await svix.application.create({ name: 'replay-missing' });
      const secret = encodeSecret(randomBytes(32));
      await receiver.setSecret('/missing', secret);
      const ep = await svix.endpoint.create(app.id, { url: receiver.url('/missing'), secret, disabled: true });
      const kept: string[] = [];
      for (let i = 0; i < 12; i++)
        kept.push((await svix.message.create(app.id, { eventType: 'missing.x', payload: { i } })).id);
      await svix.endpoint.patch(app.id, ep.id, { disabled: false });
      const since = (await svix.message.get(app.id, kept[0]!)).timestamp;
      const task = await taskEnded((await svix.endpoint.replayMissing(app.id, ep.id, { since })).id);
      assert.equal(task.data.messagesSent, 12);
      const seen = await receiver.waitForCount(12, WAIT_MS, (r) => r.path === '/missing');
      assert.deepEqual(new Set(seen.map((r) => r.webhookId)), new Set(kept));
      const keptSet = new Set(kept);
      await logs.waitForCount(
        attempted((l) => keptSet.has(String(l.messageId)) && l.next === 'succeeded'),
        12,
        WAIT_MS,
        'replayed deliveries',
      );
      const again = await taskEnded((await svix.endpoint.replayMissing(app.id, ep.id, { since })).id);
      assert.equal(again.data.messagesSent, 0);
      assert.equal((await receiver.requests()).filter((r) => r.path === '/missing').length, 12, 'each exactly once');
    },
  );
});
