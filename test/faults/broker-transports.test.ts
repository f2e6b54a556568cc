/**
 * Faults of each broker transport (docs/guides/transports.md, "Faults"), the same scenarios asserted the same way for
 * RabbitMQ and NATS JetStream, each one's differences in its object of test/support/transports.ts, with real processes
 * on the machine's brokers: a dispatcher killed after the send and before the record, or after the record and before
 * the ack; the broker connection cut under load and the broker unreachable while messages are published (through a
 * TCP proxy: the machine's brokers are never restarted); a graceful stop under load; the queue or stream deleted while
 * running; the database unreachable when a message arrives (through a TCP proxy in front of PostgreSQL). Every
 * accepted message is delivered. The two brokers' stages run side by side.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { BROKER_SHARDS, type BrokerWorld } from '../support/broker-world.ts';
import { metricValue, type ApiClient } from '../support/fault-world.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import type { TidingsProcess } from '../support/tidings-process.ts';
import { BROKER_TRANSPORTS, metricsOf, publishIds, type BrokerUnderTest } from '../support/transports.ts';

describe('broker transport faults', { concurrency: BROKER_TRANSPORTS.length }, () => {
  for (const transport of BROKER_TRANSPORTS) faultsOf(transport);
});

/** The dispatcher's line when its broker connection is lost. */
const lostLine = (l: Readonly<Record<string, unknown>>): boolean =>
  typeof l.msg === 'string' && l.msg.startsWith('broker connection lost');

/** The count of a labelled metric line (`line`'s first group) in a metrics text. */
const labelled = (text: string, line: RegExp): number => Number(line.exec(text)?.[1] ?? 0);
const NOT_DUE = /^tidings_broker_acknowledged_total\{how="not_due"\} (\d+)/m;

function faultsOf(t: BrokerUnderTest): void {
  describe(`${t.title} transport faults`, { concurrency: 1 }, () => {
    let world: BrokerWorld;
    let api: ApiClient;
    const running: TidingsProcess[] = [];
    const proxies: TcpProxy[] = [];

    before(async () => {
      world = await t.world();
      api = await world.startApi();
    });
    afterEach(async () => {
      for (const p of running.splice(0)) await p.kill().catch(() => undefined);
      for (const p of proxies.splice(0)) await p.close();
    });
    after(async () => {
      await world?.close();
    });

    const dispatcher = async (name: string, extra: Record<string, string> = {}): Promise<TidingsProcess> => {
      const p = await world.startDispatcher(`${t.name}-${name}`, extra);
      running.push(p);
      return p;
    };
    const proxy = async (target: { host: string; port: number }): Promise<TcpProxy> => {
      const p = await startTcpProxy(target);
      proxies.push(p);
      return p;
    };
    const deliveryOf = (appId: string) =>
      world.query<{ id: string; state: string; attempt_count: number; broker_published_at: Date | null }>(
        'SELECT id, state, attempt_count, broker_published_at FROM deliveries WHERE app_id = $1 ORDER BY id',
        [appId],
      );
    const allSucceeded = (appId: string, count: number, timeoutMs = 30_000) =>
      world.waitForRows<{ n: number }>(
        `SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1 AND state = 'succeeded'`,
        [appId],
        (rows) => rows[0]?.n === count,
        timeoutMs,
        `${count} deliveries succeeded`,
      );
    /** Waits until `read` of the dispatcher's metrics text reaches `atLeast`. */
    const metricReaches = async (p: TidingsProcess, read: (text: string) => number, atLeast: number, what: string) => {
      const until = Date.now() + 20_000;
      while (read(await metricsOf(p)) < atLeast) {
        assert.ok(Date.now() < until, what);
        await p.waitForLog(() => false, 100).catch(() => undefined);
      }
    };

    test('killed after the send and before the record: the lease expires, the id is sent again, counted', async () => {
      const { appId, endpoints } = await world.setupApp(api, 1, 'after-send');
      // A 12 s lease, longer than a dispatcher's start on a busy machine: the dead dispatcher's message reaches the
      // heir (at once, or after the ack wait) while the lease lives and is acknowledged as not due; the id comes back
      // through the outbox once the lease expired.
      const lease = { TIDINGS_LEASE: '12s' };
      const doomed = await dispatcher('after-send-x', { ...lease, TIDINGS_TEST_FAULT_POINTS: 'after_send:exit' });
      const { id } = await api.publish(appId, { n: 1 });
      await doomed.waitForExit(20_000);
      const heir = await dispatcher('after-send-y', lease);
      const got = await world.receiver.waitForCount(2, 30_000, (r) => r.path === endpoints[0]!.path);
      assert.ok(
        labelled(await metricsOf(heir), NOT_DUE) >= 1,
        'the redelivered message found the lease alive: the outbox published the id again when it expired',
      );
      assert.deepEqual(
        got.map((r) => r.webhookId),
        [id, id],
        'sent again after the lease expired',
      );
      await allSucceeded(appId, 1);
      const events = await world.query<{ reason: string; dispatcher_id: string }>(
        `SELECT e.reason, e.dispatcher_id FROM delivery_events e JOIN deliveries d ON d.id = e.delivery_id
         WHERE d.app_id = $1 AND e.state = 'leased' ORDER BY e.id`,
        [appId],
      );
      assert.deepEqual(
        events.map((e) => `${e.reason} ${e.dispatcher_id}`),
        [`claimed ${t.name}-after-send-x`, `reclaimed ${t.name}-after-send-y`],
      );
      assert.equal(await world.metric(heir, 'tidings_deliveries_reclaimed_total'), 1, 'counted');
    });

    test('killed after the record, before the ack: redelivered, the claim takes nothing, no second send', async () => {
      const { appId, endpoints } = await world.setupApp(api, 1, 'after-record');
      const doomed = await dispatcher('after-record-x', { TIDINGS_TEST_FAULT_POINTS: 'after_record:exit' });
      await api.publish(appId, { n: 1 });
      await doomed.waitForExit(20_000);
      assert.deepEqual(
        (await deliveryOf(appId)).map((d) => d.state),
        ['succeeded'],
        'the record committed',
      );
      const heir = await dispatcher('after-record-y');
      // The dead connection's message comes back, redelivered, and is acknowledged as not due.
      await metricReaches(heir, (text) => labelled(text, NOT_DUE), 1, 'the redelivered message was not acknowledged');
      assert.ok(t.receivedAgain(await metricsOf(heir)) >= 1, 'received again');
      const got = await world.receiver.requests();
      assert.equal(got.filter((r) => r.path === endpoints[0]!.path).length, 1, 'one request only');
      assert.equal((await deliveryOf(appId))[0]?.attempt_count, 1);
    });

    test('the connection cut under load: dispatchers reconnect, all delivered, one log line per change', async () => {
      const tcp = await proxy(t.address());
      const url = t.through(tcp.port);
      const a = await dispatcher('cut-a', url);
      const b = await dispatcher('cut-b', url);
      await Promise.all([a.waitForLog('broker connected', 20_000), b.waitForLog('broker connected', 20_000)]);
      const { appId, endpoints } = await world.setupApp(api, 2, 'cut');
      for (const e of endpoints) await world.receiver.script(e.path, [], { delayMs: 20 });
      const publishes: Promise<unknown>[] = [];
      for (let i = 0; i < 40; i++) {
        publishes.push(api.publish(appId, { n: i }));
        if (i === 15) {
          await world.receiver.waitForCount(4, 20_000, (r) => r.path.startsWith('/cut-'));
          tcp.setMode('cut');
        }
      }
      await Promise.all(publishes);
      await Promise.all([a.waitForLog(lostLine, 20_000), b.waitForLog(lostLine, 20_000)]);
      tcp.setMode('pass');
      await allSucceeded(appId, 80, 60_000);
      for (const p of [a, b]) {
        assert.equal(p.logs(lostLine).length, 1, `${p.name}: one line for the loss, not one per attempt`);
        assert.ok(p.logs('broker connected').length >= 2, `${p.name}: connected again`);
      }
      const got = await world.receiver.requests();
      const pairs = new Set(got.filter((r) => r.path.startsWith('/cut-')).map((r) => `${r.webhookId} ${r.path}`));
      assert.equal(pairs.size, 80, 'every message to every endpoint');
    });

    test('the broker unreachable during publishes: they wait in PostgreSQL, then flow, no log storm', async () => {
      const tcp = await proxy(t.address());
      const a = await dispatcher('down-a', t.through(tcp.port));
      await a.waitForLog('broker connected', 20_000);
      tcp.setMode('cut');
      await a.waitForLog(lostLine, 20_000);
      const { appId } = await world.setupApp(api, 1, 'down');
      for (let i = 0; i < 10; i++) await api.publish(appId, { n: i });
      const ready = await fetch(`${a.adminUrl}/readyz`);
      assert.equal(ready.status, 503, 'not ready without its broker');
      assert.deepEqual(await ready.json(), {
        code: 'service_unavailable',
        detail: `The broker (${t.name}) is disconnected`,
        status: 'not_ready',
        transport: t.name,
        broker: 'disconnected',
      });
      // A few publish intervals and reconnect attempts pass (the reconnect back-off is 100–500 ms).
      await a.waitForLog(() => false, 1_500).catch(() => undefined);
      const waiting = await world.query<{ n: number; stamped: number }>(
        'SELECT count(*)::int AS n, count(broker_published_at)::int AS stamped FROM deliveries WHERE app_id = $1 ' +
          `AND state = 'pending'`,
        [appId],
      );
      assert.deepEqual(waiting[0], { n: 10, stamped: 0 }, 'every delivery waits in PostgreSQL, unpublished');
      tcp.setMode('pass');
      await allSucceeded(appId, 10, 30_000);
      assert.equal(a.logs(lostLine).length, 1, 'one line for the loss');
      const warnings = a.logs((l) =>
        typeof l.level === 'number' ? l.level >= 40 : l.level === 'warn' || l.level === 'error',
      );
      assert.ok(warnings.length <= 3, `no storm of warnings: ${warnings.map((l) => String(l.msg)).join(' | ')}`);
    });

    test('a graceful stop under load: finished, released or given back; all delivered, none swept', async () => {
      // A window of 2: most of the messages a receives wait in it for room, and must go back to the broker at its stop.
      const a = await dispatcher('graceful-a', { TIDINGS_CONCURRENCY: '2' });
      const b = await dispatcher('graceful-b');
      const { appId, endpoints } = await world.setupApp(api, 2, 'graceful');
      for (const e of endpoints) await world.receiver.script(e.path, [], { delayMs: 100 });
      for (let i = 0; i < 20; i++) await api.publish(appId, { n: i });
      await world.receiver.waitForCount(6, 20_000, (r) => r.path.startsWith('/graceful-'));
      const exit = await a.stop();
      assert.equal(exit.code, 0, 'a clean exit');
      assert.ok(a.logs((l) => l.msg === 'broker stopped').length === 1, 'the broker connection closed last');
      await allSucceeded(appId, 40, 30_000);
      // Nothing was left for the sweep: every message a held was recorded, released (due at once, published again) or
      // given back to the broker.
      assert.equal(await world.metric(b, 'tidings_broker_swept_total'), 0);
      const got = await world.receiver.requests();
      const pairs = got.filter((r) => r.path.startsWith('/graceful-')).map((r) => `${r.webhookId} ${r.path}`);
      assert.equal(new Set(pairs).size, 40);
    });

    test(`${t.work} deleted while running: declared again (counted), the lost ids swept, all delivered`, async () => {
      const a = await dispatcher('deleted-a', {
        TIDINGS_BROKER_MAX_IN_FLIGHT: String(BROKER_SHARDS),
        TIDINGS_CONCURRENCY: '4',
        TIDINGS_BROKER_ENDPOINT_AHEAD: '20',
      });
      await a.waitForLog('broker connected', 20_000);
      const { appId, endpoints } = await world.setupApp(api, 1, 'deleted');
      await world.receiver.script(endpoints[0]!.path, [{ delayMs: 1_000 }]);
      for (let i = 0; i < 6; i++) await api.publish(appId, { n: i });
      // One in flight (the shard's part of the bound is 1), five waiting in the broker; then they are deleted with it.
      await world.receiver.waitForCount(1, 20_000, (r) => r.path === endpoints[0]!.path);
      await t.deleteWork(world, endpoints[0]!.id);
      await allSucceeded(appId, 6, 30_000);
      assert.ok((await world.metric(a, 'tidings_broker_topology_restored_total')) >= 1, `${t.work} declared again`);
      assert.ok((await world.metric(a, 'tidings_broker_swept_total')) >= 1, 'the sweep published the lost ids again');
      const got = await world.receiver.requests();
      assert.equal(new Set(got.filter((r) => r.path === endpoints[0]!.path).map((r) => r.webhookId)).size, 6);
    });

    test('the database unreachable at the claim: the message is kept, then the delivery is made once', async () => {
      // The dispatcher reaches PostgreSQL through a proxy; the API and the test do not.
      const db = await proxy({ host: '127.0.0.1', port: Number(new URL(world.database.url!).port || 5432) });
      const url = new URL(world.database.url!);
      url.port = String(db.port);
      // No sweep within the test: the delivery can only come from the message the test publishes.
      const a = await dispatcher('db-down-a', { DATABASE_URL: url.toString(), TIDINGS_BROKER_SWEEP_AFTER: '10m' });
      await a.waitForLog('broker connected', 20_000);
      const { appId, endpoints } = await world.setupApp(api, 1, 'db-down');
      db.setMode('cut');
      await api.publish(appId, { n: 1 });
      const [row] = await deliveryOf(appId);
      assert.equal(row?.broker_published_at, null, 'the dispatcher could not stamp it');
      // Stamped and published as another dispatcher's outbox would: the dispatcher receives it and cannot claim it.
      await world.query('UPDATE deliveries SET broker_published_at = clock_timestamp() WHERE id = $1', [row!.id]);
      await publishIds(world, [{ deliveryId: row!.id, endpointId: endpoints[0]!.id }]);
      const received = (text: string): number => metricValue(text, 'tidings_broker_received_total');
      await metricReaches(a, received, 1, 'the message was not received');
      // Several claim attempts fail meanwhile (the poll interval is 250 ms).
      await a.waitForLog(() => false, 2_000).catch(() => undefined);
      const during = await metricsOf(a);
      assert.equal(labelled(during, /^tidings_broker_dead_lettered_total\S* (\d+)/m), 0, 'not dead-lettered');
      assert.equal((await world.receiver.requests()).filter((r) => r.path === endpoints[0]!.path).length, 0);
      db.setMode('pass');
      await allSucceeded(appId, 1, 30_000);
      const got = await world.receiver.requests();
      assert.equal(got.filter((r) => r.path === endpoints[0]!.path).length, 1, 'one request');
      const end = await metricsOf(a);
      assert.equal(metricValue(end, 'tidings_broker_dead_lettered_total'), 0, 'the message was kept');
      assert.equal(metricValue(end, 'tidings_broker_published_total'), 0, 'the kept message made the delivery');
      assert.equal(labelled(end, /^tidings_broker_acknowledged_total\{how="recorded"\} (\d+)/m), 1, 'acknowledged');
    });
  });
}
