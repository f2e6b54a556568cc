import type { ApplicationStore } from '../ports/application-store.ts';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { UnitOfWork } from '../ports/unit-of-work.ts';
import type { ErasureFilter, ErasureTask, PayloadCursor, RetentionStore } from '../ports/retention-store.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** The ages and batch size of the retention job (TIDINGS_PAYLOAD_RETENTION, …_SUCCEEDED_AGE, …_BATCH). */
export interface RetentionSettings {
  /** Payload retention of messages that name none, in ms (whole hours are used). */
  readonly payloadRetentionMs: number;
  /** Age after success at which a delivery, its attempts and timeline are deleted; 0 = never. */
  readonly succeededAgeMs: number;
  /** Rows per statement. */
  readonly batch: number;
}

/** What one run of the retention job did. */
export interface RetentionReport {
  readonly payloadsExpunged: number;
  readonly deliveriesPruned: number;
  readonly idempotencyKeysPruned: number;
  readonly erasureBatches: number;
}

const HOUR_MS = 3_600_000;

/**
 * One run of the retention job (docs/guides/security.md, docs/design.md#scale): expunges payloads past their retention (per
 * retention class, batch after batch), deletes succeeded deliveries older than the configured age with
 * their attempts and timeline rows, deletes expired idempotency keys, and advances erasure tasks — each
 * step a loop of bounded single-statement batches, so delivery is never held back. `shouldStop` is
 * checked between batches (graceful stop); what is left is done by the next run.
 */
export async function runRetention(store: RetentionStore, settings: RetentionSettings, clock: Clock, shouldStop: () => boolean = () => false): Promise<RetentionReport> {
  let payloadsExpunged = 0;
  let deliveriesPruned = 0;
  let idempotencyKeysPruned = 0;
  let erasureBatches = 0;
  const defaultHours = Math.max(1, Math.round(settings.payloadRetentionMs / HOUR_MS));
  for (const retentionHours of await store.payloadRetentionClasses()) {
    let cursor: PayloadCursor | null = null;
    for (;;) {
      if (shouldStop()) return { payloadsExpunged, deliveriesPruned, idempotencyKeysPruned, erasureBatches };
      const batch = await store.expirePayloads({ retentionHours, defaultHours, batch: settings.batch, cursor, now: clock.sqlNow() });
      payloadsExpunged += batch.expunged;
      cursor = batch.cursor;
      if (batch.read < settings.batch) break;
    }
  }
  if (settings.succeededAgeMs > 0) {
    for (;;) {
      if (shouldStop()) break;
      const n = await store.pruneSucceeded({ ageMs: settings.succeededAgeMs, batch: settings.batch, now: clock.sqlNow() });
      deliveriesPruned += n;
      if (n < settings.batch) break;
    }
  }
  for (;;) {
    if (shouldStop()) break;
    const n = await store.pruneIdempotencyKeys({ batch: settings.batch, now: clock.sqlNow() });
    idempotencyKeysPruned += n;
    if (n < settings.batch) break;
  }
  erasureBatches = await runErasures(store, settings.batch, clock, shouldStop);
  return { payloadsExpunged, deliveriesPruned, idempotencyKeysPruned, erasureBatches };
}

/** Advances running erasure tasks one batch at a time until none is runnable; returns the batches run. */
export async function runErasures(store: Pick<RetentionStore, 'stepErasure'>, batch: number, clock: Clock, shouldStop: () => boolean = () => false): Promise<number> {
  let steps = 0;
  while (!shouldStop() && (await store.stepErasure({ batch, now: clock.sqlNow() })) !== null) steps++;
  return steps;
}

/** Dependencies of {@link createErasure}. `kick` starts the runner at once (the retention job's). */
export interface ErasureDeps {
  readonly store: Pick<RetentionStore, 'insertErasure'>;
  readonly applications: Pick<ApplicationStore, 'findApplication'>;
  readonly unitOfWork: Pick<UnitOfWork, 'transaction'>;
  readonly clock: Clock;
  readonly random: Random;
  readonly kick: () => void;
}

/** Erasure of many payloads on request (docs/guides/security.md). */
export interface Erasure {
  /**
   * Starts a background task that expunges every payload (and stored response body) of the application's
   * messages existing now — or only those with `filter.tag`, or whose eventId starts with
   * `filter.eventIdPrefix` — whatever their retention or delivery state. Deliveries still pending then
   * carry JSON null, as for any expunged message.
   * @throws AppError `not_found`, `validation` (an empty prefix)
   */
  start(principal: Principal, appRef: string, filter: ErasureFilter): Promise<ErasureTask>;
}

/** Makes the erasure use case. */
export function createErasure(deps: ErasureDeps): Erasure {
  return {
    async start(principal, appRef, filter) {
      if (filter.eventIdPrefix === '') throw new AppError('validation', [{ loc: ['body', 'eventIdPrefix'], msg: 'must not be empty', type: 'value_error' }]);
      const app = await resolveApplication(deps.applications, principal, appRef);
      const id = newId('qtask', deps.clock.nowMs(), () => deps.random.next());
      const task = await deps.unitOfWork.transaction((tx) => deps.store.insertErasure(tx, { id, appId: app.id, filter }, deps.clock.sqlNow()));
      deps.kick();
      return task;
    },
  };
}
