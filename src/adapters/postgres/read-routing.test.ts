import assert from 'node:assert/strict';
import { test } from 'node:test';
import type pg from 'pg';
import type { Db, Prepared } from './db.ts';
import { createReadRouter, type FallbackReason } from './read-routing.ts';

/** A fake server: answers the lag check's statements from `state`, and any other statement with its own name. */
/** What a fake server answers: its WAL position, its replay position and last commit's age, or an error. */
interface ServerState {
  lsn: string;
  replayLsn: string | null;
  ageMs: number | null;
  recovery: boolean;
  down: Error | null;
}

function fakeServer(name: string, state: ServerState) {
  const ran: string[] = [];
  const answer = async (text: string | Prepared): Promise<pg.QueryResult> => {
    const sql = typeof text === 'string' ? text : text.text;
    if (state.down !== null) throw state.down;
    ran.push(typeof text === 'string' ? sql : `named ${text.name}: ${sql}`);
    const rows = sql.includes('pg_current_wal_lsn')
      ? [{ lsn: state.lsn }]
      : sql.includes('pg_last_wal_replay_lsn')
        ? [{ recovery: state.recovery, lsn: state.replayLsn, age_ms: state.ageMs }]
        : [{ server: name }];
    return { rows, rowCount: rows.length, command: 'SELECT', oid: 0, fields: [] } as pg.QueryResult;
  };
  const db = {
    engine: 'server',
    query: answer,
    tx: async (fn) => fn({ query: answer as never }),
    listenClient: async () => null,
    close: async () => undefined,
  } as Db;
  return { db, ran, state };
}

function world(maxLagMs = 1_000, checkMs = 100) {
  const primary = fakeServer('primary', { lsn: '0/100', replayLsn: null, ageMs: null, recovery: false, down: null });
  const replica = fakeServer('replica', { lsn: '0/0', replayLsn: '0/100', ageMs: 5, recovery: true, down: null });
  let now = 0;
  const fallbacks: FallbackReason[] = [];
  const changes: string[] = [];
  const router = createReadRouter({
    primary: primary.db,
    replica: replica.db,
    maxLagMs,
    checkMs,
    nowMs: () => now,
    onFallback: (reason) => fallbacks.push(reason),
    onChange: (state) => changes.push(state),
  });
  const read = async (): Promise<string> =>
    (await router.reader.query<{ server: string }>('SELECT 1 AS list')).rows[0]!.server;
  return {
    primary,
    replica,
    router,
    read,
    fallbacks,
    changes,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

test("a replica that has replayed the primary's position serves the reads, with no fallback counted", async () => {
  const w = world();
  await w.router.check();
  assert.equal(await w.read(), 'replica');
  assert.equal(await w.read(), 'replica');
  assert.deepEqual(w.fallbacks, []);
  assert.deepEqual(w.changes, ['serving']);
  assert.equal(w.router.lagNowMs(), 0);
});

test(
  'the lag grows with the time since the last check: past the largest lag, reads go to the primary (lagging) ' +
    'until a check finds it fresh',
  async () => {
    const w = world(1_000, 100);
    await w.router.check();
    w.advance(900);
    assert.equal(await w.read(), 'replica', 'within the bound');
    w.advance(200);
    assert.equal(await w.read(), 'primary', 'the last check is 1,100 ms old: the replica may be that stale');
    assert.deepEqual(w.fallbacks, ['lagging']);
    await w.router.check();
    assert.equal(await w.read(), 'replica');
    assert.deepEqual(w.changes, ['serving', 'lagging', 'serving'], 'one change each way (one log line each)');
  },
);

test('a replica whose replay is stopped: bounded by the newest sample it replayed, then lagging', async () => {
  const w = world(1_000, 100);
  await w.router.check(); // sample 0/100 at 0, replayed
  w.primary.state.lsn = '0/200';
  w.replica.state.ageMs = 100_000; // its last commit is old: the samples bound it better
  w.advance(400);
  await w.router.check(); // sample 0/200 at 400, not replayed: bound = now - 0
  assert.equal(w.router.reading().lagMs, 400);
  assert.equal(await w.read(), 'replica');
  w.advance(700);
  await w.router.check();
  assert.equal(w.router.reading().lagMs, 1_100);
  assert.equal(await w.read(), 'primary');
  assert.deepEqual(w.fallbacks, ['lagging']);
});

test(
  'a read that fails on a replica gone down runs on the primary at once; the replica counts as down until a check ' +
    'reaches it',
  async () => {
    const w = world();
    await w.router.check();
    w.replica.state.down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    assert.equal(await w.read(), 'primary');
    assert.equal(await w.read(), 'primary');
    assert.deepEqual(w.fallbacks, ['unavailable', 'unavailable']);
    const tried = w.replica.ran.filter((sql) => sql.includes('list')).length;
    assert.equal(tried, 0, 'the second read did not try the replica');
    await w.router.check();
    assert.equal(w.router.reading().up, false);
    w.replica.state.down = null;
    await w.router.check();
    assert.equal(await w.read(), 'replica');
    assert.deepEqual(w.changes, ['serving', 'unavailable', 'serving']);
  },
);

test(
  "a read cancelled by recovery runs on the primary without marking the replica down; a read's own error is " +
    'not retried',
  async () => {
    const w = world();
    await w.router.check();
    const conflict = new Error('canceling statement due to conflict with recovery');
    w.replica.state.down = Object.assign(conflict, { code: '40001' });
    assert.equal(await w.read(), 'primary');
    assert.equal(w.router.reading().up, true);
    w.replica.state.down = Object.assign(new Error('invalid input syntax'), { code: '22P02' });
    await assert.rejects(w.read(), /invalid input syntax/);
    assert.deepEqual(w.fallbacks, ['unavailable']);
  },
);

test("without the primary's position the lag is unknown: reads go to the primary (lag_unknown)", async () => {
  const w = world();
  await w.router.check();
  w.primary.state.down = Object.assign(new Error('Connection terminated unexpectedly'), {});
  await w.router.check();
  assert.equal(w.router.lagNowMs(), null);
  w.primary.state.down = null;
  assert.equal(await w.read(), 'primary');
  assert.deepEqual(w.fallbacks, ['lag_unknown']);
});

test(
  'a server that is not in recovery holds every commit: it serves with lag 0; a replica with no replay position ' +
    'is unknown',
  async () => {
    const w = world();
    w.replica.state.recovery = false;
    w.replica.state.replayLsn = null;
    await w.router.check();
    assert.equal(await w.read(), 'replica');
    w.replica.state.recovery = true;
    await w.router.check();
    assert.equal(await w.read(), 'primary');
    assert.deepEqual(w.fallbacks, ['lag_unknown']);
  },
);

test('a transaction runs whole on one side, and statements reach it without a name', async () => {
  const w = world();
  await w.router.check();
  const named = { name: 'x', text: 'SELECT 2 AS list' };
  const got = await w.router.reader.tx(async (q) => (await q.query<{ server: string }>(named)).rows[0]!.server);
  assert.equal(got, 'replica');
  assert.deepEqual(
    w.replica.ran.filter((sql) => sql.startsWith('named')),
    [],
  );
  assert.equal(w.router.reader.transactionPooled, true);
});
