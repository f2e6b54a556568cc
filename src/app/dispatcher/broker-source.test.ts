import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimed } from '../../../test/support/dispatcher-harness.ts';
import type { BrokerConsumeOptions, BrokerMessage } from '../../ports/broker.ts';
import type { ClaimIdRefusal, ClaimIdsInput } from '../../ports/broker-outbox-store.ts';
import type { TakeRequest, WorkSource } from '../../ports/work-source.ts';
import { createBrokerSource } from './broker-source.ts';

const quiet = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => quiet,
};

interface FakeMessage extends BrokerMessage {
  settledAs: string | null;
}

function message(deliveryId: string, endpointId: string, deliveryCount = 1): FakeMessage {
  const m: FakeMessage = {
    deliveryId,
    endpointId,
    redelivered: deliveryCount > 1,
    deliveryCount,
    settledAs: null,
    ack: () => {
      m.settledAs ??= 'ack';
    },
    nack: () => {
      m.settledAs ??= 'nack';
    },
    term: () => {
      m.settledAs ??= 'term';
    },
  };
  return m;
}

/** A broker source over a fake transport and a store whose claim answers from `verdicts` (default: leased). */
function world(verdicts: Record<string, ClaimIdRefusal | 'leased' | 'fail'> = {}) {
  let consumer: BrokerConsumeOptions | undefined;
  const claims: string[][] = [];
  const source: WorkSource = createBrokerSource({
    transport: {
      name: 'fake',
      consume: (o) => {
        consumer = o;
        return { cancel: async () => undefined };
      },
    },
    store: {
      async claimIds(input: ClaimIdsInput) {
        claims.push([...input.ids]);
        if (input.ids.some((id) => verdicts[id] === 'fail')) throw new Error('claim failed');
        const refused = new Map<string, ClaimIdRefusal>();
        const deliveries = [];
        for (const id of input.ids) {
          const v = verdicts[id] ?? 'leased';
          if (v === 'leased') deliveries.push(claimed(id, `ep_${id.split('-')[0]}`));
          else if (v !== 'fail') refused.set(id, v);
        }
        return { deliveries, reclaimed: 0, refused };
      },
      sweep: async () => 0,
    },
    clock: { nowMs: () => 0 },
    maxInFlight: 100,
    sweepEveryMs: 1_000_000,
    logger: quiet,
  });
  let woken = 0;
  const disconnect = source.connect!({
    wake: () => {
      woken += 1;
    },
    yours: () => undefined,
    room: () => null,
  });
  const arrive = (...messages: FakeMessage[]) => {
    for (const m of messages) consumer!.onMessage(m);
  };
  const take = (limit: number, held: Record<string, number> = {}, share = 100) => {
    const request: TakeRequest = {
      dispatcherId: 'd',
      limit,
      excludeEndpoints: [],
      leaseMs: 1000,
      maxReclaims: 5,
      now: null,
      window: { share, held: new Map(Object.entries(held)), answering: [], unresponsive: [], budget: limit },
    };
    return source.take!(request);
  };
  return { source, arrive, take, claims, disconnect, woken: () => woken };
}

test(
  'ids are offered round-robin over endpoints, each within its room: ' + 'a black hole at its share crowds out nobody',
  async () => {
    const w = world();
    const hole = Array.from({ length: 6 }, (_, i) => message(`hole-${i}`, 'ep_hole'));
    w.arrive(...hole, message('ok-1', 'ep_ok'));
    await w.take(3, { ep_hole: 2 }, 2);
    assert.deepEqual(w.claims, [['ok-1']], 'the black hole has no room: only the other endpoint is offered');
    await w.take(3, {}, 2);
    assert.deepEqual(w.claims[1], ['hole-0', 'hole-1'], 'then the black hole up to its share');
    const z = world();
    z.arrive(
      ...hole.map((m) => message(m.deliveryId, m.endpointId)),
      message('ok-1', 'ep_ok'),
      message('ok-2', 'ep_ok'),
    );
    await z.take(3);
    assert.deepEqual(z.claims, [['hole-0', 'ok-1', 'hole-1']], 'one of each endpoint in turn');
  },
);

test(
  'ids not due or gated are acknowledged; ids without room are kept and offered again; leased ones end with ' +
    'their flight',
  async () => {
    const w = world({ 'a-1': 'not_due', 'a-2': 'gated', 'a-3': 'window', 'a-4': 'busy' });
    const m = ['a-1', 'a-2', 'a-3', 'a-4', 'a-5', 'a-6'].map((id) => message(id, 'ep_a'));
    w.arrive(...m);
    assert.equal(w.woken(), 6, 'each arrival wakes the dispatcher');
    const taken = await w.take(10);
    assert.deepEqual(
      taken.deliveries.map((d) => d.deliveryId),
      ['a-5', 'a-6'],
    );
    assert.deepEqual(
      m.map((x) => x.settledAs),
      ['ack', 'ack', null, null, null, null],
    );
    await w.take(10);
    assert.deepEqual(w.claims[1], ['a-3', 'a-4'], 'offered again');
    w.source.settled!(taken.deliveries[0]!, true);
    w.source.released!(taken.deliveries[1]!);
    assert.deepEqual(
      m.map((x) => x.settledAs),
      ['ack', 'ack', null, null, 'ack', 'ack'],
    );
    w.disconnect();
    assert.deepEqual(
      m.map((x) => x.settledAs),
      ['ack', 'ack', 'nack', 'nack', 'ack', 'ack'],
      'the stop gives back what waits',
    );
  },
);

test('a duplicate message of a leased id is acknowledged at once, the leased one after its record', async () => {
  const w = world();
  const first = message('a-1', 'ep_a');
  const second = message('a-1', 'ep_a');
  w.arrive(first, second);
  const taken = await w.take(10);
  assert.equal(taken.deliveries.length, 1);
  assert.deepEqual([first.settledAs, second.settledAs], [null, 'ack']);
  w.source.settled!(taken.deliveries[0]!, true);
  assert.equal(first.settledAs, 'ack');
});

test(
  'a failed batch claims each id alone next: the failing one is nacked (toward the delivery limit), the others ' +
    'leased',
  async () => {
    const w = world({ 'p-1': 'fail' });
    const m = [message('a-1', 'ep_a'), message('p-1', 'ep_p'), message('b-1', 'ep_b')];
    w.arrive(...m);
    await assert.rejects(w.take(10), /claim failed/);
    assert.deepEqual(
      m.map((x) => x.settledAs),
      [null, null, null],
      'nothing nacked for a failed batch',
    );
    const taken = await w.take(10);
    assert.deepEqual(
      taken.deliveries.map((d) => d.deliveryId),
      ['a-1'],
      'alone, in turn: the poison one stops the take',
    );
    assert.equal(m[1]!.settledAs, 'nack');
    const rest = await w.take(10);
    assert.deepEqual(
      rest.deliveries.map((d) => d.deliveryId),
      ['b-1'],
    );
    const redelivered = message('p-1', 'ep_p', 3);
    w.arrive(redelivered);
    await assert.rejects(w.take(10), /claim failed/);
    assert.equal(redelivered.settledAs, 'nack', 'a message delivered often already is claimed alone at once');
  },
);
