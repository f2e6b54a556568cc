import { z } from 'zod';
import type { ReplayableState } from '../../ports/replay-store.ts';
import type { Api, HttpDeps } from '../deps.ts';
import { commonErrors, errorBody, refParam } from '../schemas/common.ts';
import { bulkReplayIn, recoverIn, replayIn, taskStartedOut as taskStartedOutSchema } from '../schemas/replay.ts';
import { startTask } from './task-start.ts';

const params = z.object({ appId: refParam, endpointId: refParam });
const response = { 202: taskStartedOutSchema, 409: errorBody, ...commonErrors };

/** The states a Svix `BulkReplayIn.status` selects (see the schema). */
function bulkStates(status: number | null | undefined): readonly ReplayableState[] {
  switch (status) {
    case null:
    case undefined:
      return ['dead', 'succeeded'];
    case 0:
      return ['succeeded'];
    case 2:
      return ['dead'];
    case 4:
      return ['skipped'];
    default:
      return [];
  }
}

/**
 * Svix endpoint replays, each answered 202 with the background task (`GET /api/v1/background-task/{id}`
 * shows its progress): `POST …/endpoint/{ep}/recover` (dead letters in the window, sent again),
 * `POST …/replay-missing` (skipped deliveries and messages never delivered to the endpoint, sent once),
 * `POST …/bulk-replay` (dead and/or succeeded deliveries by filter). Deliveries keep their message id
 * (webhook-id), start a fresh retry schedule, and are paced (TIDINGS_REPLAY_RATE). A disabled endpoint is
 * 409. Idempotency-Key honoured: a repeated request answers the same task.
 */
export function registerEndpointReplay(
  app: Api,
  deps: Pick<HttpDeps, 'recoverer' | 'replays' | 'taskRunner' | 'idempotency' | 'unitOfWork' | 'config'>,
): void {
  // Recover and replay-missing: a window of the endpoint's deliveries (the deps are read only when a request comes).
  const windowed = [
    {
      path: '/api/v1/app/:appId/endpoint/:endpointId/recover',
      summary: 'Recover failed messages',
      body: recoverIn,
      start: (...args: Parameters<HttpDeps['recoverer']['recover']>) => deps.recoverer.recover(...args),
    },
    {
      path: '/api/v1/app/:appId/endpoint/:endpointId/replay-missing',
      summary: 'Replay missing messages',
      body: replayIn,
      start: (...args: Parameters<HttpDeps['replays']['replayMissing']>) => deps.replays.replayMissing(...args),
    },
  ];
  for (const route of windowed) {
    app.post(
      route.path,
      { schema: { tags: ['Endpoint'], summary: route.summary, params, body: route.body, response } },
      async (request, reply) => {
        const { since, until } = request.body;
        return startTask(deps, request, reply, (tx, principal) =>
          route.start(tx, principal, request.params.appId, request.params.endpointId, { since, until: until ?? null }),
        );
      },
    );
  }

  app.post(
    '/api/v1/app/:appId/endpoint/:endpointId/bulk-replay',
    {
      schema: { tags: ['Endpoint'], summary: 'Bulk replay messages', params, body: bulkReplayIn, response },
    },
    async (request, reply) => {
      const b = request.body;
      const selection = {
        since: b.since,
        until: b.until ?? null,
        states: bulkStates(b.status),
        eventTypes: b.eventTypes == null || b.eventTypes.length === 0 ? null : b.eventTypes,
        channel: b.channel ?? null,
        tag: b.tag ?? null,
        statusCodeClass: b.statusCodeClass ?? null,
      };
      return startTask(deps, request, reply, (tx, principal) =>
        deps.replays.bulkReplay(tx, principal, request.params.appId, request.params.endpointId, selection),
      );
    },
  );
}
