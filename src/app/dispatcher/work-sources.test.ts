import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answer, claimed, harness, settle } from '../../../test/support/dispatcher-harness.ts';
import { deferred } from '../../../test/support/deferred.ts';
import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import type { TakeRequest, WorkSink, WorkSource } from '../../ports/work-source.ts';
import { CLAIM_BACKOFF_BASE_MS } from './claim-pacer.ts';

// A third source beside the claim and the hand-off, as a broker transport would be one: it pulls (its take leases the
// deliveries of the ids it holds), wakes the dispatcher when a message arrives, and is told when a record settled.

function brokerLike(): {
  source: WorkSource;
  held: ClaimedDelivery[];
  asked: TakeRequest[];
  settled: [string, boolean][];
  released: string[];
  arrive: () => void;
} {
  const held: ClaimedDelivery[] = [];
  const released: string[] = [];
  const asked: TakeRequest[] = [];
  const settled: [string, boolean][] = [];
  let sink: WorkSink | undefined;
  const source: WorkSource = {
    name: 'broker',
    async take(request) {
      asked.push(request);
      return { deliveries: held.splice(0, request.limit), reclaimed: 0, deadLettered: 0 };
    },
    connect(s) {
      sink = s;
      return () => {
        sink = undefined;
      };
    },
    settled: (delivery, recorded) => settled.push([delivery.deliveryId, recorded]),
    released: (delivery) => released.push(delivery.deliveryId),
  };
  return { source, held, asked, settled, released, arrive: () => sink?.wake() };
}

test(
  'a third source is taken from after the claim, within what the claim left of the limit, and its records settle ' +
    'back to it',
  async () => {
    const broker = brokerLike();
    const h = harness({ concurrency: 4, endpointWindowShare: 1, windowReserve: 0 }, [broker.source]);
    h.claims.push([claimed('1', 'ep_a')]);
    broker.held.push(claimed('b1', 'ep_b'), claimed('b2', 'ep_b'), claimed('b3', 'ep_b'), claimed('b4', 'ep_b'));
    assert.equal(await h.dispatcher.tick(), 4);
    assert.equal(broker.asked[0]?.limit, 3, 'the claim took one of four');
    assert.deepEqual([...h.requests.keys()].sort(), ['1', 'b1', 'b2', 'b3']);
    for (const id of ['1', 'b1', 'b2', 'b3']) h.requests.get(id)?.result.resolve(answer(200));
    await h.dispatcher.drained();
    assert.deepEqual(
      broker.settled.sort(),
      [
        ['b1', true],
        ['b2', true],
        ['b3', true],
      ],
      "the claim's own delivery settles nothing there",
    );
  },
);

test("a third source's wake-up ends the loop's wait, as a publish wake-up does", async () => {
  const broker = brokerLike();
  const h = harness({}, [broker.source]);
  h.dispatcher.start();
  await settle();
  const takes = broker.asked.length;
  broker.held.push(claimed('b1'));
  broker.arrive();
  await settle();
  assert.ok(broker.asked.length > takes, 'taken at once, no time having passed');
  assert.ok(h.requests.has('b1'));
  h.requests.get('b1')?.result.resolve(answer(200));
  await h.dispatcher.stop();
  const stopped = broker.asked.length;
  broker.arrive();
  await settle();
  assert.equal(broker.asked.length, stopped, 'disconnected at the stop');
});

test(
  'room a source reserved counts as held: the claim asks for ' + 'less and is told what each endpoint holds',
  async () => {
    const reserving: WorkSource = {
      name: 'reserving',
      reserved: () => ({ slots: 2, endpoints: new Map([['ep_a', 2]]) }),
    };
    const h = harness({ concurrency: 4, endpointWindowShare: 0.5, windowReserve: 0 }, [reserving]);
    await h.dispatcher.tick();
    assert.equal(h.claimCalls[0]?.limit, 2);
    assert.deepEqual(
      h.claimCalls[0]?.excludeEndpoints,
      ['ep_a'],
      'ep_a is at its share of 2 with what was reserved for it',
    );
    assert.deepEqual(h.claimCalls[0]?.window?.held, new Map([['ep_a', 2]]));
  },
);

test(
  'a pushing source is offered no room while the claims fail and ' + 'back off, and room again once a claim succeeds',
  async () => {
    const h = harness({ concurrency: 4, endpointWindowShare: 1, windowReserve: 0 });
    const afterBackOff = deferred<readonly ClaimedDelivery[]>();
    h.claims.push([claimed('1', 'ep_a')], new Error('connection refused'), afterBackOff.promise);
    h.dispatcher.start();
    await settle();
    h.requests.get('1')?.result.resolve(answer(200));
    await settle();
    assert.equal(h.dispatcher.healthy(), false, 'the second claim failed');
    assert.equal(h.handoff.offer(1), null, 'no room while backing off after a failed claim');
    await h.timers.advance(CLAIM_BACKOFF_BASE_MS * 2);
    assert.equal(h.dispatcher.healthy(), false, 'the claim after the back-off is still out');
    assert.equal(h.handoff.offer(1), null, 'no room until a claim succeeds');
    afterBackOff.resolve([]);
    await settle();
    assert.equal(h.dispatcher.healthy(), true, 'the claim after the back-off succeeded');
    const offer = h.handoff.offer(1);
    assert.deepEqual(offer?.endpointIds, ['ep_a'], 'room again for the endpoint that answered');
    h.handoff.adopt(offer!, []);
    await h.dispatcher.stop();
  },
);

test(
  'a source is told of each of its deliveries given up without a record, once: lease lost, or released at the ' +
    'stop',
  async () => {
    const broker = brokerLike();
    const h = harness({ concurrency: 4, endpointWindowShare: 1, windowReserve: 0, shutdownGraceMs: 1 }, [
      broker.source,
    ]);
    broker.held.push(claimed('b1', 'ep_b'), claimed('b2', 'ep_b'), claimed('b3', 'ep_b'));
    await h.dispatcher.tick();
    h.lost = ['b1'];
    await h.dispatcher.heartbeat();
    h.requests.get('b1')?.result.resolve(answer(200));
    h.requests.get('b2')?.result.resolve(answer(200));
    await settle();
    assert.deepEqual(broker.released, ['b1'], 'the lost lease, and not the recorded one');
    assert.deepEqual(broker.settled, [['b2', true]]);
    const stopped = h.dispatcher.stop();
    await settle();
    await h.timers.advance(1);
    await stopped;
    assert.deepEqual(broker.released.sort(), ['b1', 'b3'], 'the one in flight at the stop, released');
    assert.deepEqual(broker.settled, [['b2', true]], 'nothing settled twice or after being released');
  },
);
