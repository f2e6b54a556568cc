/*
 * Named fault points (docs/guides/failure-table.md, "Faults inside a process"): decorators at the port seams of the
 * delivery and publish paths that let the fault-injection suite land a fault between two steps inside a process — "the
 * request left, the outcome is not yet recorded", "the transaction committed, the answer is not yet sent". They are
 * inert unless the test-only setting TIDINGS_TEST_FAULT_POINTS arms them: with no armed point the ports are
 * returned unwrapped. The protocol itself never knows about them; because they wrap the ports, later changes
 * to the record path keep them meaningful.
 *
 * Points (where each one fires):
 *   after_claim DeliveryStore.claim returned at least one delivery, or a publish handed the dispatcher at
 *                                 least one lease (Handoff.adopt, ADR 0018): leases taken, nothing sent
 *   after_send Sender.send returned a response (the request reached the receiver), before the outcome is recorded
 *   before_record                 before DeliveryStore.recordAttempts (the outcome write)
 *   after_record                  DeliveryStore.recordAttempts committed, before a broker message is acknowledged
 *   before_heartbeat              before DeliveryStore.extendLeases (the lease renewal)
 *   after_commit_before_response a publish transaction committed (IdempotencyStore.run / transaction returned), before
 *   the HTTP answer
 * Actions: `exit` — log `fault_point.fired`, then `process.kill(process.pid, 'SIGKILL')` (no cleanup, like a
 * crash); `stall` — log, then wait `stallMs` before going on.
 */
import type { FaultPointName, FaultPointSpec } from '../config/config.ts';
import type { HttpDeps } from '../http/app.ts';
import type { DeliveryStore } from '../ports/delivery-store.ts';
import type { Handoff } from '../ports/handoff.ts';
import type { BrokerOutboxStore } from '../ports/broker-outbox-store.ts';
import type { IdempotencyStore } from '../ports/idempotency-store.ts';
import type { Tx, UnitOfWork } from '../ports/unit-of-work.ts';
import type { Logger } from '../ports/logger.ts';
import type { Sender } from '../ports/sender.ts';

/** The armed fault points of one process, and the decorators that apply them. */
export interface FaultPoints {
  /** Wraps the delivery store: after_claim, before_record, before_heartbeat. */
  deliveryStore(store: DeliveryStore): DeliveryStore;
  /** Wraps a broker transport's store: after_claim on the claim by id. */
  brokerOutboxStore(store: BrokerOutboxStore): BrokerOutboxStore;
  /** Wraps the hand-off from publishes to the dispatcher of the process: after_claim. */
  handoff(handoff: Handoff): Handoff;
  /** Wraps the sender: after_send. */
  sender(sender: Sender): Sender;
  /** Wraps the publish path of the HTTP dependencies: after_commit_before_response. */
  httpDeps(deps: HttpDeps): HttpDeps;
}

/**
 * Makes the fault points of one process from the parsed setting (config.testFaultPoints). Hit counts are
 * per process and per point. Returns null when nothing is armed (the ports stay unwrapped).
 */
export function createFaultPoints(specs: readonly FaultPointSpec[], logger: Logger): FaultPoints | null {
  if (specs.length === 0) return null;
  logger.warn({ faultPoints: specs }, 'TIDINGS_TEST_FAULT_POINTS is set: test-only fault points are armed');
  const hits = new Map<FaultPointName, number>();
  const armed = (point: FaultPointName): boolean => specs.some((s) => s.point === point);

  /** Counts a pass through `point` and runs the fault armed for this pass, if any. */
  const reach = async (point: FaultPointName, detail: Record<string, unknown>): Promise<void> => {
    const hit = (hits.get(point) ?? 0) + 1;
    hits.set(point, hit);
    for (const spec of specs) {
      if (spec.point !== point || (spec.hit !== 'every' && spec.hit !== hit)) continue;
      logger.warn(
        {
          event: 'fault_point.fired',
          point,
          hit,
          action: spec.action,
          stallMs: spec.action === 'stall' ? spec.stallMs : undefined,
          ...detail,
        },
        `fault point ${point} fired: ${spec.action}`,
      );
      if (spec.action === 'exit') {
        process.kill(process.pid, 'SIGKILL');
        // SIGKILL is delivered at once; never go on in the meantime.
        await new Promise<never>(() => undefined);
      }
      await new Promise<void>((resolve) => setTimeout(resolve, spec.stallMs));
    }
  };

  return {
    deliveryStore(store) {
      return {
        async claim(input) {
          const result = await store.claim(input);
          if (result.deliveries.length > 0 && armed('after_claim')) {
            await reach('after_claim', { deliveryIds: result.deliveries.map((d) => d.deliveryId) });
          }
          return result;
        },
        async extendLeases(leases, leaseMs, now) {
          if (armed('before_heartbeat'))
            await reach('before_heartbeat', { deliveryIds: leases.map((l) => l.deliveryId) });
          return store.extendLeases(leases, leaseMs, now);
        },
        releaseLeases: (leases, now) => store.releaseLeases(leases, now),
        async recordAttempts(records, now) {
          if (armed('before_record')) await reach('before_record', { deliveryIds: records.map((r) => r.deliveryId) });
          const result = await store.recordAttempts(records, now);
          // The record committed; a broker transport acknowledges its messages only after this returns.
          if (armed('after_record')) await reach('after_record', { deliveryIds: records.map((r) => r.deliveryId) });
          return result;
        },
      };
    },

    brokerOutboxStore(store) {
      if (!armed('after_claim')) return store;
      return {
        ...store,
        async claimIds(input) {
          const result = await store.claimIds(input);
          if (result.deliveries.length > 0)
            await reach('after_claim', { deliveryIds: result.deliveries.map((d) => d.deliveryId) });
          return result;
        },
      };
    },

    handoff(handoff) {
      if (!armed('after_claim')) return handoff;
      return {
        offer: (messages) => handoff.offer(messages),
        adopt(offer, deliveries) {
          if (deliveries.length === 0) {
            handoff.adopt(offer, deliveries);
            return;
          }
          void reach('after_claim', { deliveryIds: deliveries.map((d) => d.deliveryId), handedOff: true }).then(() =>
            handoff.adopt(offer, deliveries),
          );
        },
      };
    },

    sender(sender) {
      if (!armed('after_send')) return sender;
      return {
        async send(request, signal) {
          const result = await sender.send(request, signal);
          if (result.type === 'response')
            await reach('after_send', { webhookId: request.headers['webhook-id'], status: result.statusCode });
          return result;
        },
        close: () => sender.close(),
      };
    },

    httpDeps(deps) {
      if (!armed('after_commit_before_response')) return deps;
      // Only transactions in which a message was published count: creating applications or endpoints
      // goes through the same store.
      const publishedIn = new WeakSet<Tx>();
      const withoutKey = async <T>(
        runner: (work: (tx: Tx) => Promise<T>) => Promise<T>,
        work: (tx: Tx) => Promise<T>,
      ): Promise<T> => {
        let tx: Tx | undefined;
        const result = await runner((t) => {
          tx = t;
          return work(t);
        });
        if (tx !== undefined && publishedIn.has(tx)) await reach('after_commit_before_response', {});
        return result;
      };
      const idempotency: IdempotencyStore = {
        async run(scope, work) {
          let tx: Tx | undefined;
          const answer = await deps.idempotency.run(scope, (t) => {
            tx = t;
            return work(t);
          });
          if (tx !== undefined && publishedIn.has(tx) && !answer.replayed)
            await reach('after_commit_before_response', { idempotencyKey: scope.key });
          return answer;
        },
      };
      const unitOfWork: UnitOfWork = {
        transaction: (work) => withoutKey(deps.unitOfWork.transaction.bind(deps.unitOfWork), work),
        autocommit: (work) => withoutKey(deps.unitOfWork.autocommit.bind(deps.unitOfWork), work),
      };
      return {
        ...deps,
        idempotency,
        unitOfWork,
        publisher: {
          check: (tx, message) => deps.publisher.check(tx, message),
          async publish(tx, input, options) {
            const result = await deps.publisher.publish(tx, input, options);
            publishedIn.add(tx);
            return result;
          },
          async publishKeyed(scope, input, options) {
            const result = await deps.publisher.publishKeyed(scope, input, options);
            if (result !== null) await reach('after_commit_before_response', { idempotencyKey: scope.key });
            return result;
          },
        },
      };
    },
  };
}
