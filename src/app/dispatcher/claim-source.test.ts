import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../../test/support/manual-clock.ts';
import type { ClaimInput } from '../../ports/delivery-store.ts';
import type { TakeRequest, WorkSink } from '../../ports/work-source.ts';
import { createClaimSource } from './claim-source.ts';

const request: TakeRequest = {
  dispatcherId: 'w1',
  limit: 7,
  excludeEndpoints: ['ep_full'],
  window: { share: 2, held: new Map(), answering: [], unresponsive: [], budget: 7 },
  leaseMs: 30_000,
  maxReclaims: 5,
  now: null,
};

/** A claim source over a store that writes down each claim; `fail` makes the next claim throw. */
function source(sweepEveryMs = 1000) {
  const clock = new ManualClock();
  const calls: ClaimInput[] = [];
  const state = { fail: false };
  const claim = createClaimSource(
    {
      async claim(input) {
        calls.push(input);
        if (state.fail) throw new Error('connection refused');
        return { deliveries: [], reclaimed: 0, deadLettered: 0 };
      },
    },
    { clock, sweepEveryMs },
  );
  return { claim, clock, calls, state };
}

test("a take is one claim with the request's bounds, lease and time", async () => {
  const { claim, calls } = source();
  await claim.take!(request);
  const { sweep: _sweep, ...rest } = calls[0]!;
  assert.deepEqual(rest, {
    dispatcherId: 'w1',
    excludeEndpoints: ['ep_full'],
    limit: 7,
    window: request.window,
    leaseMs: 30_000,
    maxReclaims: 5,
    now: null,
  });
});

test(
  'the sweep runs at the first claim and then at most once per interval; a failed claim does not count as one; a ' +
    'clock moved back sweeps',
  async () => {
    // Each step: move the clock by `advanceMs`, then claim (failing or not); `sweep` is what that claim was asked.
    const steps: { advanceMs?: number; setMs?: number; fail?: boolean; sweep: boolean; why: string }[] = [
      { sweep: true, why: 'the first claim sweeps' },
      { advanceMs: 999, sweep: false, why: 'within the interval' },
      { advanceMs: 1, sweep: true, why: 'an interval after the last sweep' },
      { advanceMs: 1000, fail: true, sweep: true, why: 'a failed claim asked to sweep' },
      { sweep: true, why: 'and the next claim sweeps again, the failed one not counted' },
      { advanceMs: 10, sweep: false, why: 'within the interval again' },
      { setMs: 0, sweep: true, why: 'a clock moved back' },
    ];
    const { claim, clock, calls, state } = source(1000);
    for (const step of steps) {
      if (step.advanceMs !== undefined) clock.advance(step.advanceMs);
      if (step.setMs !== undefined) clock.set(step.setMs);
      state.fail = step.fail === true;
      await claim.take!(request).catch(() => undefined);
      assert.equal(calls.at(-1)?.sweep, step.sweep, step.why);
    }
  },
);

test('connected, its wake-ups are the publish wake-ups; disconnected, none', () => {
  let listener: (() => void) | undefined;
  const claim = createClaimSource(
    { claim: async () => ({ deliveries: [], reclaimed: 0, deadLettered: 0 }) },
    {
      clock: new ManualClock(),
      sweepEveryMs: 1000,
      onWake: (l) => {
        listener = l;
        return () => {
          listener = undefined;
        };
      },
    },
  );
  let woken = 0;
  const sink: WorkSink = {
    wake: () => {
      woken += 1;
    },
    yours: () => undefined,
    room: () => null,
  };
  const disconnect = claim.connect!(sink);
  listener?.();
  assert.equal(woken, 1);
  disconnect();
  assert.equal(listener, undefined);
  assert.doesNotThrow(() =>
    createClaimSource(
      { claim: async () => ({ deliveries: [], reclaimed: 0, deadLettered: 0 }) },
      { clock: new ManualClock(), sweepEveryMs: 1 },
    ).connect!(sink)(),
  );
});
