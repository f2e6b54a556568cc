/**
 * End to end (docs/design.md#the-protocol): Tidings (API + dispatcher, in process, on the PostgreSQL server) publishes
 * through its public API — driven by the official `svix` client — to a real receiver process on 127.0.0.1 that
 * verifies every request with the public `standardwebhooks` package.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Svix } from 'svix';
import type { Running } from '../../src/main/compose.ts';
import type { TestDatabase } from '../support/db.ts';
import type { LogTap, LogLine } from '../support/log-tap.ts';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import type { TestReceiver } from '../support/test-receiver.ts';

/** Retry schedule in ms for the test: 4 attempts in all. */
const SCHEDULE_MS = [60, 120, 180];

const attempted =
  (messageId: string, next?: string) =>
  (l: LogLine): boolean =>
    l.event === 'delivery.attempted' && l.messageId === messageId && (next === undefined || l.next === next);

describe('end to end on the PostgreSQL server', () => {
  let world: InProcessWorld;
  let database: TestDatabase;
  let tidings: Running;
  let receiver: TestReceiver;
  let svix: Svix;
  let logs: LogTap;
  let endpoint: InProcessWorld['endpoint'];

  before(async () => {
    world = await startInProcessWorld({ TIDINGS_RETRY_SCHEDULE: SCHEDULE_MS.map((ms) => `${ms}ms`).join(',') });
    ({ database, tidings, receiver, svix, logs } = world);
    endpoint = (appId, path) => world.endpoint(appId, path);
  });

  after(async () => {
    await world?.stop();
  });

  test('1,000 messages fanned out to 3 endpoints are all delivered, each once, every signature valid', async () => {
    const app = await svix.application.create({ name: 'fan-out', uid: 'fan-out' });
    const paths = ['/fan/a', '/fan/b', '/fan/c'];
    for (const path of paths) await endpoint(app.id, path);
    const ids: string[] = [];
    const total = 1000;
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < total) {
          const n = next++;
          const msg = await svix.message.create(app.id, {
            eventType: 'order.created',
            payload: { n, note: 'fan-out' },
          });
          ids.push(msg.id);
        }
      }),
    );
    assert.equal(new Set(ids).size, total);
    const seen = await receiver.waitForCount(total * paths.length, 120_000, (r) => r.path.startsWith('/fan/'));
    const idSet = new Set(ids);
    await logs.waitForCount(
      (l) => l.event === 'delivery.attempted' && idSet.has(String(l.messageId)),
      total * paths.length,
      60_000,
      'recorded attempts',
    );
    // Every delivery is recorded as succeeded after one attempt: nothing more will be sent.
    const rows = (
      await database.db.query(
        `SELECT state, attempt_count, count(*)::int AS n FROM deliveries WHERE app_id = $1 GROUP BY 1, 2`,
        [app.id],
      )
    ).rows;
    assert.deepEqual(rows, [{ state: 'succeeded', attempt_count: 1, n: total * paths.length }]);
    const all = (await receiver.requests()).filter((r) => r.path.startsWith('/fan/'));
    assert.equal(all.length, total * paths.length, 'each delivery reached the receiver exactly once');
    assert.ok(
      seen.every((r) => r.signatureValid === true),
      'every signature verifies with standardwebhooks',
    );
    for (const path of paths) {
      const got = all.filter((r) => r.path === path).map((r) => r.webhookId);
      assert.deepEqual(new Set(got), new Set(ids), `${path} received every message id once`);
    }
  });

  test('a receiver answering 500, 500, 200 gets three attempts carrying one webhook-id', async () => {
    const app = await svix.application.create({ name: 'flaky' });
    await endpoint(app.id, '/flaky');
    await receiver.script('/flaky', [{ status: 500, body: 'oops' }, { status: 500 }], { status: 200 });
    const msg = await svix.message.create(app.id, { eventType: 'invoice.paid', payload: { amount: 42 } });
    await logs.waitFor(attempted(msg.id, 'succeeded'), 30_000, 'the successful third attempt');
    const requests = (await receiver.requests()).filter((r) => r.path === '/flaky');
    assert.deepEqual(
      requests.map((r) => r.answer.status),
      [500, 500, 200],
    );
    assert.deepEqual(new Set(requests.map((r) => r.webhookId)), new Set([msg.id]));
    assert.ok(requests.every((r) => r.signatureValid === true));
    const attempts = (await svix.messageAttempt.listByMsg(app.id, msg.id, { withContent: true })).data.sort(
      (a, b) => a.timestamp.getTime() - b.timestamp.getTime(),
    );
    assert.deepEqual(
      attempts.map((a) => a.responseStatusCode),
      [500, 500, 200],
    );
    assert.deepEqual(
      attempts.map((a) => a.status),
      [2, 2, 0],
    );
    assert.equal(attempts[0]!.response, 'oops', 'a prefix of the response body is stored');
    // Recorded times follow the schedule within the ±20 % jitter (generous upper bound: noisy machine).
    const gaps = attempts.slice(1).map((a, i) => a.timestamp.getTime() - attempts[i]!.timestamp.getTime());
    gaps.forEach((gap, i) =>
      assert.ok(gap >= SCHEDULE_MS[i]! * 0.8 - 5, `gap ${i + 1} was ${gap} ms, schedule ${SCHEDULE_MS[i]} ms`),
    );
  });

  test(
    'a message that always fails ends as a dead letter after the ' + 'schedule; resend after recovery delivers it',
    async () => {
      const app = await svix.application.create({ name: 'down' });
      const epId = await endpoint(app.id, '/down');
      await receiver.script('/down', [], { status: 503 });
      const msg = await svix.message.create(app.id, { eventType: 'user.deleted', payload: { id: 7 } });
      const dead = await logs.waitFor(attempted(msg.id, 'dead'), 30_000, 'the dead letter');
      assert.equal(dead.attempt, SCHEDULE_MS.length + 1);
      assert.equal(dead.deadReason, 'exhausted');
      const timeline = (await (
        await fetch(`${tidings.apiUrl}/api/v1/app/${app.id}/msg/${msg.id}/endpoint/${epId}/timeline`, {
          headers: { authorization: `Bearer ${world.token}` },
        })
      ).json()) as { deliveryState: string; attemptCount: number };
      assert.equal(timeline.deliveryState, 'dead');
      assert.equal(timeline.attemptCount, SCHEDULE_MS.length + 1);
      assert.equal((await receiver.requests()).filter((r) => r.path === '/down').length, SCHEDULE_MS.length + 1);

      await receiver.script('/down', [], { status: 200 });
      await svix.messageAttempt.resend(app.id, msg.id, epId);
      const resent = await logs.waitFor(
        (l) => attempted(msg.id, 'succeeded')(l) && l.trigger === 'manual',
        30_000,
        'the manual attempt',
      );
      assert.equal(resent.outcome, 'delivered');
      const requests = (await receiver.requests()).filter((r) => r.path === '/down');
      assert.equal(requests.length, SCHEDULE_MS.length + 2);
      assert.equal(requests.at(-1)!.webhookId, msg.id, 'the resend keeps the original webhook-id');
      const attempts = (await svix.messageAttempt.listByMsg(app.id, msg.id)).data;
      const manual = attempts.filter((a) => a.triggerType === 1);
      assert.equal(manual.length, 1);
      assert.equal(manual[0]!.status, 0);
    },
  );

  test(
    'resend with an Idempotency-Key: a retried call answers the ' + 'stored 202 and queues no second attempt',
    async () => {
      const app = await svix.application.create({ name: 'resend-once' });
      const epId = await endpoint(app.id, '/resend-once');
      const msg = await svix.message.create(app.id, { eventType: 'user.deleted', payload: { id: 9 } });
      await logs.waitFor(attempted(msg.id, 'succeeded'), 30_000, 'the first delivery');
      const resend = (): Promise<Response> =>
        fetch(`${tidings.apiUrl}/api/v1/app/${app.id}/msg/${msg.id}/endpoint/${epId}/resend`, {
          method: 'POST',
          headers: { authorization: `Bearer ${world.token}`, 'idempotency-key': `resend-${msg.id}` },
        });
      const first = await resend();
      assert.equal(first.status, 202);
      await logs.waitFor(
        (l) => attempted(msg.id, 'succeeded')(l) && l.trigger === 'manual',
        30_000,
        'the manual attempt',
      );
      const second = await resend();
      assert.equal(second.status, 202);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      // Read right after the answer: a second resend would already have written its timeline row.
      const rows = (
        await database.db.query(
          'SELECT count(*)::int AS n FROM delivery_events v JOIN deliveries d ON d.id = v.delivery_id WHERE ' +
            `d.message_id = $1 AND v.reason = 'resend_requested'`,
          [msg.id],
        )
      ).rows;
      assert.deepEqual(rows, [{ n: 1 }]);
    },
  );

  test('a 410 Gone dead-letters at once and disables the endpoint with a reason', async () => {
    const app = await svix.application.create({ name: 'gone' });
    const epId = await endpoint(app.id, '/gone');
    await receiver.script('/gone', [], { status: 410 });
    const msg = await svix.message.create(app.id, { eventType: 'user.deleted', payload: {} });
    const line = await logs.waitFor(attempted(msg.id, 'dead'), 30_000, 'the 410 dead letter');
    assert.equal(line.attempt, 1);
    assert.equal(line.deadReason, 'gone');
    const ep = await svix.endpoint.get(app.id, epId);
    assert.equal(ep.disabled, true);
    const later = await svix.message.create(app.id, { eventType: 'user.deleted', payload: {} });
    const row = (await database.db.query('SELECT state FROM deliveries WHERE message_id = $1', [later.id])).rows[0];
    assert.deepEqual(row, { state: 'skipped' }, 'messages for a disabled endpoint are kept as skipped');
  });

  test('resend of a message whose content was expunged is refused with 409 and sends nothing', async () => {
    const app = await svix.application.create({ name: 'expunged' });
    const epId = await endpoint(app.id, '/expunged');
    const msg = await svix.message.create(app.id, { eventType: 'user.deleted', payload: { secret: 'gone soon' } });
    await logs.waitFor(attempted(msg.id, 'succeeded'), 30_000, 'the first delivery');
    await svix.message.expungeContent(app.id, msg.id);
    const res = await fetch(`${tidings.apiUrl}/api/v1/app/${app.id}/msg/${msg.id}/endpoint/${epId}/resend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.token}` },
    });
    assert.equal(res.status, 409);
    assert.equal(((await res.json()) as { code: string }).code, 'conflict');
    const state = (await database.db.query('SELECT state FROM deliveries WHERE message_id = $1', [msg.id])).rows[0];
    assert.deepEqual(state, { state: 'succeeded' });
  });

  test('metrics count published messages and attempts by outcome', async () => {
    const text = await (await fetch(`${tidings.apiUrl}/metrics`)).text();
    assert.match(text, /^tidings_messages_published_total [1-9]\d*$/m);
    assert.doesNotMatch(text, /app_[0-9A-Z]{10,}|ep_[0-9A-Z]{10,}/, 'no application or endpoint id in public metrics');
    assert.match(text, /tidings_attempts_total\{outcome="succeeded"\} \d+/);
    assert.match(text, /tidings_attempts_total\{outcome="http_status"\} \d+/);
    assert.match(text, /tidings_writes_fenced_out_total 0/);
  });
});
