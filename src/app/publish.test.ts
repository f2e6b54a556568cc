import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError, type ValidationIssue } from '../domain/errors.ts';
import type { ApplicationRecord } from '../ports/application-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { EventTypeRecord } from '../ports/event-type-store.ts';
import type { IdempotencyScope, IdempotencyStore, StoredAnswer } from '../ports/idempotency-store.ts';
import {
  StaleLookupError,
  type KeyedInsert,
  type MessageRecord,
  type MessageStore,
  type NewMessage,
} from '../ports/message-store.ts';
import type { Tx, UnitOfWork } from '../ports/unit-of-work.ts';
import type { Principal } from './credentials.ts';
import { createPayloadSchemas } from './payload-schemas.ts';
import {
  createPublisher,
  keyedPublishAnswer,
  publishedAnswer,
  publishMessage,
  type PublishMessageDeps,
  type PublishRequest,
} from './publish.ts';

/*
 * The publish use case over fake ports: plain objects that record what was asked of them, a manual clock,
 * no database. The grouped keyed publish, its fall-back to the ordinary path, and the checks in front.
 */

const START_MS = Date.parse('2026-01-01T00:00:00.000Z');

/** A clock that moves only when told; SQL "now" is its instant. */
function manualClock(): Clock & { advance(ms: number): void } {
  let now = START_MS;
  return {
    nowMs: () => now,
    sqlNow: () => new Date(now),
    advance: (ms) => {
      now += ms;
    },
  };
}

const APP: ApplicationRecord = {
  id: 'app_1',
  uid: 'shop',
  name: 'Shop',
  rateLimit: null,
  metadata: {},
  createdAt: new Date(START_MS),
  updatedAt: new Date(START_MS),
};
const ADMIN: Principal = { kind: 'admin' };
const SCOPE: IdempotencyScope = {
  owner: 'admin',
  route: 'POST /api/v1/app/:appId/msg',
  key: 'k-1',
  fingerprint: 'f',
  ttlMs: 60_000,
  waitMs: 1000,
};

const eventType = (fields: Partial<EventTypeRecord>): EventTypeRecord => ({
  name: 'order.paid',
  description: '',
  archived: false,
  deprecated: false,
  schemas: null,
  groupName: null,
  featureFlags: null,
  createdAt: new Date(START_MS),
  updatedAt: new Date(START_MS),
  revision: '1',
  ...fields,
});

/** The fake world: every port records its calls; `group` says what the grouped keyed insert does. */
function world(
  options: {
    group?: 'stores' | 'refuses' | 'fails';
    eventTypes?: readonly EventTypeRecord[];
    resolve?: () => ApplicationRecord;
    staleInserts?: number;
    /** Inserts are found stale even when not confirmed from the cache (a filter revision changing each time). */
    staleUnconfirmed?: boolean;
  } = {},
) {
  const clock = manualClock();
  const calls: string[] = [];
  const stored: NewMessage[] = [];
  /** Each insert's `expected`, and each application lookup's `cached`, in order. */
  const expected: NewMessage['expected'][] = [];
  const cachedLookups: (boolean | undefined)[] = [];
  let staleLeft = options.staleInserts ?? 0;
  const recordOf = (m: NewMessage, now: Date | null): MessageRecord => ({
    id: m.id,
    appId: m.appId,
    eventId: m.eventId,
    eventType: m.eventType,
    channels: m.channels,
    tags: m.tags,
    payload: m.payload,
    contentType: m.contentType ?? null,
    deliverAt: m.deliverAt ?? null,
    createdAt: now ?? new Date(clock.nowMs()),
  });
  const messages: MessageStore = {
    async insert(tx, message, now) {
      calls.push(`insert in ${(tx as unknown as { kind: string }).kind}`);
      expected.push(message.expected);
      if ((message.expected != null || options.staleUnconfirmed === true) && staleLeft > 0) {
        staleLeft -= 1;
        throw new StaleLookupError(message.id);
      }
      stored.push(message);
      return { message: recordOf(message, now), deliveries: 1 };
    },
    async insertKeyed(_scope, message, now, answer): Promise<KeyedInsert | null> {
      calls.push('insertKeyed');
      if (options.group === 'fails') throw new Error('connection lost');
      if (options.group !== 'stores') return null;
      stored.push(message);
      const record = recordOf(message, now);
      return {
        message: record,
        deliveries: 1,
        answer: { status: answer.status, body: { ...answer.body, timestamp: record.createdAt.toISOString() } },
      };
    },
  };
  const txOf = (kind: string): Tx => ({ kind }) as unknown as Tx;
  const unitOfWork: UnitOfWork = {
    transaction: (work) => {
      calls.push('transaction');
      return work(txOf('transaction'));
    },
    autocommit: (work) => {
      calls.push('autocommit');
      return work(txOf('autocommit'));
    },
  };
  const idempotency: Pick<IdempotencyStore, 'run'> = {
    async run(scope, work) {
      calls.push(`idempotency.run ${scope.key}`);
      return { ...(await work(txOf('keyed transaction'))), replayed: false };
    },
  };
  const types = new Map((options.eventTypes ?? []).map((t) => [t.name, t]));
  const publisher = createPublisher({
    messages,
    clock,
    random: { next: () => 0.5 },
    deliverAtHorizonMs: 3_600_000,
    checks: { eventTypes: { findEventType: async (name) => types.get(name) ?? null }, schemas: createPayloadSchemas() },
  });
  const deps: PublishMessageDeps = {
    publisher,
    unitOfWork,
    idempotency,
    applications: {
      resolveForPublish: async (_tx, _principal, _ref, _create, lookup) => {
        calls.push('resolve');
        cachedLookups.push(lookup?.cached);
        return (options.resolve ?? (() => APP))();
      },
    },
  };
  return { deps, calls, stored, clock, expected, cachedLookups };
}

const request = (
  fields: Partial<PublishRequest> & { payload?: string; deliverAt?: Date | null; contentType?: string | null } = {},
): PublishRequest => ({
  principal: ADMIN,
  appRef: 'shop',
  create: null,
  scope: SCOPE,
  ...fields,
  message: {
    eventType: 'order.paid',
    eventId: null,
    channels: null,
    tags: null,
    payload: Buffer.from(fields.payload ?? '{"total":3}'),
    retentionHours: null,
    contentType: fields.contentType ?? null,
    deliverAt: fields.deliverAt ?? null,
  },
});

/** The AppError `run` rejects with. */
async function refusal(run: Promise<unknown>): Promise<AppError> {
  const error = await run.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof AppError, String(error));
  return error;
}

describe('publishing a message', () => {
  test('a keyed publish the group stores is answered from the group, without the ordinary path', async () => {
    const w = world({ group: 'stores' });
    const answer = await publishMessage(w.deps, request());
    assert.deepEqual(w.calls, ['autocommit', 'resolve', 'insertKeyed']);
    assert.equal(answer.status, 202);
    assert.equal(answer.replayed, false);
    assert.equal((answer.body as { id: string }).id, w.stored[0]!.id);
  });

  test(
    'a keyed publish the group refuses takes the ordinary path ' + 'through the idempotency store, and is stored once',
    async () => {
      const w = world({ group: 'refuses' });
      const answer = await publishMessage(w.deps, request());
      assert.deepEqual(w.calls, [
        'autocommit',
        'resolve',
        'insertKeyed',
        'idempotency.run k-1',
        'resolve',
        'insert in keyed transaction',
      ]);
      assert.equal(w.stored.length, 1);
      assert.equal(answer.status, 202);
    },
  );

  test(
    'a lookup refused in the grouped attempt is answered by the ' + 'ordinary path (its refusal, not a fault)',
    async () => {
      const w = world({
        group: 'stores',
        resolve: () => {
          throw new AppError('not_found', 'Application not found');
        },
      });
      const error = await refusal(publishMessage(w.deps, request()));
      assert.equal(error.code, 'not_found');
      assert.deepEqual(w.calls, ['autocommit', 'resolve', 'idempotency.run k-1', 'resolve']);
    },
  );

  test(
    'a group whose outcome is unknown (the connection failed) is ' + "the request's answer: nothing is retried",
    async () => {
      const w = world({ group: 'fails' });
      await assert.rejects(publishMessage(w.deps, request()), /connection lost/);
      assert.deepEqual(w.calls, ['autocommit', 'resolve', 'insertKeyed']);
    },
  );

  test(
    'without a key a publish runs in autocommit; with ' + 'get-or-create, in a transaction; neither is grouped',
    async () => {
      const plain = world({ group: 'stores' });
      await publishMessage(plain.deps, request({ scope: null }));
      assert.deepEqual(plain.calls, ['autocommit', 'resolve', 'insert in autocommit']);
      const create = world({ group: 'stores' });
      await publishMessage(
        create.deps,
        request({ scope: null, create: { uid: 'shop', name: 'Shop', rateLimit: null, metadata: {} } }),
      );
      assert.deepEqual(create.calls, ['transaction', 'resolve', 'insert in transaction']);
      const keyedCreate = world({ group: 'stores' });
      await publishMessage(
        keyedCreate.deps,
        request({ create: { uid: 'shop', name: 'Shop', rateLimit: null, metadata: {} } }),
      );
      assert.deepEqual(keyedCreate.calls, ['idempotency.run k-1', 'resolve', 'insert in keyed transaction']);
    },
  );

  test(
    'a publish relies on cached lookups and has the store confirm them; a stale one is read again and published ' +
      'once, unconfirmed',
    async () => {
      const w = world({ eventTypes: [eventType({ revision: '7' })], staleInserts: 1 });
      await publishMessage(w.deps, request({ scope: null }));
      assert.deepEqual(w.calls, ['autocommit', 'resolve', 'insert in autocommit', 'resolve', 'insert in autocommit']);
      assert.deepEqual(w.cachedLookups, [true, false]);
      assert.deepEqual(w.expected, [{ appRef: 'shop', eventTypeRevision: '7' }, null]);
      assert.equal(w.stored.length, 1);
      const unknownType = world({});
      await publishMessage(unknownType.deps, request({ scope: null }));
      assert.deepEqual(
        unknownType.expected,
        [{ appRef: 'shop', eventTypeRevision: '0' }],
        'an event type that is not registered must stay so',
      );
    },
  );

  test('lookups changing at every store: a 503 naming it, never a 500, nothing stored', async () => {
    const w = world({ staleInserts: 10, staleUnconfirmed: true });
    await assert.rejects(publishMessage(w.deps, request({ scope: null })), (error: unknown) => {
      assert.ok(error instanceof AppError, 'an answer the client can act on');
      assert.equal(error.code, 'lookups_changing');
      assert.equal(error.status, 503);
      assert.equal(error.headers['retry-after'], '1');
      return true;
    });
    assert.equal(w.stored.length, 0);
    assert.equal(w.calls.filter((c) => c.startsWith('insert')).length, 4, 'read and tried four times in all');
    const settles = world({ staleInserts: 3, staleUnconfirmed: true });
    await publishMessage(settles.deps, request({ scope: null }));
    assert.equal(settles.stored.length, 1, 'a fourth try that is not stale stores it');
  });

  test('after a grouped attempt, and with get-or-create, the application is not confirmed from the cache', async () => {
    const keyed = world({ group: 'refuses' });
    await publishMessage(keyed.deps, request());
    assert.deepEqual(keyed.cachedLookups, [true, false], 'the ordinary path after the group reads its lookups');
    assert.deepEqual(keyed.expected, [null]);
    const create = world({});
    await publishMessage(
      create.deps,
      request({ scope: null, create: { uid: 'other', name: 'Shop', rateLimit: null, metadata: {} } }),
    );
    assert.deepEqual(create.expected, [{ appRef: null, eventTypeRevision: '0' }]);
  });

  test('an archived event type is refused at body.eventType before anything is stored', async () => {
    const w = world({ group: 'stores', eventTypes: [eventType({ archived: true })] });
    const error = await refusal(publishMessage(w.deps, request()));
    assert.equal(error.code, 'validation');
    assert.deepEqual((error.detail as readonly ValidationIssue[])[0]!.loc, ['body', 'eventType']);
    assert.equal(w.stored.length, 0);
  });

  test(
    "a payload that violates its event type's schema is refused with the violations, on both paths, storing " +
      'nothing',
    async () => {
      const schema = { 1: { type: 'object', properties: { total: { type: 'integer' } }, required: ['total'] } };
      const w = world({ group: 'refuses', eventTypes: [eventType({ schemas: schema })] });
      const error = await refusal(publishMessage(w.deps, request({ payload: '{"total":"three"}' })));
      assert.equal(error.code, 'validation');
      assert.ok(w.calls.includes('idempotency.run k-1'), 'the ordinary path answered the refusal');
      assert.equal(w.stored.length, 0);
      await publishMessage(w.deps, request({ payload: '{"total":3}' }));
      assert.equal(w.stored.length, 1);
    },
  );

  test('a raw body of an event type with a schema is refused: it cannot be checked', async () => {
    const w = world({ group: 'stores', eventTypes: [eventType({ schemas: { 1: { type: 'object' } } })] });
    const error = await refusal(
      publishMessage(w.deps, request({ scope: null, payload: 'plain text', contentType: 'text/plain' })),
    );
    assert.deepEqual((error.detail as readonly ValidationIssue[])[0]!.loc, [
      'body',
      'transformationsParams',
      'rawPayload',
    ]);
  });

  test('deliverAt may lie up to the horizon ahead of the clock, not beyond', async () => {
    const w = world({ group: 'stores' });
    const horizon = new Date(START_MS + 3_600_000);
    await publishMessage(w.deps, request({ deliverAt: horizon }));
    w.clock.advance(-1);
    const error = await refusal(publishMessage(w.deps, request({ deliverAt: horizon })));
    assert.deepEqual((error.detail as readonly ValidationIssue[])[0]!.loc, ['body', 'deliverAt']);
  });

  test('the stored answer is the message without its payload, instants as ISO text, in the Svix key order', () => {
    const answer: StoredAnswer = publishedAnswer({
      id: 'msg_1',
      appId: 'app_1',
      eventId: 'e-1',
      eventType: 'order.paid',
      channels: ['eu'],
      tags: null,
      payload: Buffer.from('{"secret":1}'),
      contentType: null,
      deliverAt: new Date(START_MS + 5),
      createdAt: new Date(START_MS),
    });
    assert.equal(answer.status, 202);
    assert.equal(
      JSON.stringify(answer.body),
      '{"eventId":"e-1","eventType":"order.paid","channels":["eu"],"tags":null,"id":"msg_1",' +
        '"timestamp":"2026-01-01T00:00:00.000Z","deliverAt":"2026-01-01T00:00:00.005Z"}',
    );
  });

  test(
    'the answer of a grouped keyed publish, once the store sets its timestamp, is the stored answer of the ' +
      'stored message, key order included',
    () => {
      const message = {
        id: 'msg_1',
        appId: 'app_1',
        eventId: 'e-1',
        eventType: 'order.paid',
        channels: ['eu'],
        tags: null,
        payload: Buffer.from('{}'),
        contentType: null,
        deliverAt: new Date(START_MS + 5),
      };
      const createdAt = new Date(START_MS + 7);
      const keyed = keyedPublishAnswer(message);
      assert.equal(keyed.body['timestamp'], null, 'left to the store');
      const completed = { status: keyed.status, body: { ...keyed.body, timestamp: createdAt.toISOString() } };
      const stored = publishedAnswer({ ...message, createdAt });
      assert.equal(completed.status, stored.status);
      assert.equal(JSON.stringify(completed.body), JSON.stringify(stored.body));
    },
  );
  test(
    'the application lookup and the event-type checks run side by side; a refused lookup is answered before a ' +
      'refused check',
    async () => {
      const order: string[] = [];
      const publisher = createPublisher({
        messages: {
          insert: async (_tx, m, now) => ({
            message: { ...m, contentType: null, deliverAt: null, createdAt: now ?? new Date(START_MS) },
            deliveries: 1,
          }),
          insertKeyed: async () => null,
        },
        clock: manualClock(),
        random: { next: () => 0.5 },
        checks: {
          eventTypes: {
            findEventType: async () => {
              order.push('event type read');
              return null;
            },
          },
          schemas: createPayloadSchemas(),
        },
      });
      const unitOfWork: UnitOfWork = { transaction: (work) => work({} as Tx), autocommit: (work) => work({} as Tx) };
      const idempotency: Pick<IdempotencyStore, 'run'> = { run: async () => assert.fail('no key') };
      const resolveForPublish = async (): Promise<ApplicationRecord> => {
        order.push('lookup started');
        await new Promise((resolve) => setImmediate(resolve));
        order.push('lookup answered');
        return APP;
      };
      await publishMessage(
        { publisher, unitOfWork, idempotency, applications: { resolveForPublish } },
        request({ scope: null }),
      );
      assert.deepEqual(order, ['lookup started', 'event type read', 'lookup answered']);

      const both = world({
        eventTypes: [eventType({ archived: true })],
        resolve: () => {
          throw new AppError('not_found', 'Application not found');
        },
      });
      assert.equal((await refusal(publishMessage(both.deps, request({ scope: null })))).code, 'not_found');
    },
  );
});
