/**
 * The NATS transport under faults, on the machine's NATS server (never restarted: the faults go through a TCP proxy,
 * or delete a stream by hand). Each test uses a prefix of its own and deletes its streams at the end.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createNatsTransport, type NatsTransportOptions } from '../../src/adapters/nats/nats-transport.ts';
import type { BrokerStateChange, BrokerTransport } from '../../src/ports/broker.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import {
  deleteNatsTopology,
  deleteStream,
  NATS_URL,
  natsAddress,
  natsStreams,
  natsTestPrefix,
  proxiedNatsUrl,
  withJsm,
} from '../support/nats.ts';
import { contractOptions, Inbox, stateReached } from './broker-contract.ts';

describe('the NATS transport under faults', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  function make(prefix: string, url: string, overrides: Partial<NatsTransportOptions> = {}): BrokerTransport {
    const t = createNatsTransport({
      ...contractOptions(prefix),
      url,
      clientName: 'tidings-nats-faults',
      ackWaitMs: 30_000,
      maxAckPending: 1000,
      duplicateWindowMs: 120_000,
      pingIntervalMs: 10_000,
      ...overrides,
    });
    cleanups.push(() => t.stop());
    return t;
  }
  function fresh(): string {
    const prefix = natsTestPrefix();
    cleanups.push(() => deleteNatsTopology(prefix));
    return prefix;
  }
  async function proxy(): Promise<TcpProxy> {
    const p = await startTcpProxy(natsAddress());
    cleanups.push(() => p.close());
    return p;
  }
  const items = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ deliveryId: String(from + i), endpointId: `ep_${(from + i) % 5}` }));

  test('the connection cut under load: one change of state each way, every confirmed id consumed', async () => {
    const p = await proxy();
    // A short ack_wait: messages the server sent as the connection was cut, and acks lost with it, come back soon.
    const t = make(fresh(), proxiedNatsUrl(p.port), { reconnectMinMs: 20, reconnectMaxMs: 100, ackWaitMs: 2_000 });
    await t.start({ waitForBroker: false });
    const changes: BrokerStateChange[] = [];
    t.onStateChange((c) => changes.push(c));
    const inbox = new Inbox();
    t.consume({
      maxInFlight: 50,
      onMessage: (m) => {
        inbox.onMessage(m);
        m.ack();
      },
    });
    const confirmed = new Set<string>();
    const failedWhileCut: string[] = [];
    let next = 1;
    for (let round = 0; round < 40; round += 1) {
      if (round === 10) p.setMode('cut');
      if (round === 30) p.setMode('pass');
      if (round === 30) await stateReached(t, 'connected');
      const outcome = await t.publish(items(next, 25));
      next += 25;
      for (const id of outcome.confirmed) confirmed.add(id);
      if (p.mode === 'cut') failedWhileCut.push(...outcome.failed);
      if (round === 10) await stateReached(t, 'disconnected');
      if (round >= 10 && round < 30) assert.deepEqual(outcome.confirmed, [], 'nothing confirmed while cut');
    }
    assert.ok(failedWhileCut.length >= 25 * 19, 'every publish while cut reports its ids failed');
    assert.ok(p.accepted >= 4, `the client tried again and again while cut (${p.accepted} connections)`);
    assert.deepEqual(
      changes.map((c) => c.state),
      ['disconnected', 'connected'],
      'one change each way',
    );
    const received = (): Set<string> => new Set(inbox.messages.map((m) => m.deliveryId));
    await inbox.until(() => [...confirmed].every((id) => received().has(id)), 'every confirmed id', 20_000);
    assert.ok(confirmed.size >= 25 * 20, `ids confirmed before and after the cut (${confirmed.size})`);
  });

  test('the stream deleted while running: publishes fail, it is declared again and said so, ids flow', async () => {
    const prefix = fresh();
    const restored: string[] = [];
    const t = make(prefix, NATS_URL, { onTopologyRestored: (reason) => restored.push(reason) });
    await t.start({ waitForBroker: false });
    const inbox = new Inbox();
    t.consume({
      maxInFlight: 10,
      onMessage: (m) => {
        inbox.onMessage(m);
        m.ack();
      },
    });
    assert.deepEqual((await t.publish(items(1, 3))).failed, []);
    await inbox.until(() => inbox.messages.length === 3, 'three messages');
    assert.equal(await deleteStream(natsStreams(prefix).stream), true);
    const first = await t.publish(items(100, 3));
    assert.deepEqual(first.failed, ['100', '101', '102'], 'no stream to take them: reported failed, not lost');
    assert.ok(restored.length >= 1, 'the restore was reported');
    const again = await t.publish(items(100, 3));
    assert.deepEqual(again.failed, [], 'published again (as the outbox does) once the stream is back');
    await inbox.until(() => inbox.messages.some((m) => m.deliveryId === '100'), 'a message after the restore');
    await withJsm(async (jsm) => {
      const info = await jsm.streams.info(natsStreams(prefix).stream);
      assert.equal(info.config.retention, 'workqueue');
    });
  });

  test('a held message is kept in progress past ack_wait; once its holder is gone it is redelivered', async () => {
    const prefix = fresh();
    const p = await proxy();
    const slowReconnect = { ackWaitMs: 1000, reconnectMinMs: 5_000, reconnectMaxMs: 5_000 };
    const holder = make(prefix, proxiedNatsUrl(p.port), slowReconnect);
    const other = make(prefix, NATS_URL, { ackWaitMs: 1000 });
    await holder.start({ waitForBroker: false });
    await other.start({ waitForBroker: false });
    const held = new Inbox();
    holder.consume({ maxInFlight: 1, onMessage: held.onMessage });
    await other.publish(items(1, 1));
    await held.until(() => held.messages.length === 1, 'the message');
    const second = new Inbox();
    other.consume({ maxInFlight: 1, onMessage: second.onMessage });
    // Three ack_waits pass while the holder holds it: the in-progress marks keep it from being redelivered.
    const heldFor = Date.now();
    await new Promise<void>((resolve) => {
      setTimeout(resolve, 3_000);
    });
    assert.equal(second.messages.length, 0, `not redelivered while held (${Date.now() - heldFor} ms)`);
    assert.equal(held.messages.length, 1);
    // The holder's connection is cut and it does not come back soon: the server redelivers after ack_wait.
    p.setMode('cut');
    await second.until(() => second.messages.length === 1, 'the redelivery to the other dispatcher', 10_000);
    assert.equal(second.messages[0]?.redelivered, true);
    second.messages[0]?.ack();
  });
});
