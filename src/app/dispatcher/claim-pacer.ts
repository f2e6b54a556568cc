import type { Clock, Random } from '../../ports/clock.ts';
import { REFILL_DELAY_MS } from './in-flight.ts';
import type { LoopTimers } from './loop-timers.ts';

/**
 * Back-off after a failed claim, in ms: `min(CLAIM_BACKOFF_MAX_MS, CLAIM_BACKOFF_BASE_MS · 2^failures)`, each
 * delay jittered to [0.5, 1.5]× that. The cap is short so that a dispatcher resumes within seconds of the
 * database coming back, however long the outage was.
 */
export const CLAIM_BACKOFF_BASE_MS = 100;
/** Upper bound of the claim back-off before jitter, in ms (see {@link CLAIM_BACKOFF_BASE_MS}). */
export const CLAIM_BACKOFF_MAX_MS = 5_000;

/**
 * Delay, in ms, of the claim that refills slots freed by deliveries a publish handed off (ADR 0018), while no claim is
 * owed: the last claim found nothing, was cut by no endpoint's share nor by the reserve, and no publish wake-up,
 * hand-back or failed claim came since it started. Such a claim can only find what time made claimable (a retry come
 * due, a rate limit's tokens, a throttle or breaker ended), so it comes at most this often instead of after every
 * answer (REFILL_DELAY_MS); a claim that is owed comes as before (docs/adr/0016-hot-path-cost.md, decision 22).
 */
export const HANDOFF_REFILL_DELAY_MS = 100;

/** How the window wants freed slots refilled (in-flight.ts): a take at once, or after REFILL_DELAY_MS. */
export type Refill = 'now' | 'soon';

/**
 * When the dispatcher's next take runs. The loop waits for the first of: a **wake** (a source's wake-up, or freed slots
 * that want a take at once), the **refill** timer (a few slots freed: REFILL_DELAY_MS, or HANDOFF_REFILL_DELAY_MS for a
 * pushed delivery's slot while no take is owed), the **poll** (`wait(ms)`); after a failed take the **back-off**
 * (`backOff(ms)`), which only `interrupt` ends early. A take is **owed** when it may find what the takes since have not
 * looked for: at the start, after a wake-up, a hand-back or a failed take, and after a take that found work or was cut
 * by the window; one that found nothing uncut pays it, unless something owed one while it ran.
 */
export interface ClaimPacer {
  /** Something a take may find happened (a lease handed back, the start): a take is owed. */
  owe(): void;
  /** A source's wake-up (a publish): a take is owed and the wait ends, unless it is a back-off. */
  woken(): void;
  /** Ends the loop's wait at once, a back-off included (the stop). */
  interrupt(): void;
  /** Slots were freed, by a delivery a source pushed or not: a wake now, or the refill timer; none in a back-off. */
  freed(refill: Refill, pushed?: boolean): void;
  /** A take starts; returns its ticket for {@link ClaimPacer.taken}. */
  taking(): number;
  /** The take of `ticket` returned; `tookAll`: it found nothing, and neither a share nor the reserve cut it. */
  taken(ticket: number, tookAll: boolean): void;
  /** A take went through the loop without failing: the back-off starts over. */
  succeeded(): void;
  /** A take failed: a take is owed; returns the back-off to wait out, ms (doubling per failure, jittered). */
  failed(): number;
  /** Forgets wake-ups that came before now: the take about to start sees everything committed before it. */
  clearWoken(): void;
  /** Waits for a wake or `ms` (the poll), whichever comes first; a wake since `clearWoken` ends it at once. */
  wait(ms: number): Promise<void>;
  /** Waits out a back-off of `ms`; wake-ups and freed slots do not end it, `interrupt` does. */
  backOff(ms: number): Promise<void>;
  /** True while a back-off is waited out. */
  backingOff(): boolean;
  /** Disarms the refill timer. */
  stop(): void;
}

/** Dependencies of {@link createClaimPacer}. */
export interface ClaimPacerDeps {
  readonly timers: LoopTimers;
  readonly clock: Pick<Clock, 'nowMs'>;
  readonly random: Random;
}

/** Makes the pacer of one dispatcher's loop (see {@link ClaimPacer}). */
export function createClaimPacer(deps: ClaimPacerDeps): ClaimPacer {
  const waker = createWaker(deps.timers);
  const refill = createRefillTimer(deps, () => waker.wake());
  // Whether a take is owed, and a count of what owed one, so that one owed while a take runs keeps it owed.
  let owed = true;
  let owedSignals = 0;
  // Takes failed in a row, and whether their back-off is being waited out.
  let failures = 0;
  let backingOff = false;
  const owe = (): void => {
    owed = true;
    owedSignals += 1;
  };
  return {
    owe,
    woken() {
      owe();
      if (!backingOff) waker.wake();
    },
    interrupt: () => waker.wake(),
    freed(how, pushed = false) {
      if (backingOff) return;
      // A pushed delivery's slot, while no take is owed, is refilled by the slow timer whatever the window wants.
      const slow = pushed && !owed;
      if (how === 'now' && !slow) waker.wake();
      else refill.arm(slow ? HANDOFF_REFILL_DELAY_MS : REFILL_DELAY_MS);
    },
    taking: () => owedSignals,
    taken(ticket, tookAll) {
      if (!tookAll) owed = true;
      else if (owedSignals === ticket) owed = false;
    },
    succeeded() {
      failures = 0;
    },
    failed() {
      failures += 1;
      owe();
      const delayMs = Math.min(CLAIM_BACKOFF_MAX_MS, CLAIM_BACKOFF_BASE_MS * 2 ** Math.min(failures, 16));
      return Math.round(delayMs * (0.5 + deps.random.next()));
    },
    clearWoken: () => waker.clear(),
    wait: (ms) => waker.wait(ms),
    async backOff(ms) {
      backingOff = true;
      waker.clear(); // a wake-up during the failed take does not end its back-off either
      try {
        await waker.wait(ms);
      } finally {
        backingOff = false;
      }
    },
    backingOff: () => backingOff,
    stop: () => refill.cancel(),
  };
}

/**
 * The loop's wait: `wait(ms)` resolves at a `wake()` or after `ms`. A wake while nothing waits is remembered, so the
 * next wait returns at once instead of sleeping through work that came meanwhile; `clear()` forgets it.
 */
function createWaker(timers: LoopTimers): { wait(ms: number): Promise<void>; wake(): void; clear(): void } {
  let woken = false;
  let endWait: (() => void) | undefined;
  return {
    wait: (ms) =>
      new Promise((resolve) => {
        if (woken) {
          woken = false;
          resolve();
          return;
        }
        const cancel = timers.after(ms, () => {
          endWait = undefined;
          resolve();
        });
        endWait = () => {
          cancel();
          resolve();
        };
      }),
    wake() {
      const end = endWait;
      endWait = undefined;
      if (end === undefined) woken = true;
      else end();
    },
    clear() {
      woken = false;
    },
  };
}

/**
 * The refill timer: one armed at most; arming it sooner brings it forward, later leaves it. Weak: it keeps no process
 * alive.
 */
function createRefillTimer(
  deps: Pick<ClaimPacerDeps, 'timers' | 'clock'>,
  fire: () => void,
): { arm(delayMs: number): void; cancel(): void } {
  // When the armed timer fires, ms of the clock (Infinity: none armed), and how to disarm it.
  let firesAtMs = Number.POSITIVE_INFINITY;
  let disarm: (() => void) | undefined;
  const cancel = (): void => {
    disarm?.();
    disarm = undefined;
    firesAtMs = Number.POSITIVE_INFINITY;
  };
  return {
    arm(delayMs) {
      const atMs = deps.clock.nowMs() + delayMs;
      if (disarm !== undefined && firesAtMs <= atMs) return;
      disarm?.();
      firesAtMs = atMs;
      disarm = deps.timers.after(
        delayMs,
        () => {
          disarm = undefined;
          firesAtMs = Number.POSITIVE_INFINITY;
          fire();
        },
        true,
      );
    },
    cancel,
  };
}
