/**
 * The claim's plans hold whatever the planner's statistics say (docs/adr/0016-hot-path-cost.md). Two cases:
 * - decision 14: one endpoint with a backlog, analysed (an installation with a single endpoint catching up
 *   after an outage). Written as EXISTS, the "has due work" test became a semi join over a bitmap of every
 *   due row, built again at each claim, so a claim's cost grew with the backlog;
 * - decision 15: many expired leases (dispatchers gone), the table analysed while none was leased. Written
 *   as a join with `endpoints`, the reclaim step read every expired lease of every endpoint, joined and
 *   sorted them before its LIMIT, so a claim's cost grew with the number of expired leases.
 * PostgreSQL server: the plans of the claim function's inner statements are read with auto_explain, sent back
 * to this session as notices.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { cte, deliveryReads, explainedPlans, nodes } from '../support/plans.ts';

const ROWS = 5_000;
const CLAIM = `SELECT id FROM tidings_claim('W', 10, 30000, NULL, 5, '{}', 10, '{}', '{}', '{}', '{}', 10)`;
let t: TestDatabase;

beforeEach(async () => {
  t = await freshServerDatabase();
});
afterEach(async () => {
  await t.drop();
});

/** `ROWS` messages with one delivery each, spread over `endpoints` endpoints, all pending and due an hour ago. */
async function fill(endpoints: number): Promise<void> {
  await t.db.query('ALTER TABLE deliveries SET (autovacuum_enabled = false)');
  const cipher = testCipher();
  const appId = await insertApp(t.db);
  const ids: string[] = [];
  for (let i = 0; i < endpoints; i += 1)
    ids.push((await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' })).id);
  await t.db.query(
    `INSERT INTO messages (id, app_id, event_type, payload, payload_key_id)
                    SELECT 'msg_plan' || lpad(i::text, 8, '0'), $1, 'e', '\\x7b7d', 'plain'
                      FROM generate_series(1, $2) i`,
    [appId, ROWS],
  );
  await t.db.query(
    `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at)
                    SELECT $1, 'msg_plan' || lpad(i::text, 8, '0'), ($2::text[])[1 + i % cardinality($2::text[])],
                      'pending',
                           now() - interval '1 hour' + i * interval '1 ms'
                    FROM generate_series(1, $3) i`,
    [appId, ids, ROWS],
  );
}

test("one endpoint's backlog, analysed: the claim finds due work without reading every due row", async () => {
  await fill(1);
  await t.db.query('ANALYZE');
  const plans = await explainedPlans(t.url!, CLAIM, 6, 'WITH t AS');
  assert.equal(plans.length, 6);
  for (const plan of plans) {
    const ep = cte(plan, 'ep');
    const reads = deliveryReads(ep);
    assert.ok(reads.length > 0, 'CTE ep reads deliveries');
    assert.deepEqual(
      reads.filter((r) => !r.startsWith('Index')),
      [],
      `CTE ep reads deliveries only through an index scan: ${reads.join(', ')}`,
    );
    const limited = nodes(ep).some(
      (n) => n['Node Type'] === 'Limit' && nodes(n).some((c) => c['Relation Name'] === 'deliveries'),
    );
    assert.ok(limited, 'the index scan stops at the first due row (LIMIT 1)');
  }
});

test(
  'many expired leases, analysed while none was leased: the reclaim step reads them in expiry order and stops at ' +
    'its limit',
  async () => {
    await fill(20);
    await t.db.query('ANALYZE');
    // Every delivery leased by a dispatcher that is gone: the leases expired a minute ago.
    await t.db.query(`UPDATE deliveries SET state = 'leased', dispatcher_id = 'gone', fencing_token = 1,
                    lease_expires_at = now() - interval '1 minute' + id * interval '1 ms'`);
    const plans = await explainedPlans(t.url!, CLAIM, 6, 'WITH t AS');
    assert.equal(plans.length, 6);
    for (const plan of plans) {
      const expired = cte(plan, 'expired');
      const reads = deliveryReads(expired);
      assert.deepEqual(
        reads,
        ['Index Scan deliveries_lease_expiry'],
        `CTE expired reads deliveries in expiry order: ${reads.join(', ')}`,
      );
      const sorts = nodes(expired).filter((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort');
      assert.deepEqual(
        sorts.map((n) => n['Node Type']),
        [],
        'CTE expired sorts nothing: the index gives the order',
      );
    }
    const reclaimed = await t.db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM deliveries WHERE dispatcher_id = 'W'`,
    );
    assert.equal(reclaimed.rows[0]!.n, '60', 'six claims reclaimed ten expired leases each');
  },
);
