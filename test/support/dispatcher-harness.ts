import { deferred, type Deferred } from './deferred.ts';
import { ManualClock } from './manual-clock.ts';
import type { SendResult } from '../../src/domain/attempt-outcome.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/domain/retry-schedule.ts';
import type {
  AttemptRecord,
  ClaimedDelivery,
  ClaimInput,
  ClaimResult,
  DeliveryStore,
  LeaseRef,
  RecordResult,
} from '../../src/ports/delivery-store.ts';
import type { Logger } from '../../src/ports/logger.ts';
import type { Sender } from '../../src/ports/sender.ts';
import type { WorkSource } from '../../src/ports/work-source.ts';
import { createDispatcher, type Dispatcher, type DispatcherSettings } from '../../src/app/dispatcher/dispatcher.ts';
import type { LoopTimers } from '../../src/app/dispatcher/loop-timers.ts';
import { createClaimSource } from '../../src/app/dispatcher/claim-source.ts';
import { createHandoffSource, type HandoffSource } from '../../src/app/dispatcher/handoff-source.ts';

/*
 * Fake ports for the dispatcher's unit tests: the store's calls are plain functions the test scripts, the
 * sender answers when the test says so, and time moves only with a manual clock whose timers the test fires.
 * No database, no socket, no sleep.
 */

/** Timers on a {@link ManualClock}: they fire, in due order, only inside {@link ManualTimers.advance}. */
export class ManualTimers implements LoopTimers {
  readonly clock: ManualClock;
  #seq = 0;
  #timers: { id: number; at: number; fn: () => void; everyMs: number | null }[] = [];

  constructor(clock: ManualClock) {
    this.clock = clock;
  }

  after(ms: number, fn: () => void): () => void {
    return this.#add(ms, fn, null);
  }

  every(ms: number, fn: () => void): () => void {
    return this.#add(ms, fn, ms);
  }

  /** Timers armed now. */
  armed(): number {
    return this.#timers.length;
  }

  /** Moves the clock forward by `ms`, firing each timer that falls due (and letting its work run) on the way. */
  async advance(ms: number): Promise<void> {
    const end = this.clock.nowMs() + ms;
    for (;;) {
      const next = this.#timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (next === undefined) break;
      this.clock.set(next.at);
      if (next.everyMs === null) this.#timers = this.#timers.filter((t) => t !== next);
      else next.at += next.everyMs;
      next.fn();
      await settle();
    }
    this.clock.set(end);
    await settle();
  }

  #add(ms: number, fn: () => void, everyMs: number | null): () => void {
    const timer = { id: this.#seq++, at: this.clock.nowMs() + ms, fn, everyMs };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }
}

/** Lets every promise chain that can move on do so (event-loop turns, not time). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A claimed delivery of `endpointId` (message id `msg_<id>`). */
export function claimed(id: string, endpointId = `ep_${id}`, fencingToken = '1'): ClaimedDelivery {
  return {
    deliveryId: id,
    fencingToken,
    dispatcherId: 'w1',
    appId: 'app_1',
    messageId: `msg_${id}`,
    endpointId,
    eventType: 'invoice.paid',
    attemptNumber: 1,
    manual: false,
    reclaimed: false,
    url: `http://127.0.0.1:9/${id}`,
    payload: Buffer.from('{}'),
    signingKeys: [Buffer.from('key')],
    headers: {},
  };
}

/** A status line `status` after `durationMs`. */
export function answer(status: number, durationMs = 5): SendResult {
  return {
    type: 'response',
    statusCode: status,
    location: null,
    retryAfter: null,
    bodyPrefix: '',
    bodyError: null,
    durationMs,
  };
}

/** One captured log line. */
export interface Line {
  readonly level: string;
  readonly obj: Record<string, unknown>;
  readonly msg: string | undefined;
}

/** Everything a test steers and reads. */
export interface Harness {
  readonly dispatcher: Dispatcher;
  /** The publish hand-off, the dispatcher's second source: offer and adopt as a publish statement does. */
  readonly handoff: HandoffSource;
  readonly timers: ManualTimers;
  /**
   * Claim answers, in order: a list of deliveries, an error to throw, or a promise of either (a claim held open).
   * Empty: an empty claim.
   */
  readonly claims: (readonly ClaimedDelivery[] | Error | Promise<readonly ClaimedDelivery[]>)[];
  readonly claimCalls: ClaimInput[];
  readonly recordCalls: AttemptRecord[][];
  readonly releaseCalls: LeaseRef[][];
  /** What the next heartbeat reports lost. */
  lost: string[];
  /** While set, every heartbeat statement waits for it (a slow lease renewal). */
  extendGate: Promise<void> | undefined;
  /** While set, every record statement throws it (a database that cannot be written). */
  recordError: Error | undefined;
  /** While set, every record statement waits for it (a slow write). */
  recordGate: Promise<void> | undefined;
  /** The request of each delivery, by delivery id: settle it with the attempt's result. */
  readonly requests: Map<string, { readonly result: Deferred<SendResult>; readonly signal: AbortSignal | undefined }>;
  readonly lines: Line[];
  /** The wake-up listener the dispatcher subscribed, once started. */
  wake: (() => void) | undefined;
}

/**
 * Makes a dispatcher over fake ports. `settings` override small defaults (window 4, poll 1 s, grace 5 s). Its sources
 * are the claim (over the fake store, woken by `wake`), the hand-off, then `moreSources`.
 */
export function harness(settings: Partial<DispatcherSettings> = {}, moreSources: readonly WorkSource[] = []): Harness {
  const timers = new ManualTimers(new ManualClock());
  const lines: Line[] = [];
  const logger: Logger = {
    debug: (obj, msg) => lines.push({ level: 'debug', obj: obj as Record<string, unknown>, msg }),
    info: (obj, msg) => lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg }),
    child: () => logger,
  };
  const h: Omit<Harness, 'dispatcher' | 'handoff'> = {
    timers,
    claims: [],
    claimCalls: [],
    recordCalls: [],
    releaseCalls: [],
    lost: [],
    extendGate: undefined,
    recordError: undefined,
    recordGate: undefined,
    requests: new Map(),
    lines,
    wake: undefined,
  };
  const store: DeliveryStore = {
    async claim(input): Promise<ClaimResult> {
      h.claimCalls.push(input);
      const next = await (h.claims.shift() ?? []);
      if (next instanceof Error) throw next;
      return { deliveries: next, reclaimed: 0, deadLettered: 0 };
    },
    async extendLeases(leases) {
      if (h.extendGate !== undefined) await h.extendGate;
      const lost = h.lost.filter((id) => leases.some((l) => l.deliveryId === id));
      h.lost = [];
      return lost;
    },
    async releaseLeases(leases) {
      h.releaseCalls.push([...leases]);
      return [];
    },
    async recordAttempts(records): Promise<RecordResult> {
      h.recordCalls.push([...records]);
      if (h.recordGate !== undefined) await h.recordGate;
      if (h.recordError !== undefined) throw h.recordError;
      return { recorded: records.map((r) => r.deliveryId), fencedOut: [] };
    },
  };
  const sender: Sender = {
    send(request, signal) {
      const id = (request.headers['webhook-id'] ?? '').replace(/^msg_/, '');
      const result = deferred<SendResult>();
      // Like the HTTP sender: an abort ends the request with a `deadline` error.
      signal?.addEventListener('abort', () =>
        result.resolve({ type: 'error', errorKind: 'deadline', detail: 'aborted', durationMs: 1 }),
      );
      h.requests.set(id, { result, signal });
      return result.promise;
    },
    close: async () => undefined,
  };
  const all: DispatcherSettings = {
    dispatcherId: 'w1',
    concurrency: 4,
    claimBatch: 100,
    leaseMs: 30_000,
    maxReclaims: 3,
    pollIntervalMs: 1000,
    shutdownGraceMs: 5000,
    retryPolicy: DEFAULT_RETRY_POLICY,
    ...settings,
  };
  const onWake = (listener: () => void): (() => void) => {
    h.wake = listener;
    return () => {
      h.wake = undefined;
    };
  };
  const handoff = createHandoffSource();
  const claim = createClaimSource(store, { clock: timers.clock, sweepEveryMs: all.pollIntervalMs, onWake });
  const dispatcher = createDispatcher({
    store,
    sources: [claim, handoff, ...moreSources],
    sender,
    clock: timers.clock,
    random: { next: () => 0.5 },
    logger,
    timers,
    settings: all,
  });
  return Object.assign(h, { dispatcher, handoff });
}
