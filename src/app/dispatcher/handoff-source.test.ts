import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimed } from '../../../test/support/dispatcher-harness.ts';
import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import type { WindowRoom, WorkSink } from '../../ports/work-source.ts';
import { createHandoffSource, HANDOFF_MAX_ENDPOINTS, type HandoffSource } from './handoff-source.ts';

// The hand-off source against a fake dispatcher: its window is a table of numbers, and what it is handed is written
// down.

interface FakeWindow {
  free: number;
  share: number;
  /**
   * What each endpoint holds in flight (the source's own reservations are added by the fake, as the dispatcher does).
   */
  inFlight: Record<string, number>;
  answering: string[];
  /** Null: the dispatcher takes no work now (stopped, backing off, unhealthy, or its window full). */
  closed?: boolean;
}

function connected(w: FakeWindow): {
  source: HandoffSource;
  handed: { deliveries: string[]; leaseUntilMs: number }[];
  disconnect: () => void;
} {
  const source = createHandoffSource();
  const handed: { deliveries: string[]; leaseUntilMs: number }[] = [];
  const room = (): WindowRoom | null => {
    const reserved = source.reserved?.() ?? { slots: 0, endpoints: new Map<string, number>() };
    if (w.closed === true || w.free - reserved.slots <= 0) return null;
    return {
      dispatcherId: 'w1',
      leaseMs: 30_000,
      nowMs: 1_000,
      free: w.free - reserved.slots,
      share: w.share,
      held: (id) => (w.inFlight[id] ?? 0) + (reserved.endpoints.get(id) ?? 0),
      answering: (max) => w.answering.slice(0, max),
    };
  };
  const sink: WorkSink = {
    wake: () => undefined,
    yours: (deliveries: readonly ClaimedDelivery[], leaseUntilMs: number) =>
      handed.push({ deliveries: deliveries.map((d) => d.deliveryId), leaseUntilMs }),
    room,
  };
  const disconnect = source.connect!(sink);
  return { source, handed, disconnect };
}

test(
  "an offer: per answering endpoint the statement's messages within its share less what it holds; in all at most " +
    'the free slots',
  () => {
    const cases: {
      name: string;
      w: FakeWindow;
      messages: number;
      offer: { endpointIds: string[]; room: number[]; slots: number } | null;
    }[] = [
      {
        name: 'room per endpoint is the message count',
        w: { free: 10, share: 5, inFlight: {}, answering: ['a', 'b'] },
        messages: 3,
        offer: { endpointIds: ['a', 'b'], room: [3, 3], slots: 6 },
      },
      {
        name: 'an endpoint near its share gets what is left of it',
        w: { free: 10, share: 5, inFlight: { a: 4 }, answering: ['a', 'b'] },
        messages: 3,
        offer: { endpointIds: ['a', 'b'], room: [1, 3], slots: 4 },
      },
      {
        name: 'an endpoint at its share is left out',
        w: { free: 10, share: 5, inFlight: { a: 5 }, answering: ['a', 'b'] },
        messages: 3,
        offer: { endpointIds: ['b'], room: [3], slots: 3 },
      },
      {
        name: 'the free slots bound the sum',
        w: { free: 4, share: 5, inFlight: {}, answering: ['a', 'b'] },
        messages: 3,
        offer: { endpointIds: ['a', 'b'], room: [3, 3], slots: 4 },
      },
      {
        name: 'no endpoint has answered',
        w: { free: 10, share: 5, inFlight: {}, answering: [] },
        messages: 3,
        offer: null,
      },
      {
        name: 'every answering endpoint at its share',
        w: { free: 10, share: 2, inFlight: { a: 2 }, answering: ['a'] },
        messages: 3,
        offer: null,
      },
      {
        name: 'the dispatcher takes no work now',
        w: { free: 10, share: 5, inFlight: {}, answering: ['a'], closed: true },
        messages: 3,
        offer: null,
      },
      {
        name: 'a statement of no message',
        w: { free: 10, share: 5, inFlight: {}, answering: ['a'] },
        messages: 0,
        offer: null,
      },
    ];
    for (const c of cases) {
      const made = connected(c.w).source.offer(c.messages);
      assert.deepEqual(
        made === null ? null : { endpointIds: made.endpointIds, room: made.room, slots: made.slots },
        c.offer,
        c.name,
      );
      if (made !== null)
        assert.deepEqual(
          { dispatcherId: made.dispatcherId, leaseMs: made.leaseMs, leaseFromMs: made.leaseFromMs },
          { dispatcherId: 'w1', leaseMs: 30_000, leaseFromMs: 1_000 },
          c.name,
        );
    }
  },
);

test(`an offer lists at most ${HANDOFF_MAX_ENDPOINTS} endpoints, the most recently answering first`, () => {
  const answering = Array.from({ length: 100 }, (_, i) => `ep_${i}`);
  const made = connected({ free: 1000, share: 10, inFlight: {}, answering }).source.offer(1);
  assert.deepEqual(made?.endpointIds, answering.slice(0, HANDOFF_MAX_ENDPOINTS));
});

test(
  'open offers are reserved: a second offer sees the room of the first as held, and adopt gives it back whatever ' +
    'was leased',
  () => {
    const { source } = connected({ free: 10, share: 5, inFlight: {}, answering: ['a'] });
    const first = source.offer(4)!;
    assert.deepEqual(source.reserved?.(), { slots: 4, endpoints: new Map([['a', 4]]) });
    const second = source.offer(4)!;
    assert.deepEqual(
      { room: second.room, slots: second.slots },
      { room: [1], slots: 1 },
      'the share (5) less the first offer',
    );
    assert.equal(source.offer(4), null, 'the share is all promised');
    source.adopt(first, [claimed('1', 'a')]);
    assert.deepEqual(
      source.reserved?.(),
      { slots: 1, endpoints: new Map([['a', 1]]) },
      "the first offer's room is given back though it leased one of four",
    );
    source.adopt(second, []);
    assert.deepEqual(source.reserved?.(), { slots: 0, endpoints: new Map() });
    source.adopt(second, [claimed('2', 'a')]);
    assert.deepEqual(
      source.reserved?.(),
      { slots: 0, endpoints: new Map() },
      'an offer adopted twice gives nothing back twice',
    );
  },
);

test(
  "adopted leases go to the dispatcher the offer was made for, lasting until the offer's instant plus the lease, " +
    'even after it disconnected',
  () => {
    const { source, handed, disconnect } = connected({ free: 10, share: 5, inFlight: {}, answering: ['a'] });
    const made = source.offer(2)!;
    const empty = source.offer(1)!;
    disconnect();
    assert.equal(source.offer(2), null, 'a disconnected dispatcher is offered for no more');
    source.adopt(made, [claimed('1', 'a'), claimed('2', 'a')]);
    assert.deepEqual(
      handed,
      [{ deliveries: ['1', '2'], leaseUntilMs: 1_000 + 30_000 }],
      'the stopping dispatcher gets them, to release them',
    );
    source.adopt(empty, []);
    assert.equal(handed.length, 1, 'an adopt of nothing hands nothing');
    assert.deepEqual(source.reserved?.(), { slots: 0, endpoints: new Map() });
  },
);

test('an unconnected hand-off source offers nothing', () => {
  assert.equal(createHandoffSource().offer(5), null);
});
