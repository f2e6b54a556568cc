/**
 * The roll-up's watermark never passes a timeline row that is not committed yet (server only: it needs two
 * open transactions at once). Identity values are drawn before commit, so a row with a lower id can become
 * visible after a higher one; the roll-up waits for the transactions that held a write lock on the timeline
 * when it last looked (docs/adr/0015-time-in-state-rollups.md).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createPgStatsRollup } from '../../src/adapters/postgres/delivery/stats-rollup.ts';
import { createPgStatsStore } from '../../src/adapters/postgres/delivery/stats-store.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
let t: TestDatabase;
let deliveryId: string;

before(async () => {
  t = await freshServerDatabase();
  const appId = await insertApp(t.db);
  const ep = await insertEndpoint(t.db, testCipher(), { appId, url: 'http://127.0.0.1:9/' });
  await t.db.query(`INSERT INTO messages (id, app_id, event_type) VALUES ('msg_r1', $1, 'e')`, [appId]);
  deliveryId = (
    await t.db.query<{ id: string }>(
      `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at)
    VALUES ($1, 'msg_r1', $2, 'succeeded', $3, $3) RETURNING id`,
      [appId, ep.id, NOW],
    )
  ).rows[0]!.id;
});
after(async () => {
  await t.drop();
});

const attemptRow =
  'INSERT INTO delivery_events (delivery_id, state, latency_ms, at) ' + `VALUES ($1, 'succeeded', $2, $3) RETURNING id`;

test(
  'a timeline row committed after a higher id is still counted ' + 'once: the watermark waits for its writer',
  async () => {
    const rollup = createPgStatsRollup(t.db);
    const stats = createPgStatsStore(t.db);
    const read = () =>
      stats.timeInState(
        { appId: null, endpointId: null },
        new Date(NOW.getTime() - 300_000),
        new Date(NOW.getTime() + 60_000),
        10_000,
      );
    const slow = new pg.Client({ connectionString: t.url });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      const low = Number(
        (await slow.query<{ id: string }>(attemptRow, [deliveryId, 10, new Date(NOW.getTime() + 1_000)])).rows[0]!.id,
      );
      const high = Number(
        (await t.db.query<{ id: string }>(attemptRow, [deliveryId, 20, new Date(NOW.getTime() + 2_000)])).rows[0]!.id,
      );
      assert.ok(low < high);

      const first = await rollup.step(NOW, 1_000);
      assert.equal(first.rolledId, 0, 'the uncommitted row holds the watermark back');
      const second = await rollup.step(NOW, 1_000);
      assert.equal(second.rolledId, 0, 'its writer is still running');
      assert.equal((await read()).attempts, 1, 'the committed row is read from the raw tail');

      await slow.query('COMMIT');
      assert.equal((await read()).attempts, 2);
      const third = await rollup.step(NOW, 1_000);
      assert.equal(third.rolledId, high, 'every writer seen before has finished');
      const figures = await read();
      assert.equal(figures.attempts, 2);
      assert.equal(figures.attemptLatencyMs.count, 2);
      const [sum] = (
        await t.db.query<{ n: number }>(
          `SELECT sum(attempts)::int AS n FROM stats_rollups WHERE level_ms = 1000 AND app_id = ''`,
        )
      ).rows;
      assert.equal(sum!.n, 2, 'both rows are in the rollups, once');
    } finally {
      await slow.end();
    }
  },
);

test('a row is rolled up at every level that keeps it and at no level too short to keep it', async () => {
  await t.db.query('TRUNCATE stats_rollups');
  await t.db.query(
    'UPDATE stats_rollup_state SET rolled_id = (SELECT max(id) FROM delivery_events), pending_id = NULL, ' +
      'pending_writers = NULL',
  );
  const rollup = createPgStatsRollup(t.db);
  // Ages 1 min, 30 min, 3 h and 2 d before NOW: kept by the 1 s level (10 min) only for the first, by the
  // 10 s level (2 h) for the first two, by the 1 min level (25 h) for the first three, by 15 min (8 d) for all.
  const agesMs = [60_000, 30 * 60_000, 3 * 3_600_000, 2 * 86_400_000];
  for (const [i, age] of agesMs.entries())
    await t.db.query(attemptRow, [deliveryId, 10 * (i + 1), new Date(NOW.getTime() - age)]);
  const step = await rollup.step(NOW, 1_000);
  assert.equal(step.caughtUp, true);
  const rows = (
    await t.db.query<{ level_ms: number; scope: string; n: number }>(
      `SELECT level_ms, CASE WHEN app_id = '' THEN 'installation' WHEN endpoint_id = '' THEN 'application'
        ELSE 'endpoint' END AS scope,
            sum(attempts)::int AS n FROM stats_rollups GROUP BY 1, 2 ORDER BY 1, 2`,
    )
  ).rows;
  const byLevel = (level: number) => rows.filter((r) => r.level_ms === level).map((r) => [r.scope, r.n]);
  assert.deepEqual(byLevel(1_000), [
    ['application', 1],
    ['endpoint', 1],
    ['installation', 1],
  ]);
  assert.deepEqual(byLevel(10_000), [
    ['application', 2],
    ['endpoint', 2],
    ['installation', 2],
  ]);
  assert.deepEqual(byLevel(60_000), [
    ['application', 3],
    ['endpoint', 3],
    ['installation', 3],
  ]);
  assert.deepEqual(byLevel(900_000), [
    ['application', 4],
    ['endpoint', 4],
    ['installation', 4],
  ]);
});
