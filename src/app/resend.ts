import type { MessageQueryStore } from '../ports/message-query-store.ts';
import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import { notFound } from '../domain/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import type { ReplayStore } from '../ports/replay-store.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** Dependencies of {@link createResender}. */
export interface ResenderDeps {
  readonly store: Pick<ApplicationStore, 'findApplication'> &
    Pick<EndpointStore, 'findEndpoint'> &
    Pick<MessageQueryStore, 'findMessage'>;
  readonly replay: ReplayStore;
  readonly clock: Clock;
}

/** The resend use case (Svix `POST …/msg/{msg}/endpoint/{ep}/resend`; docs/design.md#delivery-lifecycle). */
export interface Resender {
  /**
   * Queues one manual attempt of the message to the endpoint, now. Ids or the caller's uid / eventId are
   * accepted. A failed manual attempt is not retried. Queued in `tx` (the request's transaction, with its
   * Idempotency-Key when given).
   * @throws AppError `not_found` (application, message or endpoint; the same 404 for another tenant's objects)
   * @throws AppError `conflict` when the endpoint is disabled or paused
   */
  resend(tx: Tx, principal: Principal, appRef: string, messageRef: string, endpointRef: string): Promise<void>;
}

/** Makes the resend use case. */
export function createResender(deps: ResenderDeps): Resender {
  return {
    async resend(tx, principal, appRef, messageRef, endpointRef) {
      // Every read in `tx`: the embedded engine has one connection, which the transaction holds.
      const app = await resolveApplication(deps.store, principal, appRef, tx);
      const message = await deps.store.findMessage(app.id, messageRef, { withPayload: false, tx });
      if (message === null) throw notFound('Message');
      const endpoint = await deps.store.findEndpoint(app.id, endpointRef, { tx });
      if (endpoint === null) throw notFound('Endpoint');
      const queued = await deps.replay.resend(tx, {
        appId: app.id,
        messageId: message.id,
        endpointId: endpoint.id,
        now: deps.clock.sqlNow(),
      });
      if (!queued) throw notFound('Endpoint');
    },
  };
}
