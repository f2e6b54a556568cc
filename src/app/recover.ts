import type { Tx } from '../ports/unit-of-work.ts';
import { TaskKind, type TaskRecord } from '../ports/task-store.ts';
import type { Principal } from './credentials.ts';
import { startReplayTask, type ReplaysDeps, type ReplayWindow } from './replay.ts';

/** Svix recover (`POST /app/{app}/endpoint/{ep}/recover`). */
export interface Recoverer {
  /**
   * Starts a background task that sends again every message whose delivery to the endpoint failed (is a
   * dead letter) and that was created in the window. Deliveries that succeeded, even after failing at
   * first, are not touched (Svix); one already pending or leased is not queued twice; each keeps its
   * message id, so receivers see the original webhook-id. Progress: `GET /api/v1/background-task/{id}`.
   * @throws AppError `not_found` (application, endpoint), `validation` (since after until), `conflict`
   *   (the endpoint is disabled)
   */
  recover(tx: Tx, principal: Principal, appRef: string, endpointRef: string, window: ReplayWindow): Promise<TaskRecord>;
}

/** Makes the recover use case. */
export function createRecoverer(deps: ReplaysDeps): Recoverer {
  return {
    recover: (tx, principal, appRef, endpointRef, window) =>
      startReplayTask(deps, tx, principal, appRef, endpointRef, TaskKind.recover, {
        ...window,
        states: ['dead'],
        eventTypes: null,
        channel: null,
        tag: null,
        statusCodeClass: null,
      }),
  };
}
