/**
 * The record statement's plan (docs/adr/0016-hot-path-cost.md, decision 9): each outcome's delivery is read
 * by a primary-key probe, also when the planner's statistics of `deliveries` lag the table, as on a new
 * database under load. A plain join of the outcomes with `deliveries` was planned there as a hash join over
 * a sequential scan of every delivery, once per record statement. PostgreSQL server: the plan is read with
 * EXPLAIN of the very statement and parameters the store sends.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { RECORD_ATTEMPTS } from '../../src/adapters/postgres/delivery/delivery-sql.ts';
import type { Db, Prepared, Queryable } from '../../src/adapters/postgres/db.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import { cryptoRandom } from '../../src/adapters/system/system-clock.ts';
import { createPublisher } from '../../src/app/publish.ts';
import type { AttemptRecord } from '../../src/ports/delivery-store.ts';
import { testCipher } from '../support/cipher.ts';
import { freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { ManualClock } from '../support/manual-clock.ts';

/** A plan node of EXPLAIN (FORMAT JSON), as far as this test reads it. */
interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

let t: TestDatabase;
before(async () => { t = await freshServerDatabase(); });
after(async () => { await t.drop(); });

test('the record statement probes deliveries by primary key while its statistics lag the table', async () => {
  // Statistics as on a new database under load: the table has grown and has never been analysed.
  await t.db.query('ALTER TABLE deliveries SET (autovacuum_enabled = false)');
  const cipher = testCipher();
  const appId = await insertApp(t.db);
  await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' });
  const publisher = createPublisher({ messages: createPgMessageStore(t.db, cipher, () => undefined), clock: new ManualClock(), random: cryptoRandom });
  await runTx(t.db, async (tx) => {
    for (let i = 0; i < 1_000; i++) {
      await publisher.publish(tx, { appId, eventType: 'user.created', eventId: null, channels: null, tags: null, payload: Buffer.from(`{"n":${i}}`), retentionHours: null });
    }
  });
  const analysed = (await t.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM pg_stat_user_tables WHERE relname = 'deliveries' AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)`)).rows[0]!.n;
  assert.equal(analysed, '0', 'the table has no statistics yet');

  // The store sends its record statement through this handle; the test asks for that statement's plan first.
  const plans: PlanNode[] = [];
  const explaining = (q: Queryable): Queryable => ({
    async query(text: string | Prepared, params?: readonly unknown[]) {
      if (typeof text !== 'string' && text.name === RECORD_ATTEMPTS.name) {
        const plan = await q.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${text.text}`, params);
        plans.push(plan.rows[0]!['QUERY PLAN'][0]!.Plan);
      }
      return q.query(text, params) as never;
    },
  });
  const db: Db = { ...t.db, tx: (fn) => t.db.tx((client) => fn(explaining(client))), query: (text, params) => explaining(t.db).query(text, params) as never };

  const store = createPgDeliveryStore(db, cipher);
  const { deliveries } = await store.claim({ dispatcherId: 'D', limit: 300, leaseMs: 60_000, maxReclaims: 5, now: null });
  assert.equal(deliveries.length, 300);
  const records: AttemptRecord[] = deliveries.map((d, i) => ({
    deliveryId: d.deliveryId, fencingToken: d.fencingToken, dispatcherId: d.dispatcherId, endpointId: d.endpointId,
    attemptId: `atmpt_${String(i).padStart(27, '0')}`, attemptNumber: d.attemptNumber, trigger: 'scheduled', url: d.url,
    succeeded: true, statusCode: 200, responseBody: 'ok', location: null, errorKind: null, errorDetail: null, durationMs: 3,
    next: { next: 'succeeded' }, throttleEndpointMs: null, disableEndpointReason: null,
  }));
  const result = await store.recordAttempts(records, null);
  assert.equal(result.recorded.length, 300, 'every outcome was recorded');

  assert.equal(plans.length, 1, 'one record statement for the batch');
  const scans = nodes(plans[0]!).filter((n) => n['Relation Name'] === 'deliveries').map((n) => n['Node Type']);
  assert.ok(scans.length > 0, 'the plan reads deliveries');
  assert.ok(!scans.includes('Seq Scan'), `no sequential scan of deliveries: ${scans.join(', ')}`);
});
