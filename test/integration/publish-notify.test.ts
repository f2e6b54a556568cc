/**
 * A lone publish notifies at its own commit (ADR 0006, "A lone publish notifies at its commit"): on a
 * PostgreSQL server, a publish statement that starts while no other publish of its store is in flight carries
 * the NOTIFY on the wake channel, and the store then wakes only its own process (`wakeLocal`); a publish that
 * starts while another is in flight, or inside a caller's transaction, leaves the NOTIFY to the coalesced `wake`. A listener on its own
 * connection stands for another process's dispatcher. Whether a notification came is read against a marker:
 * notifications arrive in commit order, so a NOTIFY sent after the publish returned arrives after the
 * publish's own, if there was one. Nothing waits on a timer.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, beforeEach, test } from 'node:test';
import type { Db, Prepared } from '../../src/adapters/postgres/db.ts';
import { createPgKeyClaims } from '../../src/adapters/postgres/idempotency/idempotency-store.ts';
import { createPgMessageStore, WAKE_CHANNEL } from '../../src/adapters/postgres/message/message-store.ts';
import { runAutocommit, runTx } from '../../src/adapters/postgres/tx.ts';
import type { IdempotencyScope } from '../../src/ports/idempotency-store.ts';
import type { MessageRecord, NewMessage } from '../../src/ports/message-store.ts';
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
beforeEach(() => { received = []; });

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
  return { id: `msg_notify${String(serial).padStart(20, '0')}`, appId, eventId: null, eventType: 'invoice.paid', channels: null, tags: null, payload: Buffer.from(`{"n":${serial}}`), retentionHours: null, ...fields };
}

/** A message store whose `wake` and `wakeLocal` calls are counted. */
function countingStore(db: Db, withLocal = true) {
  const calls = { wake: 0, wakeLocal: 0 };
  const store = createPgMessageStore(db, cipher, () => { calls.wake += 1; }, {
    keys: createPgKeyClaims(), limits: { maxBatch: 1, maxInFlight: 4 },
    ...(withLocal ? { wakeLocal: () => { calls.wakeLocal += 1; } } : {}),
  });
  return { store, calls };
}

test('a lone publish sends the NOTIFY from its own statement and wakes only its own process', async () => {
  const { store, calls } = countingStore(t.db);
  await runAutocommit(t.db, (tx) => store.insert(tx, message(), null));
  assert.deepEqual(calls, { wake: 0, wakeLocal: 1 });
  assert.deepEqual(await notificationsUntilMarker(), [''], 'one NOTIFY, from the publish statement');
});

test('without a local wake-up (the embedded engine) the statement sends none and `wake` is called', async () => {
  const { store, calls } = countingStore(t.db, false);
  await runAutocommit(t.db, (tx) => store.insert(tx, message(), null));
  assert.deepEqual(calls, { wake: 1, wakeLocal: 0 });
  assert.deepEqual(await notificationsUntilMarker(), []);
});

test('a publish with nothing due now sends no NOTIFY and wakes nobody', async () => {
  const { store, calls } = countingStore(t.db);
  await runAutocommit(t.db, (tx) => store.insert(tx, message({ deliverAt: new Date(Date.now() + 3_600_000) }), null));
  assert.deepEqual(calls, { wake: 0, wakeLocal: 0 });
  assert.deepEqual(await notificationsUntilMarker(), []);
});

test('a publish that starts while another is in flight leaves the NOTIFY to the coalesced wake', async () => {
  // The first publish statement is held until the second one has been sent.
  const firstSent = deferred<void>();
  const secondSent = deferred<void>();
  let publishes = 0;
  const held: Db = {
    ...t.db,
    query: async (text, params) => {
      if (typeof text !== 'string' && (text as Prepared).name === 'tidings_publish') {
        publishes += 1;
        if (publishes === 1) {
          firstSent.resolve();
          await secondSent.promise;
        } else secondSent.resolve();
      }
      return t.db.query(text, params);
    },
  };
  const { store, calls } = countingStore(held);
  const first = runAutocommit(held, (tx) => store.insert(tx, message(), null));
  await firstSent.promise;
  const second = runAutocommit(held, (tx) => store.insert(tx, message(), null));
  await Promise.all([first, second]);
  assert.deepEqual(calls, { wake: 1, wakeLocal: 1 }, 'the first statement notified; the second left it to wake');
  assert.deepEqual(await notificationsUntilMarker(), [''], 'one NOTIFY: the first statement’s (wake is counted here, not sent)');
});

test('a publish inside a caller’s transaction leaves the NOTIFY to `wake` after that commit, and wakes nobody when it rolls back', async () => {
  // The caller's commit may come long after the statement (the ordinary keyed path stores its answer first),
  // past the store's in-flight count: a NOTIFY in the statement would take the notify lock unseen.
  const { store, calls } = countingStore(t.db);
  await runTx(t.db, (tx) => store.insert(tx, message(), null));
  assert.deepEqual(calls, { wake: 1, wakeLocal: 0 });
  assert.deepEqual(await notificationsUntilMarker(), [], 'no NOTIFY from the statement (wake is counted here, not sent)');
  await assert.rejects(runTx(t.db, async (tx) => {
    await store.insert(tx, message(), null);
    throw new Error('rolled back');
  }), /rolled back/);
  assert.deepEqual(calls, { wake: 1, wakeLocal: 0 }, 'no after-commit hook ran');
  assert.deepEqual(await notificationsUntilMarker(), []);
});

test('a grouped keyed publish notifies at its transaction’s commit', async () => {
  const { store, calls } = countingStore(t.db);
  const scope: IdempotencyScope = { owner: 'admin', route: 'POST /api/v1/app/:appId/msg', key: `k-${serial}`, fingerprint: 'fp', ttlMs: 60_000, waitMs: 5_000 };
  const answerOf = (m: MessageRecord) => ({ status: 202, body: { id: m.id } });
  const stored = await store.insertKeyed(scope, message(), null, answerOf);
  assert.ok(stored !== null, 'the fresh key was taken by the group');
  assert.deepEqual(calls, { wake: 0, wakeLocal: 1 });
  assert.deepEqual(await notificationsUntilMarker(), ['']);
});
