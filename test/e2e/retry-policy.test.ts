/**
 * Retry policies per endpoint and per event type, end to end (docs/adr/0025-retry-policy-snapshot.md): the API of
 * Tidings on the PostgreSQL server, set through its retry-policy routes; a dispatcher on a manual clock, stepped by
 * the test (its `$now` reaches every SQL statement, so due times and attempt times are the clock's); a receiver
 * process on 127.0.0.1 scripted per path. Schedules run without jitter, so every due instant is exact.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Svix } from 'svix';
import { createHttpSender } from '../../src/adapters/http-sender/http-sender.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createDispatcher, type Dispatcher } from '../../src/app/dispatcher/dispatcher.ts';
import { startTidings, type Running } from '../../src/main/compose.ts';
import type { Sender } from '../../src/ports/sender.ts';
import { TEST_ENCRYPTION_KEYS, testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { silentLogger } from '../support/logger.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { seededRandom } from '../support/random.ts';
import { startTestReceiver, type TestReceiver } from '../support/test-receiver.ts';

const TOKEN = `e2e_${randomBytes(16).toString('hex')}`;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** The installation's schedule and deadline (TIDINGS_RETRY_SCHEDULE, TIDINGS_ATTEMPT_DEADLINE). */
const INSTALLATION_DELAY_MS = 7 * MINUTE;
const INSTALLATION_DEADLINE_MS = 1000;

interface Row {
  readonly state: string;
  readonly attempt_count: number;
  readonly next_attempt_at: Date;
  readonly dead_reason: string | null;
  readonly retry_policy: unknown;
}

interface AttemptRow {
  readonly endpoint_id: string;
  readonly response_status_code: number | null;
  readonly error_kind: string | null;
  readonly duration_ms: number;
}

describe('retry policies per endpoint and per event type (PostgreSQL server, manual clock)', () => {
  const clock = new ManualClock();
  const t0 = clock.nowMs();
  let database: TestDatabase;
  let receiver: TestReceiver;
  let tidings: Running;
  let sender: Sender;
  let dispatcher: Dispatcher;
  let svix: Svix;

  before(async () => {
    database = await freshServerDatabase();
    receiver = await startTestReceiver({ defaultStep: { status: 500 } });
    tidings = await startTidings({
      roles: { api: true, dispatcher: false },
      clock,
      env: {
        DATABASE_URL: database.url!,
        TIDINGS_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
        TIDINGS_API_TOKEN: TOKEN,
        HOST: '127.0.0.1',
        PORT: '0',
        TIDINGS_LOG_LEVEL: 'silent',
        TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
        TIDINGS_RETRY_SCHEDULE: `${INSTALLATION_DELAY_MS}ms`,
        TIDINGS_ATTEMPT_DEADLINE: `${INSTALLATION_DEADLINE_MS}ms`,
      },
    });
    svix = new Svix(TOKEN, { serverUrl: tidings.apiUrl! });
    // The installation's deadline and headers timeout are 1 s: a policy's longer attempt timeout must raise both.
    const deadline = INSTALLATION_DEADLINE_MS;
    sender = createHttpSender({
      connectTimeoutMs: 2000,
      headersTimeoutMs: deadline,
      bodyTimeoutMs: deadline,
      deadlineMs: deadline,
      maxResponseBytes: 65536,
      responsePrefixBytes: 1024,
      maxSocketsPerOrigin: 16,
      egressAllowlist: ['127.0.0.1/32'],
      userAgent: 'test',
    });
    dispatcher = createDispatcher({
      store: createPgDeliveryStore(tidings.db, testCipher()),
      sender,
      clock,
      random: seededRandom(7),
      logger: silentLogger,
      settings: {
        dispatcherId: 'manual',
        concurrency: 16,
        claimBatch: 16,
        leaseMs: 30_000,
        attemptDeadlineMs: deadline,
        maxReclaims: 5,
        pollIntervalMs: 50,
        shutdownGraceMs: 0,
        endpointWindowShare: 1,
        windowReserve: 0,
        retryPolicy: { delaysMs: [INSTALLATION_DELAY_MS], jitter: 0, retryAfterMinMs: 1000, retryAfterMaxMs: HOUR },
      },
    });
  });
  after(async () => {
    await dispatcher?.stop();
    await sender?.close();
    await tidings?.stop();
    await receiver?.stop();
    await database?.drop();
  });

  const setPolicy = async (path: string, policy: object): Promise<void> => {
    const res = await fetch(`${tidings.apiUrl}/api/v1${path}/retry-policy`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(policy),
    });
    assert.equal(res.status, 200, await res.text());
  };
  const endpoint = async (appId: string, path: string, policy?: object): Promise<string> => {
    const ep = await svix.endpoint.create(appId, { url: receiver.url(path) });
    if (policy !== undefined) await setPolicy(`/app/${appId}/endpoint/${ep.id}`, policy);
    return ep.id;
  };
  /** One step of the dispatcher at the clock's instant: claims what is due, waits until every attempt is recorded. */
  const step = async (): Promise<number> => {
    const claimed = await dispatcher.tick();
    await dispatcher.drained();
    return claimed;
  };
  const delivery = async (messageId: string, endpointId: string): Promise<Row> =>
    (
      await tidings.db.query<Row>(
        `SELECT state, attempt_count, next_attempt_at, dead_reason, retry_policy FROM deliveries
     WHERE message_id = $1 AND endpoint_id = $2`,
        [messageId, endpointId],
      )
    ).rows[0]!;
  /** ms from `from` to the delivery's next attempt. */
  const dueIn = async (messageId: string, endpointId: string, from: number): Promise<number> =>
    (await delivery(messageId, endpointId)).next_attempt_at.getTime() - from;
  /** The instants of a delivery's attempts, ms after t0 (the manual clock's, recorded by SQL). */
  const attemptTimes = async (messageId: string, endpointId: string): Promise<number[]> => {
    const rows = (
      await tidings.db.query<{ at: Date }>(
        `SELECT a.created_at AS at FROM attempts a JOIN deliveries d ON d.id = a.delivery_id
       WHERE d.message_id = $1 AND d.endpoint_id = $2 ORDER BY a.created_at`,
        [messageId, endpointId],
      )
    ).rows;
    return rows.map((r) => r.at.getTime() - t0);
  };
  const sent = async (path: string): Promise<number> =>
    (await receiver.requests()).filter((r) => r.path === path).length;
  const settled = (row: Row): unknown[] => [row.state, row.dead_reason, row.attempt_count];

  test('two endpoints of one message, each on its own schedule, dead-lettered after its own max attempts', async () => {
    const app = await svix.application.create({ name: 'two schedules' });
    // a: past its schedule's end its last delay repeats, up to its 4 attempts; b: 2 attempts, before its schedule ends.
    const a = await endpoint(app.id, '/two/a', { schedule: ['10s', '20s'], maxAttempts: 4 });
    const b = await endpoint(app.id, '/two/b', { schedule: [MINUTE, MINUTE, MINUTE], maxAttempts: 2 });
    const msg = await svix.message.create(app.id, { eventType: 'order.paid', payload: { n: 1 } });

    assert.equal(await step(), 2, 't0: the first attempt of both');
    assert.deepEqual([await dueIn(msg.id, a, t0), await dueIn(msg.id, b, t0)], [10 * SECOND, MINUTE]);
    for (const [at, what] of [
      [10, "a's second"],
      [30, "a's third"],
      [50, "a's fourth and last"],
    ] as const) {
      clock.set(t0 + at * SECOND);
      assert.equal(await step(), 1, `t0 + ${at} s: ${what} attempt, b not due`);
    }
    const deadA = await delivery(msg.id, a);
    assert.deepEqual(settled(deadA), ['dead', 'exhausted', 4]);
    assert.equal((await delivery(msg.id, b)).state, 'pending', 'b still waits for its own delay');
    clock.set(t0 + MINUTE);
    assert.equal(await step(), 1, "t0 + 1 min: b's second and last attempt");
    assert.deepEqual(settled(await delivery(msg.id, b)), ['dead', 'exhausted', 2]);
    clock.set(t0 + 10 * HOUR);
    assert.equal(await step(), 0, 'nothing more, hours later');
    assert.deepEqual(await attemptTimes(msg.id, a), [0, 10 * SECOND, 30 * SECOND, 50 * SECOND]);
    assert.deepEqual(await attemptTimes(msg.id, b), [0, MINUTE]);
    assert.deepEqual([await sent('/two/a'), await sent('/two/b')], [4, 2]);
    assert.deepEqual(deadA.retry_policy, { scheduleMs: [10_000, 20_000], maxAttempts: 4 }, 'as at its creation');
  });

  test("a per-endpoint timeout cuts a slow receiver at its deadline; another's longer one succeeds", async () => {
    clock.set(t0 + 20 * HOUR);
    const app = await svix.application.create({ name: 'timeouts' });
    for (const path of ['/slow/short', '/slow/long', '/slow/none']) {
      await receiver.script(path, [], { status: 200, delayMs: 1500 });
    }
    const short = await endpoint(app.id, '/slow/short', { attemptTimeout: '300ms' });
    const long = await endpoint(app.id, '/slow/long', { attemptTimeout: 5000 });
    const none = await endpoint(app.id, '/slow/none');
    const msg = await svix.message.create(app.id, { eventType: 'report.ready', payload: {} });
    assert.equal(await step(), 3);
    const rows = (
      await tidings.db.query<AttemptRow>(
        'SELECT endpoint_id, response_status_code, error_kind, duration_ms FROM attempts WHERE message_id = $1',
        [msg.id],
      )
    ).rows;
    const attempts = new Map(rows.map((r) => [r.endpoint_id, r]));
    const cut = attempts.get(short)!;
    assert.equal(cut.error_kind, 'deadline', JSON.stringify(cut));
    const cutMs = cut.duration_ms;
    assert.ok(cutMs >= 300 && cutMs < 1000, `its own 300 ms, not the installation's 1 s: ${cutMs} ms`);
    const ok = attempts.get(long)!;
    assert.equal(ok.response_status_code, 200, JSON.stringify(ok));
    assert.ok(ok.duration_ms >= 1500, `past the installation's 1 s, within its own 5 s: ${ok.duration_ms} ms`);
    const fallback = attempts.get(none)!;
    assert.equal(fallback.response_status_code, null, "no policy: the installation's 1 s cuts it");
    assert.ok(fallback.duration_ms >= 1000 && fallback.duration_ms < 1500, `${fallback.duration_ms} ms`);
    const states = [(await delivery(msg.id, long)).state, (await delivery(msg.id, short)).state];
    assert.deepEqual(states, ['succeeded', 'pending']);
    assert.equal(await dueIn(msg.id, short, clock.nowMs()), INSTALLATION_DELAY_MS, "its schedule: the installation's");
    for (const ep of [short, none]) await svix.endpoint.delete(app.id, ep); // their retries are not the next test's
  });

  test("an endpoint falls back to its event type's policy field by field; deliveries keep theirs", async () => {
    clock.set(t0 + 40 * HOUR);
    const start = clock.nowMs();
    await svix.eventType.create({ name: 'invoice.failed', description: 'x' });
    await setPolicy('/event-type/invoice.failed', { schedule: ['2m'], maxAttempts: 2 });
    const app = await svix.application.create({ name: 'event type fallback' });
    const plain = await endpoint(app.id, '/type/plain');
    const once = await endpoint(app.id, '/type/once', { maxAttempts: 1 });
    const first = await svix.message.create(app.id, { eventType: 'invoice.failed', payload: { n: 1 } });
    const other = await svix.message.create(app.id, { eventType: 'invoice.other', payload: { n: 2 } });
    assert.equal(await step(), 4);
    assert.equal(await dueIn(first.id, plain, start), 2 * MINUTE, "the event type's schedule");
    const onlyOnce = await delivery(first.id, once);
    assert.deepEqual(settled(onlyOnce), ['dead', 'exhausted', 1], "its own maxAttempts over the type's");
    assert.deepEqual(onlyOnce.retry_policy, { scheduleMs: [120_000], maxAttempts: 1 });
    assert.equal(await dueIn(other.id, plain, start), INSTALLATION_DELAY_MS, "another type: the installation's");

    // The event type's policy changes: deliveries created before keep theirs, those created after take the new one.
    await setPolicy('/event-type/invoice.failed', { schedule: ['5m', '5m', '5m'] });
    const second = await svix.message.create(app.id, { eventType: 'invoice.failed', payload: { n: 3 } });
    assert.equal(await step(), 2, "the new message's first attempts");
    assert.equal(await dueIn(second.id, plain, start), 5 * MINUTE);
    clock.set(start + 2 * MINUTE);
    assert.equal(await step(), 1, "the first message's second attempt, on its own schedule");
    assert.deepEqual(settled(await delivery(first.id, plain)), ['dead', 'exhausted', 2], 'two attempts, as created');
    assert.deepEqual((await delivery(second.id, plain)).retry_policy, { scheduleMs: [300_000, 300_000, 300_000] });
  });
});
