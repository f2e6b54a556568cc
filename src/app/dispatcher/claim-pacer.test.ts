import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualTimers, settle } from '../../../test/support/dispatcher-harness.ts';
import { ManualClock } from '../../../test/support/manual-clock.ts';
import {
  CLAIM_BACKOFF_BASE_MS,
  CLAIM_BACKOFF_MAX_MS,
  createClaimPacer,
  HANDOFF_REFILL_DELAY_MS,
  type ClaimPacer,
  type Refill,
} from './claim-pacer.ts';
import { REFILL_DELAY_MS } from './in-flight.ts';

// The pacer over manual timers: time moves only with `timers.advance`, and a wait's end is seen by awaiting it.

function pacer(random = 0.5): { p: ClaimPacer; timers: ManualTimers } {
  const timers = new ManualTimers(new ManualClock());
  return { p: createClaimPacer({ timers, clock: timers.clock, random: { next: () => random } }), timers };
}

/** Asserts that `waiting` ends after exactly `ms` of the manual clock (0: at once, before any time passes). */
async function endsAfter(waiting: Promise<void>, timers: ManualTimers, ms: number, why: string): Promise<void> {
  let ended = false;
  void waiting.then(() => {
    ended = true;
  });
  await settle();
  if (ms > 0) {
    assert.equal(ended, false, `${why}: not at once`);
    await timers.advance(ms - 1);
    assert.equal(ended, false, `${why}: not before ${ms} ms`);
    await timers.advance(1);
  }
  assert.equal(ended, true, `${why}: after ${ms} ms`);
}

/** Whether a take is owed: a pushed delivery's slot is refilled after the refill delay only while one is. */
async function isOwed(p: ClaimPacer, timers: ManualTimers): Promise<boolean> {
  p.freed('soon', true);
  let ended = false;
  const waiting = p.wait(60_000).then(() => {
    ended = true;
  });
  await timers.advance(REFILL_DELAY_MS);
  const owed = ended;
  p.interrupt();
  await waiting;
  p.stop();
  return owed;
}

/** A pacer whose take is owed or not (`owed`): a take that found nothing paid the debt of the start. */
function withOwed(owed: boolean): { p: ClaimPacer; timers: ManualTimers } {
  const made = pacer();
  made.p.taken(made.p.taking(), true);
  if (owed) made.p.owe();
  return made;
}

test(
  'freed slots: when the next take comes, by what the window ' + 'wants, who freed them and whether a take is owed',
  async () => {
    const cases: { refill: Refill; pushed: boolean; owed: boolean; lastsMs: number; why: string }[] = [
      { refill: 'now', pushed: false, owed: false, lastsMs: 0, why: 'a useful part of the window is free: at once' },
      {
        refill: 'soon',
        pushed: false,
        owed: false,
        lastsMs: REFILL_DELAY_MS,
        why: 'a few slots: after the refill delay',
      },
      {
        refill: 'soon',
        pushed: true,
        owed: false,
        lastsMs: HANDOFF_REFILL_DELAY_MS,
        why: "a pushed delivery's slot while no take is owed: the slow refill",
      },
      {
        refill: 'now',
        pushed: true,
        owed: false,
        lastsMs: HANDOFF_REFILL_DELAY_MS,
        why: 'the slow refill wins over "now" while no take is owed',
      },
      { refill: 'soon', pushed: true, owed: true, lastsMs: REFILL_DELAY_MS, why: 'a take is owed: as any freed slot' },
      { refill: 'now', pushed: true, owed: true, lastsMs: 0, why: 'a take is owed and the window wants one now' },
    ];
    for (const c of cases) {
      const { p, timers } = withOwed(c.owed);
      const waiting = p.wait(10_000);
      p.freed(c.refill, c.pushed);
      await endsAfter(waiting, timers, c.lastsMs, c.why);
    }
  },
);

test('the refill timer: one armed at most; a sooner refill brings it forward, a later one leaves it', async () => {
  const { p, timers } = withOwed(false);
  const waiting = p.wait(10_000);
  p.freed('soon', true); // 100 ms
  p.freed('soon', false); // 10 ms: sooner
  p.freed('soon', true); // 100 ms: later, left
  await endsAfter(waiting, timers, REFILL_DELAY_MS, 'the sooner refill');
  assert.equal(timers.armed(), 0, 'the timer fired once and nothing else is armed');
  p.freed('soon');
  p.stop();
  assert.equal(timers.armed(), 0, 'stop disarms it');
});

test(
  'a take is owed by the start, a wake-up, a hand-back or a failure, and paid only by a take that found nothing ' +
    'uncut with nothing owed meanwhile',
  async () => {
    const cases: { steps: (p: ClaimPacer) => void; owed: boolean; why: string }[] = [
      { steps: () => undefined, owed: true, why: 'at the start' },
      { steps: (p) => p.taken(p.taking(), true), owed: false, why: 'a take that found nothing, uncut' },
      { steps: (p) => p.taken(p.taking(), false), owed: true, why: 'a take that found work or was cut' },
      {
        steps: (p) => {
          const t = p.taking();
          p.woken();
          p.taken(t, true);
        },
        owed: true,
        why: 'a wake-up during the take keeps it owed',
      },
      {
        steps: (p) => {
          const t = p.taking();
          p.owe();
          p.taken(t, true);
        },
        owed: true,
        why: 'a hand-back during the take keeps it owed',
      },
      {
        steps: (p) => {
          p.taken(p.taking(), true);
          p.woken();
        },
        owed: true,
        why: 'a wake-up after it',
      },
      {
        steps: (p) => {
          p.taken(p.taking(), true);
          p.failed();
        },
        owed: true,
        why: 'a failed take',
      },
      {
        steps: (p) => {
          p.taken(p.taking(), true);
          p.owe();
          p.taken(p.taking(), true);
        },
        owed: false,
        why: 'owed, then paid by the next empty take',
      },
    ];
    for (const c of cases) {
      const { p, timers } = pacer();
      c.steps(p);
      assert.equal(await isOwed(p, timers), c.owed, c.why);
    }
  },
);

test(
  'the back-off after failed takes doubles from the base to the cap, jittered by the random source; a success ' +
    'starts it over',
  () => {
    const cases: { random: number; failures: number; delayMs: number }[] = [
      { random: 0.5, failures: 1, delayMs: CLAIM_BACKOFF_BASE_MS * 2 },
      { random: 0.5, failures: 2, delayMs: CLAIM_BACKOFF_BASE_MS * 4 },
      { random: 0.5, failures: 6, delayMs: CLAIM_BACKOFF_MAX_MS },
      { random: 0.5, failures: 40, delayMs: CLAIM_BACKOFF_MAX_MS },
      { random: 0, failures: 1, delayMs: CLAIM_BACKOFF_BASE_MS },
      { random: 0.999, failures: 6, delayMs: Math.round(CLAIM_BACKOFF_MAX_MS * 1.499) },
    ];
    for (const c of cases) {
      const { p } = pacer(c.random);
      let delayMs = 0;
      for (let i = 0; i < c.failures; i += 1) delayMs = p.failed();
      assert.equal(delayMs, c.delayMs, `random ${c.random}, ${c.failures} failures`);
    }
    const { p } = pacer();
    p.failed();
    p.failed();
    p.succeeded();
    assert.equal(p.failed(), CLAIM_BACKOFF_BASE_MS * 2, 'after a success the next failure backs off from the start');
  },
);

test(
  'waits: a wake-up ends the poll, or the next one if none is waiting; clearWoken forgets it; a back-off ends ' +
    'only at its time or an interrupt',
  async () => {
    const cases: {
      name: string;
      before: (p: ClaimPacer) => void;
      during: (p: ClaimPacer) => void;
      backOff: boolean;
      lastsMs: number;
    }[] = [
      { name: 'poll, nothing', before: () => undefined, during: () => undefined, backOff: false, lastsMs: 10_000 },
      {
        name: 'poll, a wake-up during it',
        before: () => undefined,
        during: (p) => p.woken(),
        backOff: false,
        lastsMs: 0,
      },
      {
        name: 'poll, a wake-up before it',
        before: (p) => p.woken(),
        during: () => undefined,
        backOff: false,
        lastsMs: 0,
      },
      {
        name: 'poll, a wake-up before it, then cleared',
        before: (p) => {
          p.woken();
          p.clearWoken();
        },
        during: () => undefined,
        backOff: false,
        lastsMs: 10_000,
      },
      { name: 'poll, an interrupt', before: () => undefined, during: (p) => p.interrupt(), backOff: false, lastsMs: 0 },
      {
        name: 'back-off, a wake-up before it',
        before: (p) => p.woken(),
        during: () => undefined,
        backOff: true,
        lastsMs: 10_000,
      },
      {
        name: 'back-off, a wake-up and freed slots during it',
        before: () => undefined,
        during: (p) => {
          p.woken();
          p.freed('now');
        },
        backOff: true,
        lastsMs: 10_000,
      },
      {
        name: 'back-off, an interrupt',
        before: () => undefined,
        during: (p) => p.interrupt(),
        backOff: true,
        lastsMs: 0,
      },
    ];
    for (const c of cases) {
      const { p, timers } = pacer();
      c.before(p);
      const waiting = c.backOff ? p.backOff(10_000) : p.wait(10_000);
      assert.equal(p.backingOff(), c.backOff, c.name);
      c.during(p);
      await endsAfter(waiting, timers, c.lastsMs, c.name);
      assert.equal(p.backingOff(), false, `${c.name}: no back-off once it ended`);
    }
  },
);
