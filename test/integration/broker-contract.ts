/**
 * The contract every broker transport keeps (src/ports/broker.ts), as a suite a test file runs for one adapter:
 * `brokerContract('rabbitmq', { make, cleanup })`. Each test starts transports with a fresh prefix and short settings
 * and waits on events (messages arriving, dead letters, changes of state), never on sleeps. The work-source contract
 * (work-source-contract.ts) runs the whole transport, outbox and fenced claim included, over PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type {
  BrokerDeadLetter,
  BrokerMessage,
  BrokerOptions,
  BrokerStateChange,
  BrokerTransport,
} from '../../src/ports/broker.ts';
import { deferred } from '../support/deferred.ts';

/** How a test file gives the suite its adapter. */
export interface BrokerUnderTest {
  /** A transport with these settings (not started). */
  make(options: BrokerOptions): BrokerTransport;
  /** Deletes what transports with `prefix` declared. */
  cleanup(prefix: string, shards: number): Promise<void>;
  /** A prefix no other run uses. */
  prefix(): string;
}

/** Settings of the suite: short, so that each test takes well under a second on a quiet broker. */
export function contractOptions(prefix: string, overrides: Partial<BrokerOptions> = {}): BrokerOptions {
  return {
    prefix,
    shards: 2,
    deliveryLimit: 3,
    reconnectMinMs: 50,
    reconnectMaxMs: 500,
    publishTimeoutMs: 5_000,
    ...overrides,
  };
}

/** Messages and dead letters a consumer received, with waits for counts. */
export class Inbox {
  readonly messages: BrokerMessage[] = [];
  readonly dead: BrokerDeadLetter[] = [];
  #waits: { check: () => boolean; resolve: () => void }[] = [];

  readonly onMessage = (m: BrokerMessage): void => {
    this.messages.push(m);
    this.#poke();
  };
  readonly onDeadLetter = (d: BrokerDeadLetter): void => {
    this.dead.push(d);
    this.#poke();
  };

  /** Resolves once `check` holds; fails after `ms`. */
  async until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
    if (check()) return;
    const done = deferred();
    const wait = { check, resolve: () => done.resolve() };
    this.#waits.push(wait);
    const timer = setTimeout(() => done.reject(new Error(`timed out waiting for ${what}`)), ms);
    try {
      await done.promise;
    } finally {
      clearTimeout(timer);
      this.#waits = this.#waits.filter((w) => w !== wait);
    }
  }

  #poke(): void {
    for (const w of this.#waits) if (w.check()) w.resolve();
  }
}

/** Resolves at the first change of `transport` to `state`. */
export function stateReached(
  transport: BrokerTransport,
  state: BrokerStateChange['state'],
  ms = 10_000,
): Promise<void> {
  if (transport.state() === state) return Promise.resolve();
  const done = deferred();
  const off = transport.onStateChange((c) => {
    if (c.state === state) done.resolve();
  });
  const timer = setTimeout(() => done.reject(new Error(`${transport.name} did not become ${state}`)), ms);
  return done.promise.finally(() => {
    off();
    clearTimeout(timer);
  });
}

export function brokerContract(name: string, under: BrokerUnderTest): void {
  describe(`broker contract: ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const c of cleanups.reverse()) await c();
    });

    /** Started transports with one fresh prefix, stopped and cleaned up after the file. */
    async function world(overrides: Partial<BrokerOptions> = {}, count = 1): Promise<BrokerTransport[]> {
      const prefix = under.prefix();
      const options = contractOptions(prefix, overrides);
      const transports = Array.from({ length: count }, () => under.make(options));
      cleanups.push(async () => {
        for (const t of transports) await t.stop();
        await under.cleanup(prefix, options.shards);
      });
      for (const t of transports) await t.start({ waitForBroker: false });
      return transports;
    }

    const items = (n: number, endpointId = 'ep_a', from = 1) =>
      Array.from({ length: n }, (_, i) => ({ deliveryId: String(from + i), endpointId }));

    test('start declares the topology idempotently: a second transport on the same names starts too', async () => {
      const [a, b] = await world({}, 2);
      assert.equal(a?.state(), 'connected');
      assert.equal(b?.state(), 'connected');
    });

    test('a confirmed id is consumed once, with its endpoint, and gone once acknowledged', async () => {
      const [t] = await world();
      const inbox = new Inbox();
      t!.consume({ maxInFlight: 10, onMessage: inbox.onMessage });
      const outcome = await t!.publish([...items(3, 'ep_a'), ...items(2, 'ep_b', 10)]);
      assert.deepEqual([...outcome.confirmed].sort(), ['1', '10', '11', '2', '3']);
      assert.deepEqual(outcome.failed, []);
      await inbox.until(() => inbox.messages.length === 5, '5 messages');
      assert.deepEqual(inbox.messages.map((m) => `${m.deliveryId}@${m.endpointId}`).sort(), [
        '10@ep_b',
        '11@ep_b',
        '1@ep_a',
        '2@ep_a',
        '3@ep_a',
      ]);
      assert.ok(inbox.messages.every((m) => !m.redelivered && m.deliveryCount === 1));
      for (const m of inbox.messages) m.ack();
      const depth = await t!.depth();
      assert.equal(depth?.waiting, 0);
    });

    test('a nacked message is delivered again, marked redelivered, its count raised', async () => {
      const [t] = await world();
      const inbox = new Inbox();
      t!.consume({ maxInFlight: 4, onMessage: inbox.onMessage });
      await t!.publish(items(1));
      await inbox.until(() => inbox.messages.length === 1, 'the message');
      inbox.messages[0]!.nack();
      await inbox.until(() => inbox.messages.length === 2, 'the redelivery');
      const again = inbox.messages[1]!;
      assert.equal(again.deliveryId, '1');
      assert.equal(again.redelivered, true);
      assert.ok(again.deliveryCount === null || again.deliveryCount === 2, `count ${again.deliveryCount}`);
      again.ack();
    });

    test('a message delivered deliveryLimit times without an ack is dead-lettered and reported once', async () => {
      const [t] = await world({ deliveryLimit: 3 });
      const inbox = new Inbox();
      t!.consume({
        maxInFlight: 4,
        onMessage: (m) => {
          inbox.onMessage(m);
          m.nack();
        },
        onDeadLetter: inbox.onDeadLetter,
      });
      await t!.publish(items(1, 'ep_poison', 7));
      await inbox.until(() => inbox.dead.length === 1, 'the dead letter');
      assert.equal(inbox.messages.length, 3, 'delivered exactly deliveryLimit times');
      assert.deepEqual(inbox.dead[0], { deliveryId: '7', endpointId: 'ep_poison', reason: 'delivery_limit' });
    });

    test('term dead-letters at once', async () => {
      const [t] = await world();
      const inbox = new Inbox();
      t!.consume({
        maxInFlight: 4,
        onMessage: (m) => {
          inbox.onMessage(m);
          m.term('test');
        },
        onDeadLetter: inbox.onDeadLetter,
      });
      await t!.publish(items(1, 'ep_a', 9));
      await inbox.until(() => inbox.dead.length === 1, 'the dead letter');
      assert.equal(inbox.messages.length, 1);
      assert.equal(inbox.dead[0]?.reason, 'terminated');
    });

    test('no more than maxInFlight messages are handed out unsettled', async () => {
      const [t] = await world({ shards: 1 });
      const inbox = new Inbox();
      t!.consume({ maxInFlight: 2, onMessage: inbox.onMessage });
      await t!.publish(items(6));
      await inbox.until(() => inbox.messages.length === 2, 'two messages');
      const depth = await t!.depth();
      assert.equal(depth?.waiting, 4, 'the rest wait in the broker');
      assert.equal(inbox.messages.length, 2);
      inbox.messages[0]!.ack();
      await inbox.until(() => inbox.messages.length === 3, 'a third once one settled');
      for (const m of inbox.messages) m.ack();
    });

    test('stop gives back what was handed out and not settled: another consumer gets it, redelivered', async () => {
      const [a, b] = await world({}, 2);
      const first = new Inbox();
      a!.consume({ maxInFlight: 4, onMessage: first.onMessage });
      await a!.publish(items(2));
      await first.until(() => first.messages.length === 2, 'two messages');
      first.messages[0]!.ack();
      await a!.stop();
      assert.equal(a!.state(), 'stopped');
      const second = new Inbox();
      b!.consume({ maxInFlight: 4, onMessage: second.onMessage });
      await second.until(() => second.messages.length === 1, 'the unsettled one');
      assert.equal(second.messages[0]?.deliveryId, first.messages[1]?.deliveryId);
      assert.equal(second.messages[0]?.redelivered, true);
      second.messages[0]!.ack();
    });

    test(
      'a publish before the connection is up reports every id ' + 'failed, at once, and the state changes once',
      async () => {
        const prefix = under.prefix();
        const t = under.make({ ...contractOptions(prefix), reconnectMinMs: 50, reconnectMaxMs: 100 });
        cleanups.push(() => t.stop());
        const changes: BrokerStateChange[] = [];
        t.onStateChange((c) => changes.push(c));
        await t.start();
        const outcome = await t.publish(items(2));
        assert.deepEqual(outcome, { confirmed: [], failed: ['1', '2'] });
        assert.equal(await t.depth(), null);
        cleanups.push(() => under.cleanup(prefix, 2));
        await stateReached(t, 'connected');
        assert.deepEqual(
          changes.map((c) => c.state),
          ['connected'],
          'one change of state',
        );
      },
    );
  });
}
