/**
 * End to end: a black-holed endpoint does not slow a healthy one; pause, resume, limits and the
 * health read model through the API. Tidings runs in process on the PostgreSQL server; the receiver is a
 * separate process on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Svix } from 'svix';
import type { TestDatabase } from '../support/db.ts';
import { startInProcessWorld, type InProcessWorld } from '../support/in-process.ts';
import type { LogTap } from '../support/log-tap.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

/** The attempt deadline of this suite, in ms: what a healthy endpoint starved by a black hole waits for. */
const STARVED_MS = 3_000;

describe('endpoint health end to end', () => {
  let world: InProcessWorld;
  let database: TestDatabase;
  let receiver: TestReceiver;
  let svix: Svix;
  let logs: LogTap;
  let api: InProcessWorld['api'];
  let endpoint: InProcessWorld['endpoint'];

  before(async () => {
    world = await startInProcessWorld({
      TIDINGS_CONCURRENCY: '64',
      TIDINGS_ATTEMPT_DEADLINE: `${STARVED_MS}ms`,
      TIDINGS_HEADERS_TIMEOUT: `${STARVED_MS}ms`,
      TIDINGS_LEASE: '10s',
      TIDINGS_RETRY_SCHEDULE: '500ms,1s,2s',
      TIDINGS_BREAKER_THRESHOLD: '1000',
    });
    ({ database, receiver, svix, logs, api } = world);
    endpoint = (appId, path) => world.endpoint(appId, path);
  });
  after(async () => {
    await world?.stop();
  });

  /**
   * Publishes `count` messages one by one (each awaited: a paced trickle) and returns publish → delivered latencies
   * (ms, database clock).
   */
  async function trickle(appId: string, count: number): Promise<number[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push((await svix.message.create(appId, { eventType: 'ping', payload: { i } })).id);
    const idSet = new Set(ids);
    await logs.waitForCount(
      (l) => l.event === 'delivery.attempted' && idSet.has(String(l.messageId)) && l.next === 'succeeded',
      count,
      60_000,
      'healthy deliveries',
    );
    const rows = (
      await database.db.query<{ ms: number }>(
        `SELECT extract(epoch FROM (v.at - m.created_at)) * 1000 AS ms FROM messages m JOIN deliveries d
          ON d.message_id = m.id
       JOIN delivery_events v ON v.delivery_id = d.id AND v.state = 'succeeded' WHERE m.id = ANY ($1)`,
        [ids],
      )
    ).rows;
    return rows.map((r) => Number(r.ms)).sort((a, b) => a - b);
  }
  const p99 = (sorted: number[]): number => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;

  test(
    'a black-hole endpoint (accepts, never answers) does not push a healthy endpoint past 2× its solo p99 plus 1 ' +
      "s, nor near the black hole's deadline",
    async (t) => {
      const app = await svix.application.create({ name: 'shared' });
      const healthyApp = await svix.application.create({ name: 'healthy' });
      await endpoint(healthyApp.id, '/healthy');
      await trickle(healthyApp.id, 5); // warm-up: connections, plans, JIT
      const solo = p99(await trickle(healthyApp.id, 60));
      // The black hole is another customer's server: its own origin.
      const hole = await startTestReceiver();
      after(() => hole.stop());
      await hole.script('/blackhole', [], { stall: true });
      await svix.endpoint.create(app.id, { url: hole.url('/blackhole') });
      await Promise.all(
        Array.from({ length: 200 }, (_, i) => svix.message.create(app.id, { eventType: 'ping', payload: { i } })),
      );
      await hole.waitForCount(20, 30_000, (r) => r.path === '/blackhole');
      const shared = p99(await trickle(healthyApp.id, 60));
      // A healthy endpoint starved by the black hole waits for the black hole's 3 s attempt deadline (seen at
      // ~2 s when the window share was broken on purpose). The bound sits between the two: 2× the solo p99 plus
      // a second absorbs a shared 2-core machine whose load changes between the two trickles, and it never
      // reaches half the deadline, so starvation fails it however slow the solo run was.
      const bound = Math.min(2 * solo + 1_000, STARVED_MS / 2);
      t.diagnostic(
        `healthy p99: solo ${solo.toFixed(1)} ms, beside a black hole ${shared.toFixed(1)} ms (bound ` +
          `${bound.toFixed(1)} ms)`,
      );
      assert.ok(
        shared <= bound,
        `healthy p99 with a black hole ${shared.toFixed(1)} ms vs solo ${solo.toFixed(1)} ms (bound ` +
          `${bound.toFixed(1)} ms)`,
      );
    },
  );

  test(
    'pause holds deliveries without attempts; resume sends them; limits and breaker state are visible in the ' +
      'health read model',
    async () => {
      const app = await svix.application.create({ name: 'pausable' });
      const ep = await endpoint(app.id, '/pausable');
      assert.equal((await api('POST', `/api/v1/app/${app.id}/endpoint/${ep}/pause`)).status, 204);
      const msg = await svix.message.create(app.id, { eventType: 'ping', payload: {} });
      let health = (await (await api('GET', `/api/v1/app/${app.id}/endpoint/${ep}/health`)).json()) as {
        status: string;
        deliveries: Record<string, number>;
        history: { kind: string }[];
      };
      assert.equal(health.status, 'paused');
      assert.equal(health.deliveries.pending, 1);
      assert.equal((await receiver.requests()).filter((r) => r.path === '/pausable').length, 0);
      assert.equal((await api('POST', `/api/v1/app/${app.id}/endpoint/${ep}/resume`)).status, 204);
      await receiver.waitForCount(1, 10_000, (r) => r.path === '/pausable' && r.webhookId === msg.id);
      await logs.waitFor((l) => l.event === 'delivery.attempted' && l.messageId === msg.id, 10_000);
      const limited = (await (
        await api('PATCH', `/api/v1/app/${app.id}/endpoint/${ep}/limits`, { maxInFlight: 3, rateLimit: 20 })
      ).json()) as { limits: Record<string, unknown> };
      assert.deepEqual(limited.limits, { maxInFlight: 3, rateLimit: 20, rateBurst: null });
      health = (await (await api('GET', `/api/v1/app/${app.id}/endpoint/${ep}/health`)).json()) as typeof health;
      assert.equal(health.status, 'active');
      assert.deepEqual(
        health.history.map((h) => h.kind),
        ['resumed', 'paused'],
      );
      const full = (await (await api('GET', `/api/v1/app/${app.id}/endpoint/${ep}/health`)).json()) as {
        breaker: { state: string };
        windows: { attempts: number; successRatio: number }[];
      };
      assert.equal(full.breaker.state, 'closed');
      assert.equal(full.windows[0]!.attempts, 1);
      assert.equal(full.windows[0]!.successRatio, 1);
      assert.equal((await api('PATCH', `/api/v1/app/${app.id}/endpoint/${ep}/limits`, { maxInFlight: 0 })).status, 422);
    },
  );
});
