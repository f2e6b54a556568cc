import type { MessageQueryStore } from '../ports/message-query-store.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import { notFound } from '../domain/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import type { MessageContentStore } from '../ports/message-content-store.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** Erasing message content (Svix `DELETE /app/{app}/msg/{msg}/content`). */
export interface MessageContent {
  /**
   * Erases the message's payload; its history (deliveries, attempts, timelines) stays. Deliveries sent
   * after this carry the JSON value `null`, and recover / replay skip the message (counted as expunged).
   * @throws AppError `not_found` (application, message)
   */
  expunge(tx: Tx, principal: Principal, appRef: string, messageRef: string): Promise<void>;
}

/** Makes the message content use case. */
export function createMessageContent(deps: {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<MessageQueryStore, 'findMessage'>;
  readonly store: MessageContentStore;
  readonly clock: Clock;
}): MessageContent {
  return {
    async expunge(tx, principal, appRef, messageRef) {
      const app = await resolveApplication(deps.lookups, principal, appRef, tx);
      const message = await deps.lookups.findMessage(app.id, messageRef, { withPayload: false, tx });
      if (message === null || !(await deps.store.expungeContent(tx, app.id, message.id, deps.clock.sqlNow())))
        throw notFound('Message');
    },
  };
}
