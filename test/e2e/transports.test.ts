/**
 * End to end through each transport (TIDINGS_TRANSPORT=postgres, rabbitmq, nats: docs/guides/transports.md), the same
 * scenarios asserted the same way, each transport's differences in its object of test/support/transports.ts: an API
 * process and two dispatcher processes on the machine's PostgreSQL (and RabbitMQ or NATS server), a real receiver. A
 * publish fans out, once per endpoint (through the broker and its outbox where there is one); retries come on their
 * schedule (rows not yet due, published when due); a delivery whose attempts all fail becomes a dead letter, and a
 * replay delivers it; an in-flight cap holds across both dispatchers; a black-hole endpoint with a backlog does not
 * delay another endpoint; /readyz and /metrics report the transport.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { encodeSecret } from '../../src/domain/signing.ts';
import { shardOf } from '../../src/ports/broker.ts';
import { BROKER_SHARDS, type BrokerWorld } from '../support/broker-world.ts';
import type { ApiClient } from '../support/fault-world.ts';
import type { TidingsProcess } from '../support/tidings-process.ts';
import { TRANSPORTS, type TransportUnderTest } from '../support/transports.ts';

describe('delivery through each transport', { concurrency: TRANSPORTS.length }, () => {
  for (const transport of TRANSPORTS) deliveryThrough(transport);
});

function deliveryThrough(t: TransportUnderTest): void {
  describe(`delivery through ${t.title}`, { concurrency: 1 }, () => {
    let world: BrokerWorld;
    let api: ApiClient;
    let dispatchers: TidingsProcess[];

    before(async () => {
      // A black hole's requests are held for 8 s (not 2 s), so that an endpoint stuck behind one would show it; three
      // attempts (two retries), so that a failing delivery soon becomes a dead letter.
      world = await t.world({
        TIDINGS_ATTEMPT_DEADLINE: '8s',
        TIDINGS_HEADERS_TIMEOUT: '8s',
        TIDINGS_BODY_TIMEOUT: '8s',
        TIDINGS_LEASE: '9s',
        TIDINGS_RETRY_SCHEDULE: '100ms,200ms',
      });
      // The three processes start side by side.
      const started = await Promise.all([
        world.startApi(),
        world.startDispatcher(`${t.name}-a`),
        world.startDispatcher(`${t.name}-b`),
      ]);
      api = started[0];
      dispatchers = [started[1], started[2]];
    });
    after(async () => {
      await world?.close();
    });

    test('a published message fans out, delivered once per endpoint, and its message acknowledged', async () => {
      const { appId, endpoints } = await world.setupApp(api, 2, 'plain');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await api.publish(appId, { n: i })).id!);
      const got = await world.receiver.waitForCount(10, 20_000, (r) => r.path.startsWith('/plain-'));
      assert.ok(got.every((r) => r.signatureValid === true));
      const pairs = new Set(got.map((r) => `${r.webhookId} ${r.path}`));
      assert.equal(pairs.size, 10, 'each message once per endpoint');
      await world.waitForRows<{ n: number }>(
        `SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1 AND state = 'succeeded' AND ` +
          '(broker_published_at IS NOT NULL) = $2',
        [appId, t.outbox],
        (rows) => rows[0]?.n === 10,
        10_000,
        t.outbox ? 'every delivery recorded, each published through the outbox' : 'every delivery recorded, no stamp',
      );
      assert.equal(endpoints.length, 2);
      if (!t.outbox) return;
      let published = 0;
      let acked = 0;
      for (const d of dispatchers) {
        published += await world.metric(d, 'tidings_broker_published_total');
        acked += await world.metric(d, 'tidings_broker_acknowledged_total');
      }
      assert.ok(published >= 10, `published ${published}`);
      assert.ok(acked >= 10, `acknowledged ${acked}`);
    });

    test('retries come on their schedule: a retry is taken (published) when it is due', async () => {
      const { appId, endpoints } = await world.setupApp(api, 1, 'retry');
      await world.receiver.script(endpoints[0]!.path, [{ status: 500 }, { status: 503 }]);
      await api.publish(appId, { retry: true });
      const got = await world.receiver.waitForCount(3, 20_000, (r) => r.path === endpoints[0]!.path);
      assert.equal(new Set(got.map((r) => r.webhookId)).size, 1);
      const attempts = await world.waitForRows<{ attempt_number: number; created_at: Date }>(
        `SELECT a.attempt_number, a.created_at FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
         WHERE d.app_id = $1 ORDER BY a.attempt_number`,
        [appId],
        (rows) => rows.length === 3,
        10_000,
        'three attempts recorded',
      );
      assert.deepEqual(
        attempts.map((a) => a.attempt_number),
        [1, 2, 3],
      );
      // 100 ms, then 200 ms, with 20 % jitter.
      assert.ok(attempts[1]!.created_at.getTime() - attempts[0]!.created_at.getTime() >= 80, 'the first retry waited');
      assert.ok(
        attempts[2]!.created_at.getTime() - attempts[1]!.created_at.getTime() >= 160,
        'the second retry waited',
      );
    });

    test('a delivery whose every attempt fails becomes a dead letter; replayed, it is delivered', async () => {
      const { appId, endpoints } = await world.setupApp(api, 1, 'dead');
      const path = endpoints[0]!.path;
      await world.receiver.script(path, [{ status: 500 }, { status: 500 }, { status: 500 }]);
      const { id } = await api.publish(appId, { dead: true });
      const dead = await world.waitForRows<{ state: string; attempt_count: number }>(
        'SELECT state, attempt_count FROM deliveries WHERE app_id = $1',
        [appId],
        (rows) => rows[0]?.state === 'dead',
        20_000,
        'a dead letter',
      );
      assert.equal(dead[0]!.attempt_count, 3, 'dead after its three attempts');
      const since = new Date(Date.now() - 3_600_000).toISOString();
      const replay = await api.request('POST', `/api/v1/app/${appId}/endpoint/${endpoints[0]!.id}/recover`, { since });
      assert.equal(replay.status, 202, JSON.stringify(replay.json));
      await world.waitForRows<{ n: number }>(
        `SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1 AND state = 'succeeded'`,
        [appId],
        (rows) => rows[0]?.n === 1,
        20_000,
        'the replayed delivery succeeded',
      );
      const got = (await world.receiver.requests()).filter((r) => r.path === path);
      assert.deepEqual(
        got.map((r) => r.webhookId),
        [id, id, id, id],
        'three failed attempts, then the replay, of the same message',
      );
      const stamped = await world.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1 AND broker_published_at IS NOT NULL',
        [appId],
      );
      assert.equal(stamped[0]!.n, t.outbox ? 1 : 0, t.outbox ? 'the replay went through the outbox' : 'no stamp');
    });

    test('an in-flight cap holds across both dispatchers', async () => {
      const { appId, endpoints } = await world.setupApp(api, 1, 'capped');
      await world.query('UPDATE endpoints SET max_in_flight = 2 WHERE id = $1', [endpoints[0]!.id]);
      await world.receiver.script(endpoints[0]!.path, [], { delayMs: 300 });
      for (let i = 0; i < 8; i++) await api.publish(appId, { n: i });
      const got = await world.receiver.waitForCount(8, 30_000, (r) => r.path === endpoints[0]!.path);
      // At most two requests open at once: each arrival is at least 300 ms after the one two before it.
      const at = got.map((r) => r.receivedAtMs).sort((a, b) => a - b);
      for (let i = 2; i < at.length; i++)
        assert.ok(at[i]! - at[i - 2]! >= 250, `three requests open at once near ${i}`);
    });

    test('a black-hole endpoint with a backlog does not delay another endpoint, even one of its shard', async () => {
      const hole = await world.setupApp(api, 1, 'hole');
      // Healthy endpoints until one shares the black hole's shard (a quarter of them, by the endpoint hash).
      const healthy = await world.setupApp(api, 4, 'healthy');
      const shard = shardOf(hole.endpoints[0]!.id, BROKER_SHARDS);
      for (let i = 0; !healthy.endpoints.some((e) => shardOf(e.id, BROKER_SHARDS) === shard) && i < 40; i++) {
        const path = `/healthy-more-${i}`;
        const secret = encodeSecret(randomBytes(24));
        await world.receiver.setSecret(path, secret);
        healthy.endpoints.push({ id: await api.createEndpoint(healthy.appId, world.receiver.url(path), secret), path });
      }
      const sameShard = healthy.endpoints.find((e) => shardOf(e.id, BROKER_SHARDS) === shard)!;
      await world.receiver.script(hole.endpoints[0]!.path, [], { stall: true });
      for (let i = 0; i < 40; i++) await api.publish(hole.appId, { n: i });
      // Wait until the black hole holds a dispatcher's whole share of the window (16 of 32) in flight.
      await world.receiver.waitForCount(16, 10_000, (r) => r.path === hole.endpoints[0]!.path);
      const sentAt = new Map<string, number>();
      for (let i = 0; i < 5; i++) {
        const at = Date.now();
        sentAt.set((await api.publish(healthy.appId, { n: i })).id!, at);
      }
      const got = await world.receiver.waitForCount(5, 10_000, (r) => r.path === sameShard.path);
      const worst = Math.max(...got.map((r) => r.receivedAtMs - sentAt.get(r.webhookId!)!));
      assert.ok(worst < 3_000, `the endpoint in the black hole's shard waited ${worst} ms behind it`);
    });

    test('/readyz of a dispatcher reports the transport; a broker shows its depth and state in metrics', async () => {
      const res = await fetch(`${dispatchers[0]!.adminUrl}/readyz`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), t.ready);
      const text = await (await fetch(`${dispatchers[0]!.adminUrl}/metrics`)).text();
      if (!t.outbox) {
        assert.doesNotMatch(text, /^tidings_broker_up /m, 'no broker, no broker metrics');
        return;
      }
      assert.equal(await world.metric(dispatchers[0]!, 'tidings_broker_up'), 1);
      assert.match(text, /^tidings_broker_depth\{queue="deliveries"\} \d+$/m);
    });
  });
}
