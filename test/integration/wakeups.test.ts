/**
 * Wake-ups across processes (ADR 0006): a commit's `notify()` in one process wakes a dispatcher that listens
 * in another, through a NOTIFY sent after commit — no poll tick involved. Two Wakeups hubs on two pools of one
 * PostgreSQL server stand for the two processes.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDb, type Db } from '../../src/adapters/postgres/db.ts';
import { createWakeups, type Wakeups } from '../../src/adapters/postgres/wakeups/wakeups.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { deferred } from '../support/deferred.ts';
import { silentLogger } from '../support/logger.ts';

let database: TestDatabase;
let otherDb: Db;
let api: Wakeups;
let dispatcher: Wakeups;

before(async () => {
  database = await freshServerDatabase();
  otherDb = await openDb({ databaseUrl: database.url, dataDir: '', poolSize: 2 });
  api = createWakeups(database.db, silentLogger);
  dispatcher = createWakeups(otherDb, silentLogger);
  const listening = deferred<void>();
  // start() wakes its own listeners once LISTEN is in place (work may have arrived before).
  const off = dispatcher.subscribe(() => listening.resolve());
  await dispatcher.start();
  await listening.promise;
  off();
});
after(async () => {
  await dispatcher?.stop();
  await api?.stop();
  await otherDb?.close();
  await database?.drop();
});

test('notify() in one process wakes the listener of another, and its own listeners at once', async () => {
  const remote = deferred<void>();
  let local = 0;
  const offRemote = dispatcher.subscribe(() => remote.resolve());
  const offLocal = api.subscribe(() => {
    local += 1;
  });
  api.notify();
  assert.equal(local, 1, 'the local wake-up is synchronous');
  const timeout = setTimeout(() => remote.reject(new Error('no NOTIFY reached the other process within 5 s')), 5_000);
  await remote.promise;
  clearTimeout(timeout);
  offRemote();
  offLocal();
});

test('a burst of notify() calls still reaches the other process (folded, never dropped)', async () => {
  let woken = 0;
  const first = deferred<void>();
  const off = dispatcher.subscribe(() => {
    woken += 1;
    first.resolve();
  });
  for (let i = 0; i < 50; i++) api.notify();
  const timeout = setTimeout(() => first.reject(new Error('no NOTIFY reached the other process within 5 s')), 5_000);
  await first.promise;
  clearTimeout(timeout);
  assert.ok(woken >= 1 && woken <= 50, `woken ${woken} times for 50 calls`);
  off();
});
