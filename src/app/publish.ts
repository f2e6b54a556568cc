import { settingDefault } from '../config/config.ts';
import { AppError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { EventTypeRecord, EventTypeStore } from '../ports/event-type-store.ts';
import type { IdempotencyScope, IdempotencyStore, StoredAnswer } from '../ports/idempotency-store.ts';
import {
  StaleLookupError,
  type KeyedAnswer,
  type KeyedInsert,
  type MessageRecord,
  type MessageStore,
  type NewMessage,
} from '../ports/message-store.ts';
import type { Tx, UnitOfWork } from '../ports/unit-of-work.ts';
import { messageHead } from './answers.ts';
import { fieldError, type ApplicationInput, type Applications } from './applications.ts';
import type { Principal } from './credentials.ts';
import type { PublishFilters } from './endpoint-filters.ts';
import type { LookupCache } from './lookup-cache.ts';
import { latestVersion, type PayloadSchemas } from './payload-schemas.ts';
import { writeOnce } from './write-once.ts';

/**
 * What a caller publishes (docs/design.md#publishing): the message to store but its id, which the publisher makes.
 * `payload` is the exact byte span of the request's payload value, or a raw message's body (`contentType` set).
 */
export type PublishInput = Omit<NewMessage, 'id'>;

/**
 * The event-type checks in front of every publish: the registered event types, and the payload schemas
 * that validate a payload against its type's latest schema version.
 */
export interface PublishChecks {
  readonly eventTypes: Pick<EventTypeStore, 'findEventType'>;
  readonly schemas: PayloadSchemas;
  /** Event types by name as publishes found them (absences too); absent = every check reads its event type. */
  readonly cache?: LookupCache<EventTypeRecord>;
}

/** Dependencies of {@link createPublisher}. `onPublished` counts accepted messages (metrics). */
export interface PublisherDeps {
  readonly messages: MessageStore;
  readonly clock: Clock;
  readonly random: Random;
  readonly onPublished?: (appId: string) => void;
  /**
   * Furthest a `deliverAt` may lie ahead of the clock, in ms (TIDINGS_DELIVER_AT_HORIZON); default: that
   * setting's default (24 h, as Svix documents for `deliverAt`).
   */
  readonly deliverAtHorizonMs?: number;
  /** The event-type checks; absent = none (a publisher used without an event-type registry, as in tests). */
  readonly checks?: PublishChecks;
}

/** `LookupExpectation.eventTypeRevision` (ports/message-store.ts) of an event type that is not registered. */
const NO_EVENT_TYPE = '0';

/** HTTP status of an accepted publish (Svix answers 202 Accepted). */
export const PUBLISHED_STATUS = 202;

/**
 * The stored answer of a publish: status 202 and the message without its payload (payloads are encrypted
 * at rest and must not be copied into the key table in plain text). Built inside the publish's
 * transaction, so that the key commits with it; instants as ISO 8601 text, key order as Svix's
 * `MessageOut` (eventId, eventType, channels, tags, id, timestamp, deliverAt).
 */
export function publishedAnswer(message: MessageRecord): StoredAnswer {
  return { status: PUBLISHED_STATUS, body: messageHead(message) };
}

/**
 * {@link publishedAnswer} of a message not stored yet, for the grouped keyed publish: `timestamp` is left null, in its
 * place, and the store sets it to the instant it stores the message ({@link KeyedAnswer}), so that the stored answer is
 * publishedAnswer of the stored message.
 */
export function keyedPublishAnswer(
  message: Pick<NewMessage, 'id' | 'eventId' | 'eventType' | 'channels' | 'tags' | 'deliverAt'>,
): KeyedAnswer {
  return {
    status: PUBLISHED_STATUS,
    body: { ...messageHead({ ...message, createdAt: new Date(0) }), timestamp: null },
  };
}

/** What the checks of a publish read: the message as the request gave it, without its application. */
export type PublishChecked = Omit<PublishInput, 'appId'>;

/** Options of {@link Publisher.check}. */
export interface CheckOptions {
  /**
   * The event type may come from the publish lookup cache and be stale: the caller passes the revision
   * returned to the store as `LookupExpectation.eventTypeRevision` (ports/message-store.ts). Otherwise it is read.
   */
  readonly cached?: boolean;
}

/** Options of {@link Publisher.publish} and {@link Publisher.publishKeyed}. */
export interface PublishOptions {
  /** The caller has run {@link Publisher.check} on this message and it passed: the checks are not run again. */
  readonly checked?: boolean;
}

/** The publish use case's store-facing steps; {@link publishMessage} orchestrates them for a request. */
export interface Publisher {
  /**
   * The checks in front of a publish, writing nothing: the event type (archived, payload schema) read in
   * `tx` (undefined = outside a transaction) and the `deliverAt` horizon. They need no application, so a
   * caller may run them beside its application lookup and then publish with `checked`.
   * @returns the revision of the event type checked against, `'0'` when no such type is registered, null
   *   when the publisher has no event-type checks (`LookupExpectation.eventTypeRevision` (ports/message-store.ts))
   * @throws AppError as {@link Publisher.publish}, but `conflict`
   */
  check(tx: Tx | undefined, message: PublishChecked, options?: CheckOptions): Promise<string | null>;
  /**
   * Checks the message and stores it and its fan-out in `tx` (the caller's transaction, shared with the
   * idempotency key), so that a 2xx answer means both are committed (docs/adr/0008-done-or-refused.md). A
   * `deliverAt` ahead of the clock makes the first attempt due then; one in the past, at once.
   * @throws AppError `conflict` when the eventId is already used in the application
   * @throws StaleLookupError when `input.expected` no longer holds (nothing stored)
   * @throws AppError `validation` (loc body.deliverAt) when `deliverAt` lies beyond the horizon; (loc
   *   body.eventType) when the event type is archived; the schema's violations when the payload breaks the
   *   event type's latest schema; (loc body.transformationsParams.rawPayload) for a raw body of a type with a schema
   */
  publish(
    tx: Tx,
    input: PublishInput,
    options?: PublishOptions,
  ): Promise<{ readonly message: MessageRecord; readonly deliveries: number }>;
  /**
   * Checks the message, then publishes it under a fresh Idempotency-Key, grouped with concurrent calls: the
   * key, the message and its {@link publishedAnswer} commit together (docs/adr/0007-group-commit.md).
   * @returns what was stored, or null when the call must take the ordinary keyed path (the key exists, the
   *   eventId is taken, or the group failed); nothing was stored then
   * @throws AppError from the checks, as {@link Publisher.publish}
   */
  publishKeyed(scope: IdempotencyScope, input: PublishInput, options?: PublishOptions): Promise<KeyedInsert | null>;
}

/** Makes the publisher. */
export function createPublisher(deps: PublisherDeps): Publisher {
  const horizonMs = deps.deliverAtHorizonMs ?? settingDefault('deliverAtHorizonMs');
  const checkDeliverAt = (input: PublishChecked): void => {
    if (input.deliverAt == null || input.deliverAt.getTime() - deps.clock.nowMs() <= horizonMs) return;
    throw new AppError('validation', [
      {
        loc: ['body', 'deliverAt'],
        msg: `deliverAt may lie at most ${horizonMs / 1000} s ahead (TIDINGS_DELIVER_AT_HORIZON)`,
        type: 'value_error.datetime.horizon',
      },
    ]);
  };
  // A message whose event type is archived is refused (Svix: "new messages can not be sent with it"), and
  // one whose payload violates the event type's latest schema version is refused with 422 listing the
  // violations; both before anything is written. A type that is not registered is accepted, as Svix does.
  const checkEventType = async (tx: Tx | undefined, input: PublishChecked, cached: boolean): Promise<string | null> => {
    const checks = deps.checks;
    if (checks === undefined) return null;
    const read = () => checks.eventTypes.findEventType(input.eventType, tx === undefined ? {} : { tx });
    const eventType =
      checks.cache === undefined ? await read() : await checks.cache.get(input.eventType, !cached, read);
    if (eventType === null) return NO_EVENT_TYPE;
    if (eventType.archived) throw fieldError(['body', 'eventType'], `event type "${eventType.name}" is archived`);
    // A raw body is not JSON: it cannot be checked against the type's schema, so it is refused, not let through.
    if (input.contentType != null) {
      if (eventType.schemas !== null && latestVersion(eventType.schemas) !== null) {
        throw fieldError(
          ['body', 'transformationsParams', 'rawPayload'],
          `event type "${eventType.name}" has a JSON schema; a raw payload cannot be checked against it`,
        );
      }
      return eventType.revision;
    }
    checks.schemas.validate(eventType, input.payload);
    return eventType.revision;
  };
  const newMessageId = (): string => newId('msg', deps.clock.nowMs(), () => deps.random.next());
  const check = async (
    tx: Tx | undefined,
    input: PublishChecked,
    options: CheckOptions = {},
  ): Promise<string | null> => {
    const revision = await checkEventType(tx, input, options.cached === true);
    checkDeliverAt(input);
    return revision;
  };
  return {
    check,
    async publish(tx, input, options) {
      if (options?.checked !== true) await check(tx, input);
      const result = await deps.messages.insert(tx, { id: newMessageId(), ...input }, deps.clock.sqlNow());
      deps.onPublished?.(input.appId);
      return result;
    },
    async publishKeyed(scope, input, options) {
      if (options?.checked !== true) await check(undefined, input);
      const message = { id: newMessageId(), ...input };
      const result = await deps.messages.insertKeyed(scope, message, deps.clock.sqlNow(), keyedPublishAnswer(message));
      if (result !== null) deps.onPublished?.(input.appId);
      return result;
    },
  };
}

/** One publish request, as the route parsed it. */
export interface PublishRequest {
  readonly principal: Principal;
  /** The application's id (`app_…`) or uid from the path. */
  readonly appRef: string;
  /**
   * Svix get-or-create (`MessageIn.application`): the application to create when `appRef` names none; null = it must
   * exist.
   */
  readonly create: ApplicationInput | null;
  readonly message: Omit<PublishInput, 'appId'>;
  /** The request's Idempotency-Key scope; null = no key. */
  readonly scope: IdempotencyScope | null;
}

/** What {@link publishMessage} needs: the publisher, the application lookup, and the two ways to commit. */
export interface PublishMessageDeps {
  readonly publisher: Publisher;
  readonly applications: Pick<Applications, 'resolveForPublish'>;
  readonly idempotency: Pick<IdempotencyStore, 'run'>;
  readonly unitOfWork: UnitOfWork;
  /** The endpoints' payload filters (docs/adr/0029-endpoint-payload-filters.md); absent = none evaluated. */
  readonly publishFilters?: PublishFilters;
}

/** Most times a publish is looked up and evaluated again after the statement found its lookups stale. */
const STALE_RETRIES = 3;

/**
 * Publishes one message for a request: with an Idempotency-Key and without get-or-create, first the grouped
 * keyed publish (docs/adr/0007-group-commit.md): lookups and checks outside a transaction, then key, message
 * and answer in a transaction shared with concurrent requests. When it is not stored that way (the key
 * exists, a lookup or check refused it, the database refused the group) nothing was stored, and the request
 * takes the ordinary path, which answers it as before (replay, 404, 409, 422…): with a key, through the
 * idempotency store; without one, in autocommit (the one PUBLISH statement needs no BEGIN/COMMIT:
 * docs/adr/0006-round-trips-and-wake-ups.md), or in a transaction when it may create the application.
 *
 * The application and event type may come from the publish lookup cache. The store confirms them when it
 * writes (the message's `expected`); when they changed meanwhile it stores nothing, and the message is
 * looked up again, read this time, and published once more without confirmation, as a publish that read
 * its lookups always was (ADR 0006, "Publish lookups are cached and confirmed"). The ordinary path after a
 * grouped attempt reads its lookups at once.
 * @returns the {@link publishedAnswer} (a replayed one is the stored JSON, as it was first answered) and
 *   whether it was replayed
 * @throws AppError from the lookups and checks, the idempotency store's refusals, or the database's
 *   unavailability; a connection failure during a group leaves its outcome to the key row on a retry
 */
export async function publishMessage(
  deps: PublishMessageDeps,
  request: PublishRequest,
): Promise<StoredAnswer & { readonly replayed: boolean }> {
  const { principal, appRef, create, scope } = request;
  // The application lookup and the checks run side by side (one round trip less before the publish); a
  // refusal of the lookup is answered before one of the checks, as when they ran one after the other.
  // `cached`: both may come from the lookup cache, and the store confirms them; otherwise both are read.
  const lookUp = async (
    tx: Tx,
    orCreate: ApplicationInput | null,
    checkTx: Tx | undefined,
    cached: boolean,
  ): Promise<PublishInput> => {
    const [target, checked] = await Promise.allSettled([
      deps.applications.resolveForPublish(tx, principal, appRef, orCreate, { cached }),
      deps.publisher.check(checkTx, request.message, { cached }),
    ]);
    if (target.status === 'rejected') throw target.reason;
    if (checked.status === 'rejected') throw checked.reason;
    // The payload filters, evaluated once here; the statement confirms the revision they were read at.
    const filters =
      deps.publishFilters === undefined
        ? null
        : await deps.publishFilters.decide(tx, target.value, request.message, cached);
    // A get-or-create's application may be new, named by another uid than `appRef`: not confirmed.
    return {
      ...request.message,
      appId: target.value.id,
      expected: cached ? { appRef: orCreate === null ? appRef : null, eventTypeRevision: checked.value } : null,
      filters,
    };
  };
  let grouped: StoredAnswer | null = null;
  if (scope !== null && create === null) {
    grouped = await deps.unitOfWork
      .autocommit(async (tx) => {
        const stored = await deps.publisher.publishKeyed(scope, await lookUp(tx, null, undefined, true), {
          checked: true,
        });
        return stored === null ? null : stored.answer;
        // A refused lookup or check (404, 422…) stored nothing: the ordinary path answers it, replay included.
        // Anything else (the database unreachable, an unknown commit outcome) is this request's answer.
      })
      .catch((error: unknown) => {
        if (error instanceof AppError) return null;
        throw error;
      });
    if (grouped !== null) return { ...grouped, replayed: false };
  }
  const afterGroup = scope !== null && create === null;
  const work = async (tx: Tx): Promise<StoredAnswer> => {
    const publish = async (cached: boolean) =>
      (await deps.publisher.publish(tx, await lookUp(tx, create, tx, cached), { checked: true })).message;
    // A stale cached lookup stored nothing and left the transaction as it was: read and publish again. The filter
    // revision is confirmed even then, so a filter changed between the read and the statement is met once more.
    const attempt = (cached: boolean, left: number): Promise<MessageRecord> =>
      publish(cached).catch((error: unknown) => {
        if (!(error instanceof StaleLookupError)) throw error;
        if (left > 0) return attempt(false, left - 1);
        // Changed every time it was read: nothing was stored, and sending it again is safe.
        throw new AppError('lookups_changing', `changed ${STALE_RETRIES + 1} times while the message was stored`, {
          cause: error,
          headers: { 'retry-after': '1' },
        });
      });
    const message = await attempt(!afterGroup, STALE_RETRIES);
    return publishedAnswer(message);
  };
  return writeOnce(deps, scope, work, create === null ? 'autocommit' : 'transaction');
}
