/**
 * The process's wake-up NOTIFY rides on a publish statement (ADR 0006, "The process's NOTIFY rides on a publish
 * statement"): on a PostgreSQL server, a publish statement that starts while no NOTIFY of its process is in flight
 * carries the NOTIFY on the wake channel, and the store then wakes only its own process; a commit with due work that
 * carried none (a publish that started while another NOTIFY was in flight, one inside a caller's transaction, a
 * replay) owes one, which the next publish statement to start carries, or else a statement of its own sends, after the
 * NOTIFY in flight ends. The real wake-up hub (src/adapters/postgres/wakeups/wakeups.ts) is the carrier; a listener on
 * its own connection stands for another process's dispatcher. Whether a notification came is read against a marker:
 * notifications arrive in commit order, so a NOTIFY sent after the hub is idle arrives after every earlier one. Nothing
 * waits on a timer.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, beforeEach, test } from 'node:test';
import type { Db, Prepared } from '../../src/adapters/postgres/db.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { WAKE_CHANNEL } from '../../src/adapters/postgres/wakeups/notify-carrier.ts';
import { runAutocommit, runTx } from '../../src/adapters/postgres/tx.ts';
import type { IdempotencyScope } from '../../src/ports/idempotency-store.ts';
import type { MessageStore, NewMessage } from '../../src/ports/message-store.ts';
import { AppError } from '../../src/domain/errors.ts';
import { createWakeups, type Wakeups } from '../../src/adapters/postgres/wakeups/wakeups.ts';
import { silentLogger } from '../support/logger.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { deferred, type Deferred } from '../support/deferred.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';

const cipher = testCipher();
let t: TestDatabase;
let listener: pg.Client;
/** Payloads of the notifications received on the wake channel since the last {@link notificationsUntilMarker}. */
let received: string[] = [];
let markerSeen: Deferred<void> | null = null;
let appId: string;
let serial = 0;

before(async () => {
  t = await freshServerDatabase();
  listener = new pg.Client({ connectionString: t.url });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.payload === 'marker') markerSeen?.resolve();
    else received.push(n.payload ?? '');
  });
  await listener.query(`LISTEN ${WAKE_CHANNEL}`);
  appId = await insertApp(t.db);
  await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
});
after(async () => {
  await listener?.end();
  await t?.drop();
});
beforeEach(() => {
  received = [];
});

/** The wake channel's notifications that arrived before a marker NOTIFY sent now (so: every earlier commit's). */
async function notificationsUntilMarker(): Promise<string[]> {
  markerSeen = deferred<void>();
  await t.db.query(`SELECT pg_notify('${WAKE_CHANNEL}', 'marker')`);
  await markerSeen.promise;
  const seen = received;
  received = [];
  return seen;
}

function message(fields: Partial<NewMessage> = {}): NewMessage {
  serial += 1;
  return {
    id: `msg_notify${String(serial).padStart(20, '0')}`,
    appId,
    eventId: null,
    eventType: 'invoice.paid',
    channels: null,
    tags: null,
    payload: Buffer.from(`{"n":${serial}}`),
    retentionHours: null,
    ...fields,
  };
}

/** A publish statement held before it is sent: `sent` once it reached the database wrapper, `release` lets it go. */
interface Held {
  readonly sent: Promise<void>;
  release(): void;
}

/**
 * The server's Db as the hub and the store see it, with the next publish statements held at will ({@link Held}) and
 * the hub's NOTIFY statements of its own counted as they are sent; `ownNotified()` settles once every one sent so far
 * has ended.
 */
function instrumentedDb() {
  const holds: ({ sent: Deferred<void>; gate: Deferred<void> } | null)[] = [];
  const counts = { publishes: 0, ownNotifies: 0 };
  const ownNotifies: Promise<unknown>[] = [];
  let ownNotifySent = deferred<void>();
  const db: Db = {
    ...t.db,
    query: async <R extends pg.QueryResultRow>(text: string | Prepared, params?: readonly unknown[]) => {
      if (typeof text !== 'string' && text.name === 'tidings_publish') {
        counts.publishes += 1;
        const hold = holds.shift();
        if (hold != null) {
          hold.sent.resolve();
          await hold.gate.promise;
        }
      } else if (typeof text === 'string' && text.startsWith('SELECT pg_notify')) {
        counts.ownNotifies += 1;
        ownNotifySent.resolve();
        const sent = t.db.query<R>(text, params);
        ownNotifies.push(sent.catch(() => undefined));
        return sent;
      }
      return t.db.query<R>(text, params);
    },
  };
  return {
    db,
    counts,
    /** Holds the next publish statement not yet held, after letting `pass` more go through. */
    holdNext(pass = 0): Held {
      const hold = { sent: deferred<void>(), gate: deferred<void>() };
      for (let i = 0; i < pass; i += 1) holds.push(null);
      holds.push(hold);
      return { sent: hold.sent.promise, release: () => hold.gate.resolve() };
    },
    /** Settles when the hub sends a NOTIFY statement of its own after this call; rejects after 5 s without one. */
    nextOwnNotify(): Promise<void> {
      ownNotifySent = deferred<void>();
      const timeout = setTimeout(
        () => ownNotifySent.reject(new Error('no NOTIFY statement of its own within 5 s')),
        5_000,
      );
      return ownNotifySent.promise.finally(() => clearTimeout(timeout));
    },
    /** Settles when every NOTIFY statement of the hub's own sent so far has ended. */
    async ownNotified(): Promise<void> {
      await Promise.all(ownNotifies);
    },
  };
}

/**
 * A message store over `db` with the real hub as its carrier; `local` counts the hub's local wake-ups. The hub's
 * bound on an owed wake-up's wait is a minute unless given, so that a slow machine does not send one while a test
 * holds a statement.
 */
function carriedStore(db: Db, maxInFlight = 2, maxOwedWaitMs = 60_000, maxBatch = 1) {
  const hub = createWakeups(db, silentLogger, { maxOwedWaitMs });
  const local = { wakes: 0 };
  hub.subscribe(() => {
    local.wakes += 1;
  });
  const store = createPgMessageStore(db, cipher, () => hub.notify(), {
    groupKeyed: true,
    limits: { maxBatch, maxInFlight },
    carrier: hub,
  });
  return { hub, store, local };
}

/** The end of the current event-loop turn: the hub sends a NOTIFY statement of its own by then, if it owes one. */
const turnEnd = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const publish = (store: MessageStore, fields: Partial<NewMessage> = {}) =>
  runAutocommit(t.db, (tx) => store.insert(tx, message(fields), null));

test('a lone publish sends the NOTIFY from its own statement and wakes only its own process', async () => {
  const { db, counts } = instrumentedDb();
  const { store, local } = carriedStore(db);
  await publish(store);
  await turnEnd();
  assert.equal(local.wakes, 1);
  assert.equal(counts.ownNotifies, 0, 'no NOTIFY statement of its own');
  assert.deepEqual(await notificationsUntilMarker(), [''], 'one NOTIFY, from the publish statement');
});

test('without a carrier (the embedded engine) the statement sends none and `wake` is called', async () => {
  let wakes = 0;
  const store = createPgMessageStore(
    t.db,
    cipher,
    () => {
      wakes += 1;
    },
    { limits: { maxBatch: 1, maxInFlight: 2 } },
  );
  await publish(store);
  assert.equal(wakes, 1);
  assert.deepEqual(await notificationsUntilMarker(), []);
});

test('a publish with nothing due now sends no NOTIFY and wakes nobody', async () => {
  const { db, counts } = instrumentedDb();
  const { store, local } = carriedStore(db);
  await publish(store, { deliverAt: new Date(Date.now() + 3_600_000) });
  await turnEnd();
  assert.deepEqual({ wakes: local.wakes, ownNotifies: counts.ownNotifies }, { wakes: 0, ownNotifies: 0 });
  assert.deepEqual(await notificationsUntilMarker(), []);
});

test(
  'a publish that commits while another statement’s NOTIFY is in ' + 'flight owes one, sent after that NOTIFY ends',
  async () => {
    // The first statement carries the NOTIFY and is held; the second starts meanwhile, carries none and commits
    // first. The first's NOTIFY could have been delivered before that commit (its result still on its way), so the
    // second's commit is owed a NOTIFY once the first has ended; no publish starts then to carry it.
    const { db, counts, holdNext, ownNotified } = instrumentedDb();
    const { store, local } = carriedStore(db);
    const hold = holdNext();
    const first = publish(store);
    await hold.sent;
    await publish(store);
    await turnEnd();
    assert.equal(counts.ownNotifies, 0, 'nothing sent while the first statement’s NOTIFY is in flight');
    hold.release();
    await first;
    await turnEnd();
    assert.equal(counts.ownNotifies, 1, 'one NOTIFY statement of its own, after the first statement ended');
    await ownNotified();
    assert.deepEqual(await notificationsUntilMarker(), ['', ''], 'the first statement’s NOTIFY and the owed one');
    assert.equal(local.wakes, 2, 'each publish woke its own process');
  },
);

test('a wake-up owed while a NOTIFY is in flight rides on the publish statement that starts when it ends', async () => {
  // One statement in flight at most: the second publish waits, and starts as the first ends. A commit elsewhere in
  // the process (a replay's, say: the hub's notify) owed a wake-up meanwhile; the second statement carries it even
  // though it makes nothing due itself (a scheduled message), and no NOTIFY statement of its own is needed.
  const { db, counts, holdNext } = instrumentedDb();
  const { hub, store } = carriedStore(db, 1);
  const hold = holdNext();
  const first = publish(store);
  await hold.sent;
  hub.notify();
  const second = publish(store, { deliverAt: new Date(Date.now() + 3_600_000) });
  hold.release();
  await Promise.all([first, second]);
  await turnEnd();
  assert.equal(counts.publishes, 2);
  assert.equal(counts.ownNotifies, 0, 'the owed NOTIFY went with the second statement');
  assert.deepEqual(await notificationsUntilMarker(), ['', ''], 'the first statement’s NOTIFY and the second’s');
});

/**
 * One statement is held carrying the NOTIFY while the hub is owed a wake-up (a replay's commit, say), and the next
 * statement, which waits for it and so is to carry the owed one, ends without having notified (`second` publishes
 * it; `code` is the error it is refused with): a statement of its own then sends the owed NOTIFY.
 */
async function owedPastSecond(
  store: MessageStore,
  hub: Wakeups,
  tools: ReturnType<typeof instrumentedDb>,
  second: () => Promise<unknown>,
  code: string,
  why: string,
): Promise<void> {
  const { counts, holdNext, ownNotified } = tools;
  const hold = holdNext();
  const first = publish(store);
  await hold.sent;
  hub.notify();
  const refused = second();
  hold.release();
  await first;
  await assert.rejects(refused, (error: unknown) => error instanceof AppError && error.code === code);
  await turnEnd();
  assert.equal(counts.ownNotifies, 1, `a NOTIFY statement of its own, after the statement that ${why}`);
  await ownNotified();
  assert.deepEqual(await notificationsUntilMarker(), ['', ''], 'the first statement’s NOTIFY and the owed one');
}

test(
  'a statement that was to carry an owed wake-up and failed ' + 'leaves it owed: a statement of its own sends it',
  async () => {
    // The second statement is refused by the server (its application does not exist), so nothing it carried was
    // delivered.
    const tools = instrumentedDb();
    const { hub, store } = carriedStore(tools.db, 1);
    await owedPastSecond(
      store,
      hub,
      tools,
      () => publish(store, { appId: 'app_missing000000000000000000' }),
      'not_found',
      'was refused',
    );
  },
);

test('a statement that was to carry an owed wake-up and stored nothing leaves it owed', async () => {
  // The second statement's one message has an eventId already taken: ON CONFLICT stores nothing, so the statement
  // has no row to notify with.
  const tools = instrumentedDb();
  const { hub, store } = carriedStore(tools.db, 1);
  const eventId = `taken-${serial}`;
  await publish(store, { eventId });
  await turnEnd();
  await notificationsUntilMarker();
  await owedPastSecond(store, hub, tools, () => publish(store, { eventId }), 'conflict', 'stored nothing');
});

test('a group refused for one message’s data ends its part before its messages are retried one by one', async () => {
  // Two publishes of one turn share a statement; one names an application that does not exist, so the statement is
  // refused (a foreign key) and each message is retried alone. The first retry is held: a wake-up owed meanwhile
  // must not wait for it, as the retries carry no NOTIFY.
  const { db, counts, holdNext, ownNotified } = instrumentedDb();
  const { hub, store } = carriedStore(db, 2, 60_000, 2);
  const hold = holdNext(1);
  const good = publish(store);
  const refused = publish(store, { appId: 'app_missing000000000000000000' });
  await hold.sent;
  hub.notify();
  await turnEnd();
  assert.equal(counts.ownNotifies, 1, 'the owed NOTIFY went while a retry was held');
  await ownNotified();
  hold.release();
  await good;
  await assert.rejects(refused, (error: unknown) => error instanceof AppError && error.code === 'not_found');
  assert.equal(counts.publishes, 3, 'the group, then each message alone');
  await turnEnd();
  assert.equal(counts.ownNotifies, 2, 'the stored message’s commit carried none: it owed one more');
  await ownNotified();
  assert.deepEqual(await notificationsUntilMarker(), ['', '']);
});

test(
  'an owed wake-up waits for a NOTIFY in flight at most ' + 'maxOwedWaitMs, then a statement of its own goes beside it',
  async () => {
    // A statement held as long as a row lock can hold one must not hold back other processes' wake-ups.
    const { db, counts, holdNext, nextOwnNotify, ownNotified } = instrumentedDb();
    const { hub, store } = carriedStore(db, 2, 0);
    const hold = holdNext();
    const first = publish(store);
    await hold.sent;
    const sent = nextOwnNotify();
    hub.notify();
    await sent;
    assert.equal(counts.ownNotifies, 1, 'sent while the first statement is still held');
    await ownNotified();
    hold.release();
    await first;
    await turnEnd();
    assert.equal(counts.ownNotifies, 1, 'nothing more is owed');
    assert.deepEqual(
      await notificationsUntilMarker(),
      ['', ''],
      'the statement of its own’s NOTIFY, then the first statement’s',
    );
  },
);

test(
  'a publish inside a caller’s transaction owes the NOTIFY to its ' + 'commit, and owes nothing when it rolls back',
  async () => {
    // The caller's commit may come long after the statement (the ordinary keyed path stores its answer first): a
    // NOTIFY in the statement would take the notify lock unseen by the hub.
    const { db, counts, ownNotified } = instrumentedDb();
    const { store, local } = carriedStore(db);
    await runTx(db, (tx) => store.insert(tx, message(), null));
    await turnEnd();
    await ownNotified();
    assert.deepEqual(
      { wakes: local.wakes, ownNotifies: counts.ownNotifies },
      { wakes: 1, ownNotifies: 1 },
      'a NOTIFY statement of its own after the commit',
    );
    assert.deepEqual(await notificationsUntilMarker(), ['']);
    await assert.rejects(
      runTx(db, async (tx) => {
        await store.insert(tx, message(), null);
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    await turnEnd();
    assert.deepEqual(
      { wakes: local.wakes, ownNotifies: counts.ownNotifies },
      { wakes: 1, ownNotifies: 1 },
      'no after-commit hook ran',
    );
    assert.deepEqual(await notificationsUntilMarker(), []);
  },
);

test('a grouped keyed publish notifies at its transaction’s commit', async () => {
  const { db, counts } = instrumentedDb();
  const { store, local } = carriedStore(db);
  const scope: IdempotencyScope = {
    owner: 'admin',
    route: 'POST /api/v1/app/:appId/msg',
    key: `k-${serial}`,
    fingerprint: 'fp',
    ttlMs: 60_000,
    waitMs: 5_000,
  };
  const m = message();
  const stored = await store.insertKeyed(scope, m, null, { status: 202, body: { id: m.id } });
  assert.ok(stored !== null, 'the fresh key was taken by the group');
  await turnEnd();
  assert.deepEqual({ wakes: local.wakes, ownNotifies: counts.ownNotifies }, { wakes: 1, ownNotifies: 0 });
  assert.deepEqual(await notificationsUntilMarker(), ['']);
});
