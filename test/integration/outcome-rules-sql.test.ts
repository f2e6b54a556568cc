/**
 * The record statement executes two outcome rules of src/domain/outcome-rules.ts where it writes the rows:
 * the state a delivery settles in (`settledState`) and the breaker's transitions (`breakerAfter`). Both
 * engines: each case of the domain's rules is set up in the database, recorded through the real
 * `recordAttempts`, and the rows it leaves are compared with what the pure function says.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { breakerAfter, settledState, type BreakerState, type OutcomePolicy } from '../../src/domain/outcome-rules.ts';
import type { NextStep } from '../../src/domain/retry-schedule.ts';
import type { AttemptRecord, DeliveryStore } from '../../src/ports/delivery-store.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';

const NOW = new Date(Date.UTC(2026, 0, 1, 12));
const POLICY: OutcomePolicy = {
  breakerThreshold: 3,
  breakerCooldownMs: 1_000,
  breakerMaxCooldownMs: 5_000,
  autoDisableAfterMs: 365 * 86_400_000,
};
const cipher = testCipher();
let seq = 0;

/** An outcome of the delivery `id` leased with token 1 by dispatcher W. */
function outcome(id: string, endpointId: string, next: NextStep, manual: boolean): AttemptRecord {
  const ok = next.next === 'succeeded';
  seq += 1;
  return {
    deliveryId: id,
    fencingToken: '1',
    dispatcherId: 'W',
    endpointId,
    attemptId: `atmpt_rules_${seq}`,
    attemptNumber: 1,
    trigger: manual ? 'manual' : 'scheduled',
    url: 'http://127.0.0.1:9/',
    succeeded: ok,
    statusCode: ok ? 200 : 500,
    responseBody: '',
    location: null,
    errorKind: ok ? null : 'http_status',
    errorDetail: null,
    durationMs: 5,
    next,
    throttleEndpointMs: null,
    disableEndpointReason: null,
  };
}

for (const engine of ENGINES) {
  describe(`the record statement follows the outcome rules (${engine.name})`, () => {
    let t: TestDatabase;
    let store: DeliveryStore;
    let appId: string;

    before(async () => {
      t = await engine.fresh();
      store = createPgDeliveryStore(t.db, cipher, { policy: POLICY });
      appId = await insertApp(t.db);
    });
    after(async () => {
      await t.drop();
    });

    /**
     * A leased delivery (token 1, dispatcher W) of a new message to `endpointId`; `manualReturn` makes it a
     * resend of a dead letter, which keeps the reason it died of (`gone`).
     */
    const leased = async (endpointId: string, manualReturn: string | null): Promise<string> => {
      const messageId = `msg_rules_${++seq}`;
      await t.db.query(`INSERT INTO messages (id, app_id, event_type) VALUES ($1, $2, 'e')`, [messageId, appId]);
      return (
        await t.db.query<{ id: string }>(
          `INSERT INTO deliveries (app_id, message_id, endpoint_id, state, next_attempt_at, created_at, dispatcher_id,
            lease_expires_at, fencing_token, manual, manual_return, dead_reason)
         VALUES ($1, $2, $3, 'leased', $4, $4, 'W', $4::timestamptz + interval '1 minute', 1, $5, $6, $7) RETURNING id`,
          [
            appId,
            messageId,
            endpointId,
            NOW,
            manualReturn !== null,
            manualReturn,
            manualReturn === null ? null : 'gone',
          ],
        )
      ).rows[0]!.id;
    };

    test('settledState: every next step × endpoint status × resend', async () => {
      const nexts: { step: NextStep; next: 'succeeded' | 'pending' | 'dead' }[] = [
        { step: { next: 'succeeded' }, next: 'succeeded' },
        { step: { next: 'retry', delayMs: 60_000 }, next: 'pending' },
        { step: { next: 'dead', reason: 'exhausted' }, next: 'dead' },
      ];
      const endpoints: { status: 'active' | 'paused' | 'disabled'; deleted: boolean }[] = [
        { status: 'active', deleted: false },
        { status: 'paused', deleted: false },
        { status: 'disabled', deleted: false },
        { status: 'active', deleted: true },
      ];
      let cases = 0;
      for (const ep of endpoints) {
        for (const manualReturn of [null, 'dead']) {
          for (const n of nexts) {
            const endpoint = (
              await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/', status: ep.status })
            ).id;
            const id = await leased(endpoint, manualReturn);
            if (ep.deleted) await t.db.query('UPDATE endpoints SET deleted_at = $2 WHERE id = $1', [endpoint, NOW]);
            const result = await store.recordAttempts([outcome(id, endpoint, n.step, manualReturn !== null)], NOW);
            assert.deepEqual(result.recorded, [id]);
            // The dead reason the delivery ends with: the outcome's, or for a failed resend the one it died of before.
            const deadReason = n.next !== 'dead' ? null : manualReturn === null ? 'exhausted' : 'gone';
            const expected = settledState(n.next, ep, manualReturn, deadReason, manualReturn !== null);
            const row = (
              await t.db.query<{ state: string; held: boolean; reason: string | null }>(
                `SELECT d.state, d.next_attempt_at = 'infinity' AS held,
                      (SELECT e.reason FROM delivery_events e WHERE e.delivery_id = d.id ORDER BY e.id DESC
                        LIMIT 1) AS reason
               FROM deliveries d WHERE d.id = $1`,
                [id],
              )
            ).rows[0]!;
            const what =
              `${n.next} with the endpoint ` +
              `${ep.deleted ? 'deleted' : ep.status}${manualReturn === null ? '' : ', a resend'}`;
            assert.deepEqual(
              { state: row.state, held: row.held, reason: row.reason },
              { state: expected.state, held: expected.held, reason: expected.reason },
              what,
            );
            cases += 1;
          }
        }
      }
      assert.equal(cases, 24);
    });

    test('breakerAfter: every breaker state × counters × batch of successes and failures', async () => {
      const befores: { state: BreakerState; consecutiveFailures: number; openedInARow: number }[] = [
        { state: 'closed', consecutiveFailures: 0, openedInARow: 0 },
        { state: 'closed', consecutiveFailures: 1, openedInARow: 0 },
        { state: 'closed', consecutiveFailures: 2, openedInARow: 2 },
        { state: 'half_open', consecutiveFailures: 3, openedInARow: 1 },
        { state: 'half_open', consecutiveFailures: 3, openedInARow: 3 },
        { state: 'open', consecutiveFailures: 4, openedInARow: 1 },
      ];
      const batches = [
        { ok: 0, failed: 1 },
        { ok: 0, failed: 2 },
        { ok: 1, failed: 0 },
        { ok: 1, failed: 2 },
      ];
      let cases = 0;
      for (const b of befores) {
        for (const batch of batches) {
          const endpoint = (await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/' })).id;
          await t.db.query(
            'UPDATE endpoints SET breaker_state = $2, consecutive_failures = $3, breaker_opened_count = $4 ' +
              'WHERE id = $1',
            [endpoint, b.state, b.consecutiveFailures, b.openedInARow],
          );
          const records: AttemptRecord[] = [];
          for (let i = 0; i < batch.ok; i++)
            records.push(outcome(await leased(endpoint, null), endpoint, { next: 'succeeded' }, false));
          for (let i = 0; i < batch.failed; i++)
            records.push(outcome(await leased(endpoint, null), endpoint, { next: 'retry', delayMs: 60_000 }, false));
          await store.recordAttempts(records, NOW);
          const expected = breakerAfter(b, batch.ok, batch.failed, POLICY);
          const row = (
            await t.db.query<{ state: BreakerState; failures: number; opened: number; opens_for_ms: number | null }>(
              `SELECT breaker_state AS state, consecutive_failures AS failures, breaker_opened_count AS opened,
                    CASE WHEN breaker_state = 'open' AND $2
                      THEN (extract(epoch FROM breaker_open_until - $3::timestamptz) * 1000)::int END AS opens_for_ms
             FROM endpoints WHERE id = $1`,
              [endpoint, expected.opensForMs !== null, NOW],
            )
          ).rows[0]!;
          const what =
            `${b.state} (${b.consecutiveFailures} failures, ${b.openedInARow} openings) after ${batch.ok} ok and ` +
            `${batch.failed} failed`;
          assert.deepEqual(
            {
              state: row.state,
              consecutiveFailures: row.failures,
              openedInARow: row.opened,
              opensForMs: row.opens_for_ms,
            },
            {
              state: expected.state,
              consecutiveFailures: expected.consecutiveFailures,
              openedInARow: expected.openedInARow,
              opensForMs: expected.opensForMs,
            },
            what,
          );
          cases += 1;
        }
      }
      assert.equal(cases, 24);
    });
  });
}
