/**
 * The claim's "has due work" test reads an index until the first due row of the endpoint, whatever the
 * planner's statistics say (docs/adr/0016-hot-path-cost.md, decision 14). The case: one endpoint with a
 * backlog, analysed (an installation with a single endpoint catching up after an outage). Written as
 * EXISTS, the planner turned the test into a semi join over a bitmap of every due row, built again at each
 * claim, so a claim's cost grew with the backlog.
 * PostgreSQL server: the plans of the claim function's inner statements are read with auto_explain, sent back
 * to this session as notices.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';

/** A plan node of auto_explain's JSON output, as far as this test reads it. */
interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Subplan Name'?: string;
  readonly Plans?: readonly PlanNode[];
}
const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

const BACKLOG = 5_000;
let t: TestDatabase;

before(async () => {
  t = await freshServerDatabase();
  const cipher = testCipher();
  const appId = await insertApp(t.db);
  const endpointId = (await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' })).id;
  await t.db.query(`INSERT INTO messages (id, app_id, event_type, payload, payload_key_id)
                    SELECT 'msg_plan' || lpad(i::text, 8, '0'), $1, 'e', '\\x7b7d', 'plain' FROM generate_series(1, $2) i`, [appId, BACKLOG]);
  await t.db.query(`INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at)
                    SELECT $1, 'msg_plan' || lpad(i::text, 8, '0'), $2, 'pending', now() - interval '1 hour' + i * interval '1 ms'
                    FROM generate_series(1, $3) i`, [appId, endpointId, BACKLOG]);
  await t.db.query('ANALYZE');
});
after(async () => { await t.drop(); });

test("one endpoint's backlog, analysed: the claim finds due work without reading every due row", async () => {
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  const plans: PlanNode[] = [];
  client.on('notice', (notice) => {
    const text = notice.message ?? '';
    const start = text.indexOf('{');
    if (start < 0) return;
    const parsed = JSON.parse(text.slice(start)) as { 'Query Text': string; Plan: PlanNode };
    if (parsed['Query Text'].includes('WITH t AS')) plans.push(parsed.Plan);
  });
  try {
    await client.query(`LOAD 'auto_explain'`);
    await client.query(`SET auto_explain.log_min_duration = 0`);
    await client.query(`SET auto_explain.log_nested_statements = on`);
    await client.query(`SET auto_explain.log_format = 'json'`);
    await client.query(`SET auto_explain.log_level = 'notice'`);
    // Six calls: PL/pgSQL plans the first five with the call's values and may switch to a generic plan after.
    for (let i = 0; i < 6; i += 1) {
      const res = await client.query(`SELECT id FROM tidings_claim('W', 10, 30000, NULL, 5, '{}', 10, '{}', '{}', '{}', '{}', 10)`);
      assert.equal(res.rowCount, 10);
    }
  } finally {
    await client.end();
  }
  assert.equal(plans.length, 6);
  for (const plan of plans) {
    const ep = nodes(plan).find((n) => n['Subplan Name'] === 'CTE ep');
    assert.ok(ep !== undefined, 'the claim statement has CTE ep');
    const reads = nodes(ep).filter((n) => n['Relation Name'] === 'deliveries').map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim());
    assert.ok(reads.length > 0, 'CTE ep reads deliveries');
    assert.deepEqual(reads.filter((r) => !r.startsWith('Index')), [], `CTE ep reads deliveries only through an index scan: ${reads.join(', ')}`);
    const limited = nodes(ep).some((n) => n['Node Type'] === 'Limit' && nodes(n).some((c) => c['Relation Name'] === 'deliveries'));
    assert.ok(limited, 'the index scan stops at the first due row (LIMIT 1)');
  }
});
