import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import { AppError, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { EventTypeRecord, EventTypeStore } from '../ports/event-type-store.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import type { MessageContentStore } from '../ports/message-content-store.ts';
import type { MessageRecord } from '../ports/message-store.ts';
import { fieldError, resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';
import { latestVersion } from './payload-schemas.ts';

/** Dependencies of {@link createExampleSender}. */
export interface ExampleSenderDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  readonly eventTypes: Pick<EventTypeStore, 'findEventType'>;
  readonly messages: MessageContentStore;
  readonly clock: Clock;
  readonly random: Random;
}

/** Svix send-example: a real, signed message of an event type, to one endpoint only. */
export interface ExampleSender {
  /**
   * Publishes the event type's example (from `examples` of its latest schema version, index `exampleIndex`,
   * default 0; `{}` when the schema has no examples) as a new message with one delivery, to this endpoint.
   * @throws AppError `not_found` (application, endpoint), `validation` (unknown or archived event type at
   *   body.eventType; exampleIndex out of range), `conflict` (the endpoint is disabled)
   */
  send(
    tx: Tx,
    principal: Principal,
    appRef: string,
    endpointRef: string,
    input: { readonly eventType: string; readonly exampleIndex: number | null },
  ): Promise<MessageRecord>;
}

/** The examples array of the event type's latest schema version, or null when there is none. */
function examplesOf(eventType: EventTypeRecord): readonly unknown[] | null {
  const schemas = eventType.schemas;
  const version = schemas === null ? null : latestVersion(schemas);
  const schema = version === null ? undefined : schemas?.[version];
  const examples =
    typeof schema === 'object' && schema !== null ? (schema as { examples?: unknown }).examples : undefined;
  return Array.isArray(examples) ? examples : null;
}

/** Makes the send-example use case. */
export function createExampleSender(deps: ExampleSenderDeps): ExampleSender {
  return {
    async send(tx, principal, appRef, endpointRef, input) {
      const app = await resolveApplication(deps.lookups, principal, appRef, tx);
      const endpoint = await deps.lookups.findEndpoint(app.id, endpointRef, { tx });
      if (endpoint === null) throw notFound('Endpoint');
      if (endpoint.status === 'disabled')
        throw new AppError('conflict', 'The endpoint is disabled; enable it before sending an example');
      const eventType = await deps.eventTypes.findEventType(input.eventType, { tx });
      if (eventType === null || eventType.archived)
        throw fieldError(
          ['body', 'eventType'],
          `no event type named "${input.eventType}"${eventType?.archived === true ? ' (it is archived)' : ''}`,
        );
      const examples = examplesOf(eventType);
      const index = input.exampleIndex ?? 0;
      if (examples !== null && index >= examples.length)
        throw fieldError(['body', 'exampleIndex'], `the schema has ${examples.length} example(s)`);
      const example = examples === null ? {} : examples[index];
      return deps.messages.insertExample(
        tx,
        {
          id: newId('msg', deps.clock.nowMs(), () => deps.random.next()),
          appId: app.id,
          eventId: null,
          eventType: eventType.name,
          channels: null,
          tags: null,
          payload: Buffer.from(JSON.stringify(example ?? null), 'utf8'),
          retentionHours: null,
        },
        endpoint.id,
        deps.clock.sqlNow(),
      );
    },
  };
}
