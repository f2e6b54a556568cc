import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answer, claimed, harness, settle } from '../../../test/support/dispatcher-harness.ts';
import { deferred } from '../../../test/support/deferred.ts';
import { CLAIM_BACKOFF_BASE_MS, HANDOFF_REFILL_DELAY_MS } from './dispatcher.ts';
import { REFILL_DELAY_MS } from './in-flight.ts';
import type { ClaimedDelivery } from '../../ports/delivery-store.ts';

// The loop over fake ports (test/support/dispatcher-harness.ts): claim / record / heartbeat are plain
// functions, the sender answers when the test says so, and time moves only with the manual clock.

test('claims fill free slots only: a full window claims nothing, a freed slot is claimed into', async () => {
  const h = harness({ concurrency: 3, endpointWindowShare: 1, windowReserve: 0 });
  h.claims.push([claimed('1'), claimed('2'), claimed('3')]);
  assert.equal(await h.dispatcher.tick(), 3);
  assert.equal(h.claimCalls[0]?.limit, 3, 'the first claim asks for the whole window');
  assert.equal(await h.dispatcher.tick(), 0);
  assert.equal(h.claimCalls.length, 1, 'a full window does not call the store');
  h.requests.get('2')?.result.resolve(answer(200));
  await settle();
  assert.equal(h.dispatcher.inFlight(), 2);
  await h.dispatcher.tick();
  assert.equal(h.claimCalls[1]?.limit, 1, 'the next claim asks for the one free slot');
});

test(
  'an answered request frees its slot while its outcome is written; a dispatcher holds at most twice its window ' +
    'in leases',
  async () => {
    const h = harness({ concurrency: 2, endpointWindowShare: 1, windowReserve: 0 });
    const gate = deferred();
    h.recordGate = gate.promise;
    h.claims.push([claimed('1'), claimed('2')], [claimed('3'), claimed('4')]);
    assert.equal(await h.dispatcher.tick(), 2);
    h.requests.get('1')?.result.resolve(answer(200));
    h.requests.get('2')?.result.resolve(answer(200));
    await settle();
    assert.equal(h.recordCalls.length, 1, 'the outcomes went to the recorder, whose write is held');
    assert.equal(await h.dispatcher.tick(), 2, 'the two answered requests left their slots to the next claim');
    assert.equal(h.claimCalls[1]?.limit, 2);
    assert.deepEqual(h.claimCalls[1]?.window?.held, new Map(), 'the endpoint share counts open requests only');
    h.requests.get('3')?.result.resolve(answer(200));
    await settle();
    assert.equal(h.dispatcher.inFlight(), 4, 'four leases held: one request open, three outcomes waiting');
    assert.equal(await h.dispatcher.tick(), 0, 'twice the window in leases already: nothing more is claimed');
    assert.equal(h.claimCalls.length, 2);
    gate.resolve();
    h.recordGate = undefined;
    h.requests.get('4')?.result.resolve(answer(200));
    await h.dispatcher.drained();
    assert.deepEqual(
      h.recordCalls
        .flat()
        .map((r) => r.deliveryId)
        .sort(),
      ['1', '2', '3', '4'],
    );
  },
);

test('an outcome is recorded with its fencing token and dispatcher id, and logged as delivery.attempted', async () => {
  const h = harness();
  h.claims.push([claimed('1', 'ep_a', '7')]);
  await h.dispatcher.tick();
  h.requests.get('1')?.result.resolve(answer(200));
  await h.dispatcher.drained();
  assert.equal(h.recordCalls.length, 1);
  const record = h.recordCalls[0]?.[0];
  assert.deepEqual(
    {
      deliveryId: record?.deliveryId,
      fencingToken: record?.fencingToken,
      dispatcherId: record?.dispatcherId,
      succeeded: record?.succeeded,
      next: record?.next,
    },
    { deliveryId: '1', fencingToken: '7', dispatcherId: 'w1', succeeded: true, next: { next: 'succeeded' } },
  );
  const line = h.lines.find((l) => l.msg === 'delivery.attempted');
  assert.equal(line?.obj.fencingToken, '7');
  assert.equal(line?.obj.recorded, true);
});

test(
  'a lost lease is not recorded as success: the heartbeat aborts ' + 'the attempt and nothing is written for it',
  async () => {
    const h = harness();
    h.claims.push([claimed('1'), claimed('2')]);
    await h.dispatcher.tick();
    h.lost = ['1'];
    assert.deepEqual(await h.dispatcher.heartbeat(), ['1']);
    assert.equal(h.requests.get('1')?.signal?.aborted, true, 'the request of the lost lease is aborted');
    assert.equal(h.requests.get('2')?.signal?.aborted, false);
    h.requests.get('2')?.result.resolve(answer(200));
    await h.dispatcher.drained();
    assert.deepEqual(
      h.recordCalls.flat().map((r) => r.deliveryId),
      ['2'],
      'only the attempt that kept its lease is recorded',
    );
    assert.ok(h.lines.some((l) => l.level === 'warn' && l.msg?.startsWith('lease lost')));
  },
);

test(
  'answers arriving during a claim back-off do not end it: the freed slots wait for the back-off like everything ' +
    'else',
  async () => {
    const h = harness();
    h.claims.push([claimed('1'), claimed('2')], new Error('connection refused'));
    h.dispatcher.start();
    await settle();
    assert.equal(h.claimCalls.length, 2, 'the first claim took work, the second failed');
    const [line] = h.lines.filter((l) => l.msg === 'claim failed; backing off');
    const backoffMs = Number(line?.obj.retryInMs);
    h.requests.get('1')?.result.resolve(answer(200));
    h.requests.get('2')?.result.resolve(answer(200));
    await settle();
    await h.timers.advance(backoffMs - 1);
    assert.equal(h.claimCalls.length, 2, 'no claim before the back-off is over, whatever the freed slots');
    await h.timers.advance(1);
    assert.equal(h.claimCalls.length, 3);
    await h.dispatcher.stop();
  },
);

test(
  'publish wake-ups during a claim back-off do not end it, nor ' + 'does one that came during the failed claim',
  async () => {
    const h = harness();
    h.claims.push(new Error('connection refused'));
    h.dispatcher.start();
    h.wake?.(); // arrives while the first claim is out
    await settle();
    assert.equal(h.claimCalls.length, 1);
    h.wake?.();
    h.wake?.();
    await settle();
    await h.timers.advance(CLAIM_BACKOFF_BASE_MS * 2 - 1);
    assert.equal(h.claimCalls.length, 1, 'no claim before the back-off is over, whatever the wake-ups');
    await h.timers.advance(1);
    assert.equal(h.claimCalls.length, 2);
    await h.dispatcher.stop();
  },
);

test('a stop ends a claim back-off at once, and a stop during the failed claim waits for no back-off', async () => {
  for (const stopDuringClaim of [false, true]) {
    const h = harness();
    const failed = deferred<readonly ClaimedDelivery[]>();
    h.claims.push(stopDuringClaim ? failed.promise : new Error('connection refused'));
    h.dispatcher.start();
    await settle();
    const stopped = h.dispatcher.stop();
    if (stopDuringClaim) failed.reject(new Error('connection refused'));
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await settle();
    assert.equal(done, true, `stopped without waiting for the back-off (stop during the claim: ${stopDuringClaim})`);
    assert.equal(h.claimCalls.length, 1);
  }
});

test(
  'after failed claims the loop backs off (doubling), then logs ' + '"claims resumed" at the next successful claim',
  async () => {
    const h = harness();
    h.claims.push(new Error('connection refused'), new Error('connection refused'));
    h.dispatcher.start();
    await settle();
    assert.equal(h.claimCalls.length, 1);
    assert.equal(h.dispatcher.healthy(), false, 'not ready after a failed claim');
    // random 0.5: the jitter factor is 1, so the waits are 2× and 4× the base.
    const first = h.lines.filter((l) => l.msg === 'claim failed; backing off').map((l) => l.obj.retryInMs);
    assert.deepEqual(first, [CLAIM_BACKOFF_BASE_MS * 2]);
    await h.timers.advance(CLAIM_BACKOFF_BASE_MS * 2 - 1);
    assert.equal(h.claimCalls.length, 1, 'no claim before the back-off is over');
    await h.timers.advance(1);
    assert.equal(h.claimCalls.length, 2);
    await h.timers.advance(CLAIM_BACKOFF_BASE_MS * 4);
    assert.equal(h.claimCalls.length, 3);
    assert.equal(h.dispatcher.healthy(), true);
    const resumed = h.lines.filter((l) => l.msg === 'claims resumed');
    assert.deepEqual(
      resumed.map((l) => l.obj),
      [{ failedClaims: 2, failedStoreCalls: 2 }],
    );
    await h.dispatcher.stop();
  },
);

test('an empty claim waits for the poll; a wake-up claims at once', async () => {
  const h = harness();
  h.dispatcher.start();
  await settle();
  assert.equal(h.claimCalls.length, 1);
  await h.timers.advance(999);
  assert.equal(h.claimCalls.length, 1, 'nothing before the poll interval');
  h.wake?.();
  await settle();
  assert.equal(h.claimCalls.length, 2, 'a publish wake-up ends the wait');
  await h.timers.advance(1000);
  assert.equal(h.claimCalls.length, 3, 'then the poll again');
  await h.dispatcher.stop();
});

// With claiming ahead and nothing waiting (the window has room), the free slots decide, not the room for
// claiming ahead: a claim per answer costs CPU (ADR 0016, decisions 7 and 16).
for (const claimAhead of [0, 13]) {
  test(
    'a few freed slots are refilled after the refill delay, not ' + `at once (claiming ${claimAhead} ahead)`,
    async () => {
      const h = harness({
        concurrency: 64,
        claimBatch: 64,
        claimAheadCount: claimAhead,
        endpointWindowShare: 1,
        windowReserve: 0,
      });
      h.claims.push(Array.from({ length: 64 }, (_, i) => claimed(String(i))));
      h.dispatcher.start();
      await settle();
      assert.equal(h.dispatcher.inFlight(), 64);
      const before = h.claimCalls.length;
      h.requests.get('0')?.result.resolve(answer(200));
      await settle();
      assert.equal(h.claimCalls.length, before, 'one free slot of 64 waits for the refill timer');
      await h.timers.advance(REFILL_DELAY_MS);
      assert.equal(h.claimCalls.length, before + 1);
      assert.equal(h.claimCalls.at(-1)?.limit, 1 + claimAhead);
      for (let i = 1; i < 64; i++) h.requests.get(String(i))?.result.resolve(answer(200));
      await h.dispatcher.stop();
    },
  );
}

test(
  'graceful stop drains in-flight attempts: it waits for them, ' + 'records their outcomes and releases nothing',
  async () => {
    const h = harness();
    h.claims.push([claimed('1'), claimed('2')]);
    h.dispatcher.start();
    await settle();
    assert.equal(h.dispatcher.inFlight(), 2);
    let stopped = false;
    const stopping = h.dispatcher.stop().then(() => {
      stopped = true;
    });
    await settle();
    assert.equal(h.dispatcher.state(), 'draining');
    assert.equal(stopped, false, 'stop waits for the attempts in flight');
    const claims = h.claimCalls.length;
    h.requests.get('1')?.result.resolve(answer(200));
    h.requests.get('2')?.result.resolve(answer(500));
    await stopping;
    assert.equal(h.dispatcher.state(), 'stopped');
    assert.equal(h.claimCalls.length, claims, 'no claim while draining');
    assert.deepEqual(
      h.recordCalls.flat().map((r) => [r.deliveryId, r.next.next]),
      [
        ['1', 'succeeded'],
        ['2', 'retry'],
      ],
    );
    assert.deepEqual(h.releaseCalls, []);
    assert.equal(h.timers.armed(), 0, 'no timer left armed');
  },
);

test('graceful stop past the grace period aborts the attempts left and releases their leases', async () => {
  const h = harness({ shutdownGraceMs: 5000 });
  h.claims.push([claimed('1', 'ep_a', '3'), claimed('2')]);
  h.dispatcher.start();
  await settle();
  const stopping = h.dispatcher.stop();
  h.requests.get('2')?.result.resolve(answer(200));
  await settle();
  await h.timers.advance(4999);
  assert.equal(h.requests.get('1')?.signal?.aborted, false, 'the attempt may still finish within the grace period');
  await h.timers.advance(1);
  await stopping;
  assert.equal(h.requests.get('1')?.signal?.aborted, true);
  assert.deepEqual(
    h.recordCalls.flat().map((r) => r.deliveryId),
    ['2'],
    'the aborted attempt is not recorded',
  );
  assert.deepEqual(
    h.releaseCalls.flat().map((l) => [l.deliveryId, l.fencingToken, l.dispatcherId]),
    [['1', '3', 'w1']],
  );
});

test(
  'graceful stop past the grace period ends even while outcomes cannot be written: they are given up and their ' +
    'leases released',
  async () => {
    const h = harness({ shutdownGraceMs: 5000 });
    h.claims.push([claimed('1', 'ep_a', '3')]);
    h.dispatcher.start();
    await settle();
    h.recordError = new Error('connection terminated');
    h.requests.get('1')?.result.resolve(answer(200));
    await settle();
    assert.ok(h.recordCalls.length >= 1, 'the outcome went to the recorder, whose write failed');
    let stopped = false;
    const stopping = h.dispatcher.stop().then(() => {
      stopped = true;
    });
    await settle();
    await h.timers.advance(5000);
    await settle();
    assert.equal(stopped, true, 'the stop ends once the grace period is over, the outage going on');
    await stopping;
    assert.deepEqual(
      h.releaseCalls.flat().map((l) => [l.deliveryId, l.fencingToken]),
      [['1', '3']],
      'the lease of the unwritten outcome is released (fenced)',
    );
    assert.equal(h.dispatcher.state(), 'stopped');
  },
);

test(
  'the per-endpoint share: an endpoint at its share is left out of ' + 'the next claim, which is told what it holds',
  async () => {
    const h = harness({ concurrency: 4 });
    h.claims.push([claimed('1', 'ep_slow'), claimed('2', 'ep_slow')]);
    await h.dispatcher.tick();
    await h.dispatcher.tick();
    const next = h.claimCalls[1];
    assert.deepEqual(next?.excludeEndpoints, ['ep_slow'], 'share 2 of a window of 4: the endpoint takes no more');
    assert.equal(next?.window?.share, 2);
    assert.deepEqual(next?.window?.held, new Map([['ep_slow', 2]]));
    assert.equal(next?.limit, 2);
    h.requests.get('1')?.result.resolve(answer(200));
    await settle();
    await h.dispatcher.tick();
    assert.deepEqual(h.claimCalls[2]?.excludeEndpoints, [], 'below its share again after one attempt finished');
    h.requests.get('2')?.result.resolve(answer(200));
    await h.dispatcher.drained();
  },
);

// Claiming ahead (in-flight.ts; docs/adr/0016-hot-path-cost.md, decision 16).

test(
  'a delivery claimed ahead waits for a slot and opens its request the moment an answer frees one, without a ' +
    'claim',
  async () => {
    const h = harness({ concurrency: 2, claimAheadCount: 2, endpointWindowShare: 1, windowReserve: 0 });
    h.claims.push([claimed('1', 'ep_a'), claimed('2', 'ep_a'), claimed('3', 'ep_a'), claimed('4', 'ep_a')]);
    assert.equal(await h.dispatcher.tick(), 4);
    assert.equal(h.claimCalls[0]?.limit, 4, 'the claim asks for the window and what is claimed ahead');
    await settle();
    assert.deepEqual([...h.requests.keys()].sort(), ['1', '2'], 'two requests open: the window');
    assert.equal(h.dispatcher.inFlight(), 4, 'two more leases wait for a slot');
    assert.equal(await h.dispatcher.tick(), 0, 'every slot taken and everything claimed ahead still waiting: no claim');
    assert.equal(h.claimCalls.length, 1);
    const gate = deferred();
    h.recordGate = gate.promise;
    h.requests.get('1')?.result.resolve(answer(200));
    await settle();
    assert.ok(h.requests.has('3'), 'the answer opened the next waiting request, its outcome not yet written');
    assert.equal(h.claimCalls.length, 1, 'without a claim in between');
    gate.resolve();
    h.recordGate = undefined;
    for (const id of ['2', '3', '4']) {
      h.requests.get(id)?.result.resolve(answer(200));
      await settle();
    }
    await h.dispatcher.drained();
    assert.deepEqual(
      h.recordCalls
        .flat()
        .map((r) => r.deliveryId)
        .sort(),
      ['1', '2', '3', '4'],
    );
  },
);

test("a waiting delivery opens its request only within its endpoint's share of the open requests", async () => {
  const h = harness({ concurrency: 4, claimAheadCount: 2, endpointWindowShare: 0.5, windowReserve: 0 });
  h.claims.push([claimed('a1', 'ep_a'), claimed('a2', 'ep_a'), claimed('a3', 'ep_a'), claimed('b1', 'ep_b')]);
  assert.equal(await h.dispatcher.tick(), 4);
  await settle();
  assert.deepEqual(
    [...h.requests.keys()].sort(),
    ['a1', 'a2', 'b1'],
    'ep_a is at its share of 2 open requests: a3 waits although a slot is free',
  );
  h.requests.get('b1')?.result.resolve(answer(200));
  await settle();
  assert.equal(h.requests.has('a3'), false, "ep_b's answer freed a slot, and ep_a is still at its share");
  h.requests.get('a1')?.result.resolve(answer(200));
  await settle();
  assert.ok(h.requests.has('a3'), "ep_a's own answer lets a3 open");
  for (const id of ['a2', 'a3']) h.requests.get(id)?.result.resolve(answer(200));
  await h.dispatcher.drained();
});

test(
  'a waiting delivery with less of its lease left than an ' + 'attempt needs is handed back (fenced), not sent',
  async () => {
    const h = harness({
      concurrency: 1,
      claimAheadCount: 1,
      leaseMs: 30_000,
      attemptDeadlineMs: 15_000,
      endpointWindowShare: 1,
      windowReserve: 0,
    });
    h.claims.push([claimed('1', 'ep_a'), claimed('2', 'ep_a', '7')]);
    assert.equal(await h.dispatcher.tick(), 2);
    await h.timers.advance(14_001);
    h.requests.get('1')?.result.resolve(answer(200));
    await h.dispatcher.drained();
    assert.equal(
      h.requests.has('2'),
      false,
      '15.999 s of lease left, less than the 15 s deadline plus 1 s: no request',
    );
    assert.deepEqual(
      h.releaseCalls.flat().map((l) => [l.deliveryId, l.fencingToken]),
      [['2', '7']],
      'its lease is handed back with its fencing token',
    );
    assert.ok(
      h.lines.some((l) => l.level === 'warn' && l.obj.deliveryId === '2'),
      'and the hand-back is logged',
    );
    assert.deepEqual(
      h.recordCalls.flat().map((r) => r.deliveryId),
      ['1'],
      'nothing is recorded for it',
    );
  },
);

test("the heartbeat renews a waiting delivery's lease, so it is still sent after waiting", async () => {
  const h = harness({
    concurrency: 1,
    claimAheadCount: 1,
    leaseMs: 30_000,
    attemptDeadlineMs: 15_000,
    endpointWindowShare: 1,
    windowReserve: 0,
  });
  h.claims.push([claimed('1', 'ep_a'), claimed('2', 'ep_a')]);
  assert.equal(await h.dispatcher.tick(), 2);
  await h.timers.advance(10_000);
  assert.deepEqual(await h.dispatcher.heartbeat(), []);
  await h.timers.advance(4_001);
  h.requests.get('1')?.result.resolve(answer(200));
  await settle();
  assert.ok(h.requests.has('2'), '14.001 s after the claim but 4.001 s after the renewal: 26 s of lease left');
  h.requests.get('2')?.result.resolve(answer(200));
  await h.dispatcher.drained();
  assert.deepEqual(h.releaseCalls, []);
});

test(
  'a waiting delivery whose lease is lost is dropped unsent; a stop ' + 'lets waiting deliveries go out as slots free',
  async () => {
    const h = harness({ concurrency: 1, claimAheadCount: 2, endpointWindowShare: 1, windowReserve: 0 });
    h.claims.push([claimed('1', 'ep_a'), claimed('2', 'ep_a'), claimed('3', 'ep_a')]);
    h.dispatcher.start();
    await settle();
    assert.equal(h.dispatcher.inFlight(), 3);
    h.lost = ['2'];
    assert.deepEqual(await h.dispatcher.heartbeat(), ['2']);
    assert.equal(h.dispatcher.inFlight(), 2, 'the lost waiting delivery left the window');
    const stopping = h.dispatcher.stop();
    h.requests.get('1')?.result.resolve(answer(200));
    await settle();
    assert.equal(h.requests.has('2'), false, 'the lost one is never sent');
    assert.ok(h.requests.has('3'), 'during the drain the next waiting delivery takes the freed slot');
    h.requests.get('3')?.result.resolve(answer(200));
    await stopping;
    assert.deepEqual(
      h.recordCalls
        .flat()
        .map((r) => r.deliveryId)
        .sort(),
      ['1', '3'],
    );
    assert.deepEqual(h.releaseCalls, [], 'a stop within the grace period hands nothing back');
  },
);

test('a stop past the grace period releases the deliveries still waiting with the open ones', async () => {
  const h = harness({
    concurrency: 1,
    claimAheadCount: 1,
    shutdownGraceMs: 5000,
    endpointWindowShare: 1,
    windowReserve: 0,
  });
  h.claims.push([claimed('1', 'ep_a', '3'), claimed('2', 'ep_a', '4')]);
  h.dispatcher.start();
  await settle();
  const stopping = h.dispatcher.stop();
  await settle();
  await h.timers.advance(5000);
  await stopping;
  assert.equal(h.requests.has('2'), false, 'the waiting delivery was never sent');
  assert.deepEqual(
    h.releaseCalls
      .flat()
      .map((l) => [l.deliveryId, l.fencingToken])
      .sort(),
    [
      ['1', '3'],
      ['2', '4'],
    ],
  );
  assert.equal(h.dispatcher.inFlight(), 0);
  assert.equal(h.dispatcher.state(), 'stopped');
});

test('while every slot is taken, claims ahead wait until no more than half of them are left waiting', async () => {
  const h = harness({ concurrency: 2, claimAheadCount: 4, endpointWindowShare: 1, windowReserve: 0 });
  h.claims.push(Array.from({ length: 6 }, (_, i) => claimed(String(i + 1), 'ep_a')));
  assert.equal(await h.dispatcher.tick(), 6);
  h.requests.get('1')?.result.resolve(answer(200));
  await settle();
  assert.equal(await h.dispatcher.tick(), 0, 'three of four still waiting: a claim of one would be a small one');
  assert.equal(h.claimCalls.length, 1);
  h.requests.get('2')?.result.resolve(answer(200));
  await settle();
  h.claims.push([claimed('7', 'ep_a'), claimed('8', 'ep_a')]);
  assert.equal(await h.dispatcher.tick(), 2, 'two of four waiting: the claim tops them up');
  assert.equal(h.claimCalls[1]?.limit, 2);
  for (let i = 3; i <= 8; i++) {
    h.requests.get(String(i))?.result.resolve(answer(200));
    await settle();
  }
  await h.dispatcher.drained();
  assert.equal(h.recordCalls.flat().length, 8);
});

test(
  'a heartbeat out while a waiting delivery is handed back and ' + 'claimed again leaves the newer lease alone',
  async () => {
    const h = harness({
      concurrency: 1,
      claimAheadCount: 1,
      leaseMs: 30_000,
      attemptDeadlineMs: 15_000,
      endpointWindowShare: 1,
      windowReserve: 0,
    });
    h.claims.push([claimed('1', 'ep_a'), claimed('2', 'ep_a', '7')]);
    assert.equal(await h.dispatcher.tick(), 2);
    await h.timers.advance(14_001);
    const gate = deferred();
    h.extendGate = gate.promise;
    h.lost = ['2'];
    const beat = h.dispatcher.heartbeat(); // renews 1 and 2 with token 7
    h.requests.get('1')?.result.resolve(answer(200));
    await settle();
    assert.deepEqual(
      h.releaseCalls.flat().map((l) => [l.deliveryId, l.fencingToken]),
      [['2', '7']],
      'token 7 handed back: too little lease left',
    );
    h.claims.push([claimed('3', 'ep_b'), claimed('2', 'ep_a', '8')]);
    assert.equal(await h.dispatcher.tick(), 2, 'the handed-back delivery is claimed again, token 8, waiting');
    gate.resolve();
    h.extendGate = undefined;
    assert.deepEqual(await beat, ['2'], 'the heartbeat reports token 7 lost');
    assert.equal(h.dispatcher.inFlight(), 2, 'token 8 is still in the window');
    h.requests.get('3')?.result.resolve(answer(200));
    await settle();
    assert.ok(h.requests.has('2'), 'and it is sent');
    h.requests.get('2')?.result.resolve(answer(200));
    await h.dispatcher.drained();
    assert.deepEqual(
      h.recordCalls
        .flat()
        .map((r) => [r.deliveryId, r.fencingToken])
        .sort(),
      [
        ['1', '1'],
        ['2', '8'],
        ['3', '1'],
      ],
    );
  },
);

test(
  'an answer that makes its endpoint answering lets its waiting ' + 'deliveries open within the reserve at once',
  async () => {
    const h = harness({ concurrency: 4, claimAheadCount: 2, endpointWindowShare: 1, windowReserve: 0.25 });
    h.claims.push([
      claimed('x1', 'ep_x'),
      claimed('y1', 'ep_y'),
      claimed('e1', 'ep_e'),
      claimed('e2', 'ep_e'),
      claimed('e3', 'ep_e'),
    ]);
    assert.equal(await h.dispatcher.tick(), 5);
    await settle();
    assert.deepEqual(
      [...h.requests.keys()].sort(),
      ['e1', 'x1', 'y1'],
      'three open for endpoints not known to answer: the fourth slot is the reserve',
    );
    const gate = deferred();
    h.recordGate = gate.promise;
    h.requests.get('e1')?.result.resolve(answer(200));
    await settle();
    assert.ok(
      h.requests.has('e2') && h.requests.has('e3'),
      "ep_e answered: both its waiting deliveries open (one into e1's slot, one into the reserve) before e1's " +
        'outcome is written',
    );
    gate.resolve();
    h.recordGate = undefined;
    for (const id of ['x1', 'y1', 'e2', 'e3']) h.requests.get(id)?.result.resolve(answer(200));
    await h.dispatcher.drained();
  },
);

test(
  'a claim that reclaims a delivery still waiting here under an expired lease replaces it: only the newer token ' +
    'is sent',
  async () => {
    const h = harness({ concurrency: 1, claimAheadCount: 2, endpointWindowShare: 1, windowReserve: 0 });
    h.claims.push([claimed('1', 'ep_a'), claimed('2', 'ep_a', '7')]);
    assert.equal(await h.dispatcher.tick(), 2);
    h.claims.push([claimed('2', 'ep_a', '8')]);
    assert.equal(await h.dispatcher.tick(), 1, 'token 7 expired in the database (say) and this claim took it again');
    assert.equal(h.dispatcher.inFlight(), 2, 'request 1 and token 8: token 7 left the window');
    h.requests.get('1')?.result.resolve(answer(200));
    await settle();
    h.requests.get('2')?.result.resolve(answer(200));
    await h.dispatcher.stop();
    assert.deepEqual(
      h.recordCalls
        .flat()
        .map((r) => [r.deliveryId, r.fencingToken])
        .sort(),
      [
        ['1', '1'],
        ['2', '8'],
      ],
    );
    assert.deepEqual(h.releaseCalls, []);
    assert.equal(h.dispatcher.inFlight(), 0);
  },
);

test(
  'hand-off: a running dispatcher offers room only for answering endpoints, within their share, and the claims ' +
    'count what is offered',
  async () => {
    const h = harness({ concurrency: 10, claimBatch: 10, endpointWindowShare: 0.5, windowReserve: 0 });
    assert.equal(h.handoff.offer(5), null, 'a stopped dispatcher offers nothing');
    h.claims.push([claimed('1', 'ep_a'), claimed('2', 'ep_b')]);
    h.dispatcher.start();
    await settle();
    assert.equal(h.handoff.offer(5), null, 'no endpoint has answered yet');
    h.requests.get('1')?.result.resolve(answer(200));
    h.requests
      .get('2')
      ?.result.resolve({ type: 'error', errorKind: 'timeout_headers', detail: 'no answer', durationMs: 5 });
    await settle();
    const first = h.handoff.offer(4);
    assert.ok(first !== null);
    assert.deepEqual(
      { ids: first.endpointIds, room: first.room, slots: first.slots },
      { ids: ['ep_a'], room: [4], slots: 4 },
      "only ep_a answered; room = the statement's messages",
    );
    const second = h.handoff.offer(4);
    assert.deepEqual(
      { room: second?.room, slots: second?.slots },
      { room: [1], slots: 1 },
      'the share (5) less what the first offer holds for ep_a',
    );
    // The claim's window and limit count the offered room as held.
    h.claims.push([]);
    await h.dispatcher.tick();
    const claim = h.claimCalls.at(-1)!;
    assert.equal(claim.limit, 10 - 4 - 1, 'free slots less the offered ones');
    assert.equal(claim.window?.held.get('ep_a'), 5);
    // The first statement leased two; its room comes back and the two run.
    h.handoff.adopt(first, [claimed('10', 'ep_a'), claimed('11', 'ep_a')]);
    h.handoff.adopt(second!, []);
    assert.ok(h.requests.has('10') && h.requests.has('11'), 'adopted deliveries are sent at once');
    assert.deepEqual(h.handoff.offer(9)?.room, [3], 'share 5 less the two running');
    h.requests.get('10')?.result.resolve(answer(200));
    h.requests.get('11')?.result.resolve(answer(200));
    await h.dispatcher.stop();
    assert.deepEqual(
      h.recordCalls
        .flat()
        .map((r) => r.deliveryId)
        .sort(),
      ['1', '10', '11', '2'],
    );
  },
);

test('hand-off: leases adopted after the stop began are released, not sent', async () => {
  const h = harness({ concurrency: 10, claimBatch: 10, endpointWindowShare: 1, windowReserve: 0 });
  h.claims.push([claimed('1', 'ep_a')]);
  h.dispatcher.start();
  await settle();
  h.requests.get('1')?.result.resolve(answer(200));
  await settle();
  const offer = h.handoff.offer(2);
  assert.ok(offer !== null);
  await h.dispatcher.stop();
  h.handoff.adopt(offer, [claimed('20', 'ep_a')]);
  await settle();
  assert.equal(h.requests.has('20'), false);
  assert.deepEqual(
    h.releaseCalls.flat().map((l) => l.deliveryId),
    ['20'],
  );
  assert.equal(h.handoff.offer(2), null, 'a stopped dispatcher offers nothing');
});

/**
 * A running dispatcher of `settings` to which `ep_a` has answered once, and whose last claim found nothing (no claim
 * owed), with `handOff` adopting deliveries of `ep_a` that a publish leased to it.
 */
async function answeredOnce(
  settings: Parameters<typeof harness>[0],
): Promise<{ h: ReturnType<typeof harness>; handOff: (...ids: string[]) => void }> {
  const h = harness(settings);
  h.claims.push([claimed('1', 'ep_a')]);
  h.dispatcher.start();
  await settle();
  h.requests.get('1')?.result.resolve(answer(200));
  await settle();
  await h.timers.advance(REFILL_DELAY_MS);
  const handOff = (...ids: string[]): void => {
    const offer = h.handoff.offer(ids.length);
    assert.ok(offer !== null);
    h.handoff.adopt(
      offer,
      ids.map((id) => claimed(id, 'ep_a')),
    );
  };
  return { h, handOff };
}

test(
  'hand-off: a slot freed by a handed-off delivery is refilled after HANDOFF_REFILL_DELAY_MS while no claim is ' +
    'owed; an owed claim comes at once',
  async () => {
    const { h, handOff } = await answeredOnce({
      concurrency: 4,
      claimBatch: 4,
      endpointWindowShare: 1,
      windowReserve: 0,
    });
    handOff('2', '3');
    const quiet = h.claimCalls.length;
    h.requests.get('2')?.result.resolve(answer(200));
    await settle();
    assert.equal(h.claimCalls.length, quiet, 'no claim at the answer of a handed-off delivery');
    await h.timers.advance(HANDOFF_REFILL_DELAY_MS - 1);
    assert.equal(h.claimCalls.length, quiet, 'nor before the delay');
    await h.timers.advance(1);
    assert.equal(h.claimCalls.length, quiet + 1, 'one claim after it (a retry may have come due meanwhile)');

    // A claim that fills its limit may have left work: the next freed slot is claimed into at once, handed off or not.
    h.claims.push([claimed('4', 'ep_b'), claimed('5', 'ep_b'), claimed('6', 'ep_b')]);
    await h.timers.advance(1000); // the poll's claim, no wake-up
    assert.equal(h.claimCalls.at(-1)?.limit, 3);
    assert.equal(h.claimCalls.at(-1)?.window?.held.get('ep_a'), 1);
    const full = h.claimCalls.length;
    h.requests.get('3')?.result.resolve(answer(200));
    await settle();
    assert.equal(h.claimCalls.length, full + 1, 'owed after a full claim: claimed at once');

    for (const id of ['4', '5', '6']) h.requests.get(id)?.result.resolve(answer(200));
    await settle();
    await h.timers.advance(REFILL_DELAY_MS);
    await h.dispatcher.stop();
  },
);

test(
  'hand-off: a publish wake-up that arrives while a claim is out keeps a claim owed, though that claim found ' +
    'nothing',
  async () => {
    const { h, handOff } = await answeredOnce({
      concurrency: 2,
      claimBatch: 2,
      endpointWindowShare: 1,
      windowReserve: 0,
    });
    // A claim is out when a publish wakes the loop and hands off two deliveries, which fill the window.
    const during = deferred<ClaimedDelivery[]>();
    h.claims.push(during.promise);
    await h.timers.advance(1000);
    h.wake?.();
    handOff('2', '3');
    during.resolve([]);
    await settle();
    // The loop's claim after the wake-up found no free slot and did not run: the claim stays owed.
    const owed = h.claimCalls.length;
    h.requests.get('2')?.result.resolve(answer(200));
    await settle();
    assert.equal(h.claimCalls.length, owed + 1, 'the freed slot is claimed into at once');
    h.requests.get('3')?.result.resolve(answer(200));
    await h.dispatcher.stop();
  },
);

test(
  'hand-off: a claim that returned rows leaves a claim owed, though it took fewer than its limit (the claim cuts ' +
    'each endpoint at its part of the batch)',
  async () => {
    // Window 2 and 4 claimed ahead: a claim of 3 into 2 open slots leaves deliveries waiting, so the loop does not
    // claim again at once.
    const { h, handOff } = await answeredOnce({
      concurrency: 2,
      claimBatch: 4,
      claimAheadCount: 4,
      endpointWindowShare: 1,
      windowReserve: 0,
    });
    handOff('2', '3');
    // The poll's claim returns 3 of 4, nothing excluded: ep_b may have more due rows than its part of the batch.
    h.claims.push([claimed('4', 'ep_b'), claimed('5', 'ep_b'), claimed('6', 'ep_c')]);
    await h.timers.advance(1000);
    assert.equal(h.claimCalls.at(-1)?.limit, 4);
    assert.deepEqual(h.claimCalls.at(-1)?.excludeEndpoints, []);
    const before = h.claimCalls.length;
    h.requests.get('2')?.result.resolve(answer(200));
    await settle();
    assert.ok(h.claimCalls.length > before, "the handed-off delivery's slot is claimed into at once");
    // Answer every request, including those that waiting deliveries open as slots free, until none is in flight.
    for (let round = 0; round < 20 && h.dispatcher.inFlight() > 0; round += 1) {
      for (const [, r] of h.requests) r.result.resolve(answer(200));
      await settle();
    }
    assert.equal(h.dispatcher.inFlight(), 0);
    await h.dispatcher.stop();
  },
);
