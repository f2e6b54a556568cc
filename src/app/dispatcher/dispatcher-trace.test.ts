import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SendResult } from '../../domain/attempt-outcome.ts';
import type { ClaimedDelivery, DeliveryStore } from '../../ports/delivery-store.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Sender } from '../../ports/sender.ts';
import { NOOP_DELIVERY_TRACE, NOOP_TRACER, type DeliveryTrace, type Tracer } from '../../ports/tracer.ts';
import { createDispatcher } from './dispatcher.ts';

const delivery: ClaimedDelivery = {
  deliveryId: '1',
  fencingToken: '7',
  dispatcherId: 'w',
  appId: 'app_1',
  messageId: 'msg_1',
  endpointId: 'ep_1',
  eventType: 't',
  attemptNumber: 1,
  manual: false,
  reclaimed: false,
  url: 'http://127.0.0.1:9/hook',
  payload: Buffer.from('{}'),
  signingKeys: [Buffer.alloc(24, 1)],
  headers: {},
};

const quiet: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  child: () => quiet,
} as unknown as Logger;

/** A tracer that writes down every call of its delivery traces, in order. */
function recordingTracer(): { tracer: Tracer; calls: string[] } {
  const calls: string[] = [];
  const trace: DeliveryTrace = {
    attemptStarted: () => calls.push('attemptStarted'),
    attemptEnded: (result) => calls.push(`attemptEnded:${result.type}`),
    leaseLost: () => calls.push('leaseLost'),
    recorded: (next, recorded) => calls.push(`recorded:${next.next}:${recorded}`),
    end: () => calls.push('end'),
  };
  return {
    calls,
    tracer: {
      enabled: true,
      activeContext: () => null,
      startDelivery: (d) => (calls.push(`start:${d.deliveryId}`), trace),
    },
  };
}

/** A store with one delivery to claim, whose record and heartbeat answers the test chooses. */
function store(answers: { fenced: boolean; lost: boolean }): DeliveryStore {
  let claimed = false;
  return {
    claim: async () => {
      const deliveries = claimed ? [] : [delivery];
      claimed = true;
      return { deliveries, reclaimed: 0, deadLettered: 0 };
    },
    extendLeases: async (leases) => (answers.lost ? leases.map((l) => l.deliveryId) : []),
    releaseLeases: async () => [],
    recordAttempts: async (records) =>
      answers.fenced
        ? { recorded: [], fencedOut: records.map((r) => r.deliveryId) }
        : { recorded: records.map((r) => r.deliveryId), fencedOut: [] },
  };
}

const ok: SendResult = {
  type: 'response',
  statusCode: 200,
  location: null,
  retryAfter: null,
  bodyPrefix: '',
  bodyError: null,
  durationMs: 1,
};

function dispatcherWith(s: DeliveryStore, sender: Sender, tracer: Tracer) {
  return createDispatcher({
    store: s,
    sender,
    clock: { nowMs: () => 1_700_000_000_000, sqlNow: () => null },
    random: { next: () => 0.5 },
    logger: quiet,
    tracer,
    settings: {
      dispatcherId: 'w',
      concurrency: 4,
      claimBatch: 4,
      leaseMs: 60_000,
      maxReclaims: 5,
      pollIntervalMs: 1000,
      shutdownGraceMs: 0,
      retryPolicy: { delaysMs: [1000], jitter: 0, retryAfterMinMs: 0, retryAfterMaxMs: 0 },
    },
  });
}

test("a delivery's trace sees its attempt start and end, then the record, then its end", async () => {
  const { tracer, calls } = recordingTracer();
  const d = dispatcherWith(
    store({ fenced: false, lost: false }),
    { send: async () => ok, close: async () => undefined },
    tracer,
  );
  assert.equal(await d.tick(), 1);
  await d.drained();
  assert.deepEqual(calls, ['start:1', 'attemptStarted', 'attemptEnded:response', 'recorded:succeeded:true', 'end']);
});

test("an outcome fenced out by a newer lease is told to the delivery's trace as not recorded", async () => {
  const { tracer, calls } = recordingTracer();
  const d = dispatcherWith(
    store({ fenced: true, lost: false }),
    { send: async () => ok, close: async () => undefined },
    tracer,
  );
  await d.tick();
  await d.drained();
  assert.deepEqual(calls, ['start:1', 'attemptStarted', 'attemptEnded:response', 'recorded:succeeded:false', 'end']);
});

test("a lease lost by the heartbeat is told to the delivery's trace, which ends without a record", async () => {
  const { tracer, calls } = recordingTracer();
  const sender: Sender = {
    // The attempt lasts until the heartbeat aborts it.
    send: (_request, signal) =>
      new Promise((resolve) =>
        signal?.addEventListener('abort', () =>
          resolve({ type: 'error', errorKind: 'deadline', detail: 'aborted', durationMs: 1 } as SendResult),
        ),
      ),
    close: async () => undefined,
  };
  const d = dispatcherWith(store({ fenced: false, lost: true }), sender, tracer);
  await d.tick();
  assert.deepEqual(await d.heartbeat(), ['1']);
  await d.drained();
  assert.deepEqual(calls, ['start:1', 'attemptStarted', 'leaseLost', 'attemptEnded:error', 'end']);
});

test('the no-op tracer hands every delivery the same frozen trace: nothing is allocated per delivery', () => {
  assert.equal(NOOP_TRACER.enabled, false);
  assert.equal(NOOP_TRACER.activeContext(), null);
  assert.equal(NOOP_TRACER.startDelivery(delivery), NOOP_DELIVERY_TRACE);
  assert.equal(NOOP_TRACER.startDelivery({ ...delivery, deliveryId: '2' }), NOOP_DELIVERY_TRACE);
  assert.ok(Object.isFrozen(NOOP_DELIVERY_TRACE));
});
