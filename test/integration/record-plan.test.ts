/**
 * The record statement's plan (docs/adr/0016-hot-path-cost.md, decisions 9 and 12): each outcome's delivery
 * is read by a primary-key probe, and the update finds the batch's rows by primary key, whatever the
 * planner's statistics of `deliveries` say. Two cases from the delivery path:
 * - a new database under load, never analysed: a plain join of the outcomes with `deliveries` was planned as
 *   a hash join over a sequential scan of every delivery, once per record statement (decision 9);
 * - a table analysed while few deliveries were leased, then hundreds leased (a large window): the update
 *   took the leased rows from a partial index on state = 'leased', reading every lease of the table per
 *   outcome (decision 12).
 * PostgreSQL server: the plan is read with EXPLAIN of the very statement and parameters the store sends.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { EXTEND_LEASES, RECORD_ATTEMPTS } from '../../src/adapters/postgres/delivery/delivery-sql.ts';
import type { Db, Prepared, Queryable } from '../../src/adapters/postgres/db.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createPublisher } from '../../src/app/publish.ts';
import type { AttemptRecord, ClaimedDelivery } from '../../src/ports/delivery-store.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { cte, deliveryReads, genericPlan, type PlanNode } from '../support/plans.ts';

let t: TestDatabase;
beforeEach(async () => {
  t = await freshServerDatabase();
});
afterEach(async () => {
  await t.drop();
});

/**
 * Publishes 1,000 messages to one endpoint, with autovacuum off for `deliveries`; `analyse` then runs ANALYZE (nothing
 * leased yet).
 */
async function fill(analyse: boolean): Promise<ReturnType<typeof testCipher>> {
  await t.db.query('ALTER TABLE deliveries SET (autovacuum_enabled = false)');
  const cipher = testCipher();
  const appId = await insertApp(t.db);
  await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
  const publisher = createPublisher({
    messages: createPgMessageStore(t.db, cipher, () => undefined),
    clock: new ManualClock(),
    random: cryptoRandom,
  });
  await runTx(t.db, async (tx) => {
    for (let i = 0; i < 1_000; i++) {
      await publisher.publish(tx, {
        appId,
        eventType: 'user.created',
        eventId: null,
        channels: null,
        tags: null,
        payload: Buffer.from(`{"n":${i}}`),
        retentionHours: null,
      });
    }
  });
  if (analyse) await t.db.query('ANALYZE deliveries');
  const analysed = (
    await t.db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM pg_stat_user_tables WHERE relname = 'deliveries' AND (last_analyze IS ` +
        'NOT NULL OR last_autoanalyze IS NOT NULL)',
    )
  ).rows[0]!.n;
  assert.equal(analysed, analyse ? '1' : '0', analyse ? 'the table was analysed' : 'the table has no statistics yet');
  return cipher;
}

/**
 * Claims `claim` deliveries, renews their leases (the heartbeat), records the first `record` of them
 * (successes) and returns the plans of the record statement and of the heartbeat's.
 */
async function recordPlan(
  cipher: ReturnType<typeof testCipher>,
  claim: number,
  record: number,
  planning: 'custom' | 'generic' = 'custom',
): Promise<{ record: PlanNode; extend: PlanNode }> {
  // The store sends its statements through this handle; the test asks for their plans first: planned with
  // the parameters' values (custom), or once for any values (generic), as the small-statement pool plans a
  // record of few outcomes (decision 24).
  const plans = new Map<string, PlanNode[]>();
  const explain = (q: Queryable, text: string, params: readonly unknown[]): Promise<PlanNode> =>
    planning === 'custom'
      ? q
          .query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${text}`, params)
          .then((r) => r.rows[0]!['QUERY PLAN'][0]!.Plan)
      : genericPlan(q, text, params);
  const explaining = (q: Queryable): Queryable => ({
    async query(text: string | Prepared, params?: readonly unknown[]) {
      if (typeof text !== 'string' && (text.name === RECORD_ATTEMPTS.name || text.name === EXTEND_LEASES.name)) {
        const plan = await explain(q, text.text, params ?? []);
        plans.set(text.name, [...(plans.get(text.name) ?? []), plan]);
      }
      return q.query(text, params) as never;
    },
  });
  const db: Db = {
    ...t.db,
    tx: (fn) => t.db.tx((client) => fn(explaining(client))),
    query: (text, params) => explaining(t.db).query(text, params) as never,
  };

  const store = createPgDeliveryStore(db, cipher);
  const { deliveries } = await store.claim({
    dispatcherId: 'D',
    limit: claim,
    leaseMs: 60_000,
    maxReclaims: 5,
    now: null,
  });
  assert.equal(deliveries.length, claim);
  assert.deepEqual(await store.extendLeases(deliveries, 60_000, null), [], 'every lease renewed');
  const records: AttemptRecord[] = deliveries.slice(0, record).map((d: ClaimedDelivery, i) => ({
    deliveryId: d.deliveryId,
    fencingToken: d.fencingToken,
    dispatcherId: d.dispatcherId,
    endpointId: d.endpointId,
    attemptId: `atmpt_${String(i).padStart(27, '0')}`,
    attemptNumber: d.attemptNumber,
    trigger: 'scheduled',
    url: d.url,
    succeeded: true,
    statusCode: 200,
    responseBody: 'ok',
    location: null,
    errorKind: null,
    errorDetail: null,
    durationMs: 3,
    next: { next: 'succeeded' },
    throttleEndpointMs: null,
    disableEndpointReason: null,
  }));
  const result = await store.recordAttempts(records, null);
  assert.equal(result.recorded.length, record, 'every outcome was recorded');
  assert.equal(plans.get(RECORD_ATTEMPTS.name)?.length, 1, 'one record statement for the batch');
  assert.equal(plans.get(EXTEND_LEASES.name)?.length, 1, 'one heartbeat statement');
  return { record: plans.get(RECORD_ATTEMPTS.name)![0]!, extend: plans.get(EXTEND_LEASES.name)![0]! };
}

test(
  "the record statement probes each outcome's delivery by " + 'primary key while the table has no statistics',
  async () => {
    const { record: plan } = await recordPlan(await fill(false), 300, 300);
    const reads = deliveryReads(cte(plan, 'cur'));
    assert.deepEqual(reads, ['Index Scan deliveries_pkey'], `cur reads deliveries by primary key: ${reads.join(', ')}`);
    // The update names 300 of the table's 1,000 rows, with their number known (EXPLAIN plans with the
    // parameters): a scan of the table is a fair choice for so large a part. What it must not do is read every
    // lease through a partial index.
    const upd = deliveryReads(cte(plan, 'upd'));
    assert.ok(upd.length > 0, 'the update reads deliveries');
    assert.ok(
      !upd.some((r) => /deliveries_(lease_expiry|endpoint_leased)/.test(r)),
      `no read of every lease: ${upd.join(', ')}`,
    );
  },
);

test(
  'the record statement and the heartbeat update the deliveries they name, found by primary key, while the ' +
    'statistics say nothing is leased',
  async () => {
    // Analysed before the claim, as on a database in service whose last ANALYZE saw few leases; then 300 are
    // leased (a large window) and 10 of them recorded, the size of a record batch on the delivery path.
    const { record: plan, extend } = await recordPlan(await fill(true), 300, 10);
    const reads = deliveryReads(cte(plan, 'upd'));
    assert.ok(
      reads.length > 0 && reads.every((r) => / deliveries_pkey$/.test(r)),
      `the update finds its rows by primary key: ${reads.join(', ')}`,
    );
    assert.deepEqual(deliveryReads(cte(plan, 'cur')), ['Index Scan deliveries_pkey']);
    // The heartbeat renews 300 of the table's 1,000 rows: the planner may scan the table for so large a part,
    // but it must not take the rows from a partial index of leases that the statistics think is empty.
    const beat = deliveryReads(extend);
    assert.ok(
      beat.length > 0 && !beat.some((r) => /deliveries_(lease_expiry|endpoint_leased)/.test(r)),
      `the heartbeat does not read a partial index of leases: ${beat.join(', ')}`,
    );
  },
);

test(
  'planned once for any values (a record of few outcomes on the small-statement pool, decision 24), the record ' +
    'statement still finds its rows by primary key',
  async () => {
    for (const analyse of [false, true]) {
      await t.drop();
      t = await freshServerDatabase();
      const { record: plan } = await recordPlan(await fill(analyse), 300, 4, 'generic');
      assert.deepEqual(deliveryReads(cte(plan, 'cur')), ['Index Scan deliveries_pkey'], `analysed: ${analyse}`);
      const upd = deliveryReads(cte(plan, 'upd'));
      assert.ok(
        upd.length > 0 && upd.every((r) => / deliveries_pkey$/.test(r)),
        `analysed: ${analyse}; the update finds its rows by primary key: ${upd.join(', ')}`,
      );
    }
  },
);
