import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answer, claimed, ManualTimers, settle } from '../../../test/support/dispatcher-harness.ts';
import { deferred, type Deferred } from '../../../test/support/deferred.ts';
import { ManualClock } from '../../../test/support/manual-clock.ts';
import type { SendResult } from '../../domain/attempt-outcome.ts';
import { DEFAULT_RETRY_POLICY } from '../../domain/retry-schedule.ts';
import type { ClaimedDelivery, LeaseRef } from '../../ports/delivery-store.ts';
import type { Logger } from '../../ports/logger.ts';
import { NOOP_TRACER } from '../../ports/tracer.ts';
import type { WorkSource } from '../../ports/work-source.ts';
import type { Refill } from './claim-pacer.ts';
import type { DispatcherSettings } from './dispatcher-types.ts';
import { FlightRunner } from './flight-runner.ts';
import { createInFlightWindow } from './in-flight.ts';
import { createWindowBook } from './window.ts';

// The flight runner over fakes: the sender and the recorder answer when the test says so, the pacer and the source
// write down what they are told, and time moves only with a manual clock.

function runner(settings: Partial<DispatcherSettings> = {}) {
  const timers = new ManualTimers(new ManualClock());
  const all: DispatcherSettings = {
    dispatcherId: 'w1',
    concurrency: 4,
    claimBatch: 4,
    leaseMs: 30_000,
    maxReclaims: 3,
    pollIntervalMs: 1000,
    shutdownGraceMs: 5000,
    retryPolicy: DEFAULT_RETRY_POLICY,
    endpointWindowShare: 1,
    windowReserve: 0,
    ...settings,
  };
  const book = createWindowBook(all);
  const window = createInFlightWindow(all, (id, open) => book.mayStart(id, open));
  const requests = new Map<string, Deferred<SendResult>>();
  const records = new Map<string, Deferred<boolean>>();
  const heard = { freed: [] as [Refill, boolean][], owed: 0, released: [] as LeaseRef[][], lost: [] as string[] };
  const settled: [string, boolean][] = [];
  const quiet: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
    child: () => quiet,
  };
  const source: WorkSource = { name: 'test', settled: (d, recorded) => settled.push([d.deliveryId, recorded]) };
  const run = new FlightRunner({
    store: {
      extendLeases: async (leases) => leases.map((l) => l.deliveryId).filter((id) => heard.lost.includes(id)),
      releaseLeases: async (leases) => {
        heard.released.push([...leases]);
        return [];
      },
    },
    sender: {
      send: (request, signal) => {
        const result = deferred<SendResult>();
        signal?.addEventListener('abort', () =>
          result.resolve({ type: 'error', errorKind: 'deadline', detail: 'aborted', durationMs: 1 }),
        );
        requests.set((request.headers['webhook-id'] ?? '').replace(/^msg_/, ''), result);
        return result.promise;
      },
      close: async () => undefined,
    },
    clock: timers.clock,
    random: { next: () => 0.5 },
    settings: all,
    timers,
    window,
    book,
    recorder: {
      record: (r) => {
        const d = deferred<boolean>();
        records.set(r.deliveryId, d);
        return d.promise;
      },
      retryNow: () => undefined,
      giveUpOnFailure: () => undefined,
      close: () => undefined,
    },
    pacer: {
      freed: (refill, pushed = false) => heard.freed.push([refill, pushed]),
      owe: () => {
        heard.owed += 1;
      },
    },
    tracer: NOOP_TRACER,
    observer: {},
    loggers: { logger: quiet, attemptLogger: quiet },
    storeFailed: () => undefined,
  });
  const launch = (d: ClaimedDelivery, pushed = false, leaseUntilMs = timers.clock.nowMs() + all.leaseMs) =>
    run.launch(d, leaseUntilMs, { source, pushed });
  return { run, launch, timers, window, requests, records, heard, settled };
}

test(
  'a flight tells the pacer when its slot frees, saying whether its source pushed it, and its source when its ' +
    'record settled',
  async () => {
    const cases: {
      pushed: boolean;
      end: 'recorded' | 'fenced' | 'lease lost';
      freed: boolean[];
      settled: [string, boolean][];
    }[] = [
      { pushed: false, end: 'recorded', freed: [false, false], settled: [['1', true]] },
      { pushed: true, end: 'recorded', freed: [true, true], settled: [['1', true]] },
      { pushed: true, end: 'fenced', freed: [true, true], settled: [['1', false]] },
      { pushed: false, end: 'lease lost', freed: [false, false], settled: [] },
    ];
    for (const c of cases) {
      const r = runner();
      r.launch(claimed('1'), c.pushed);
      if (c.end === 'lease lost') {
        r.heard.lost.push('1');
        assert.deepEqual(await r.run.renewLeases(), ['1']);
      } else r.requests.get('1')?.resolve(answer(200));
      await settle();
      r.records.get('1')?.resolve(c.end === 'recorded');
      await settle();
      assert.deepEqual(
        r.heard.freed.map(([, pushed]) => pushed),
        c.freed,
        `${c.end}, pushed ${c.pushed}: answered, then finished`,
      );
      assert.deepEqual(r.settled, c.settled, `${c.end}, pushed ${c.pushed}`);
      assert.equal(r.window.size(), 0);
    }
  },
);

test(
  'a waiting delivery whose lease ran too short is handed back: a take is owed, its lease released with its ' +
    'token, and the pacer told',
  async () => {
    const r = runner({ concurrency: 1, claimAheadCount: 1, attemptDeadlineMs: 15_000 });
    r.launch(claimed('1', 'ep_a'));
    r.launch(claimed('2', 'ep_a', '7'));
    await r.timers.advance(14_001);
    r.requests.get('1')?.resolve(answer(200));
    await settle();
    assert.equal(r.requests.has('2'), false);
    assert.equal(r.heard.owed, 1);
    assert.deepEqual(
      r.heard.released.flat().map((l) => [l.deliveryId, l.fencingToken]),
      [['2', '7']],
    );
    r.records.get('1')?.resolve(true);
    await settle();
    assert.equal(r.window.size(), 0);
  },
);

test('the drain: within the grace period nothing is released; past it the rest is aborted and released', async () => {
  const cases: { answerWithinGrace: boolean; released: string[] }[] = [
    { answerWithinGrace: true, released: [] },
    { answerWithinGrace: false, released: ['1'] },
  ];
  for (const c of cases) {
    const r = runner();
    r.launch(claimed('1'));
    const drained = r.run.drain(5000);
    if (c.answerWithinGrace) {
      r.requests.get('1')?.resolve(answer(200));
      await settle();
      r.records.get('1')?.resolve(true);
    } else await r.timers.advance(5000);
    await drained;
    assert.deepEqual(
      r.heard.released.flat().map((l) => l.deliveryId),
      c.released,
    );
    assert.equal(r.window.size(), 0);
  }
});
