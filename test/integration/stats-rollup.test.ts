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
  deliveryId = (await t.db.query<{ id: string }>(`INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at)
    VALUES ($1, 'msg_r1', $2, 'succeeded', $3, $3) RETURNING id`, [appId, ep.id, NOW])).rows[0]!.id;
});
after(async () => { await t.drop(); });

const attemptRow = `INSERT INTO delivery_events (delivery_id, state, latency_ms, at) VALUES ($1, 'succeeded', $2, $3) RETURNING id`;

test('a timeline row committed after a higher id is still counted once: the watermark waits for its writer', async () => {
  const rollup = createPgStatsRollup(t.db);
  const stats = createPgStatsStore(t.db);
  const read = () => stats.timeInState({ appId: null, endpointId: null }, new Date(NOW.getTime() - 300_000), new Date(NOW.getTime() + 60_000), 10_000);
  const slow = new pg.Client({ connectionString: t.url });
  await slow.connect();
  try {
    await slow.query('BEGIN');
    const low = Number((await slow.query<{ id: string }>(attemptRow, [deliveryId, 10, new Date(NOW.getTime() + 1_000)])).rows[0]!.id);
    const high = Number((await t.db.query<{ id: string }>(attemptRow, [deliveryId, 20, new Date(NOW.getTime() + 2_000)])).rows[0]!.id);
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
    const [sum] = (await t.db.query<{ n: number }>(`SELECT sum(attempts)::int AS n FROM stats_rollups WHERE level_ms = 1000 AND app_id = ''`)).rows;
    assert.equal(sum!.n, 2, 'both rows are in the rollups, once');
  } finally {
    await slow.end();
  }
});
