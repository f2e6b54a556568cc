/**
 * Retention and erasure (docs/guides/security.md) on both engines. Time is steered through the store's `now` seam (an
 * instant in the future), never by waiting: payloads expire per message retention counted from the last
 * final transition of all its deliveries and never while one is pending or leased; succeeded deliveries are
 * pruned with their attempts and timeline rows; expired idempotency keys go; erasure by tag or eventId
 * prefix runs as a background task and touches nothing else.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runErasures, runRetention, type RetentionDeps, type RetentionSettings } from '../../src/app/retention.ts';
import { pgRetentionDeps } from '../../src/main/retention-job.ts';
import type { Clock } from '../../src/ports/clock.ts';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const settings: RetentionSettings = { payloadRetentionMs: 90 * DAY, succeededAgeMs: 30 * DAY, batch: 2 };
const at = (instant: Date): Clock => ({ nowMs: () => instant.getTime(), sqlNow: () => instant });

for (const engine of ENGINES) {
  describe(`retention and erasure (${engine.name})`, () => {
    let api: ApiHarness;
    let store: RetentionDeps;
    let base: Date;
    before(async () => {
      api = await startApi(engine.fresh);
      store = pgRetentionDeps(api.database.db);
      base = (await api.database.db.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;
    });
    after(async () => api?.close());

    const q = <R extends object>(sql: string, params: unknown[] = []) =>
      api.database.db.query<R & Record<string, unknown>>(sql, params).then((r) => r.rows);
    const later = (ms: number): Date => new Date(base.getTime() + ms);

    async function publish(appId: string, body: object): Promise<string> {
      const res = await api.request('POST', `/api/v1/app/${appId}/msg`, { body: JSON.stringify(body) });
      assert.equal(res.status, 202, await res.clone().text());
      return ((await res.json()) as { id: string }).id;
    }
    /** Moves the message's deliveries to `state` at `when` (as the dispatcher would have), with one attempt each. */
    async function settle(messageId: string, state: string, when: Date, endpointId?: string): Promise<void> {
      const rows = await q<{ id: string; app_id: string; endpoint_id: string }>(
        'UPDATE deliveries SET state = $2, updated_at = $3 WHERE message_id = $1 AND ($4::text IS NULL OR ' +
          'endpoint_id = $4) RETURNING id, app_id, endpoint_id',
        [messageId, state, when, endpointId ?? null],
      );
      for (const d of rows) {
        await q(
          `INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger, succeeded,
            response_status_code, response_body, url, duration_ms, dispatcher_id, fencing_token, created_at)
                 VALUES ('atmpt_' || md5(random()::text), $1, $2, $3, $4, 1, 'scheduled', $5, 200,
                   'RESPONSE-BODY-MARKER', 'http://127.0.0.1:9/', 5, 'w', 1, $6)`,
          [d.id, d.app_id, messageId, d.endpoint_id, state === 'succeeded', when],
        );
        await q(`INSERT INTO delivery_events (delivery_id, state, at) VALUES ($1, $2, $3)`, [d.id, state, when]);
      }
    }
    const message = async (id: string) =>
      (
        await q<{ payload: Buffer | null; payload_expunged_at: Date | null; retention_hours: number | null }>(
          'SELECT payload, payload_expunged_at, retention_hours FROM messages WHERE id = $1',
          [id],
        )
      )[0]!;
    const bodies = async (id: string) =>
      (
        await q<{ response_body: string | null }>(
          'SELECT convert_from(response_body, $$UTF8$$) AS response_body FROM attempts WHERE message_id = $1',
          [id],
        )
      ).map((r) => r.response_body);
    const expire = (when: Date) => runRetention(store, { ...settings, succeededAgeMs: 0 }, at(when));

    test(
      'a payload expires its retention after the last final transition of all its deliveries, never while one is ' +
        'pending or leased; the history stays',
      async () => {
        const app = await api.svix.application.create({ name: 'retention' });
        const [ep1, ep2] = [
          await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/a' }),
          await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/b' }),
        ];
        const short = await publish(app.id, { eventType: 'r.t', payload: { short: true }, payloadRetentionHours: 1 });
        const days = await publish(app.id, { eventType: 'r.t', payload: { days: true }, payloadRetentionPeriod: 2 });
        const plain = await publish(app.id, { eventType: 'r.t', payload: { plain: true } });
        assert.equal((await message(short)).retention_hours, 1);
        assert.equal((await message(days)).retention_hours, 48, 'payloadRetentionPeriod is in days');
        assert.equal((await message(plain)).retention_hours, null, 'the deployment default applies');

        await expire(later(3 * HOUR));
        assert.equal((await message(short)).payload_expunged_at, null, 'both deliveries are still pending');
        await q(
          `UPDATE deliveries SET state = 'leased', dispatcher_id = 'w', lease_expires_at = $2 WHERE message_id = $1`,
          [short, later(DAY)],
        );
        await expire(later(3 * HOUR));
        assert.equal((await message(short)).payload_expunged_at, null, 'never while a delivery is leased');

        await settle(short, 'succeeded', later(4 * HOUR), ep1.id);
        await settle(short, 'dead', later(6 * HOUR), ep2.id);
        await expire(later(6 * HOUR + 30 * 60_000));
        assert.equal(
          (await message(short)).payload_expunged_at,
          null,
          'one hour has not passed since the last final transition',
        );
        await expire(later(7 * HOUR + 60_000));
        const gone = await message(short);
        assert.notEqual(gone.payload_expunged_at, null);
        assert.equal(gone.payload, null);
        assert.deepEqual(await bodies(short), [null, null], 'stored response bodies are expunged too');
        assert.equal((await q('SELECT 1 FROM deliveries WHERE message_id = $1', [short])).length, 2, 'deliveries stay');
        assert.equal(
          (
            await q(
              'SELECT 1 FROM delivery_events d JOIN deliveries x ON x.id = d.delivery_id WHERE x.message_id = $1',
              [short],
            )
          ).length >= 4,
          true,
          'the timeline stays',
        );
        const read = await api.svix.message.get(app.id, short);
        assert.deepEqual(read.payload, {}, 'an expunged message reads with an empty payload');
        assert.equal((await api.svix.messageAttempt.listByMsg(app.id, short)).data.length, 2, 'attempts stay listed');

        await settle(days, 'succeeded', later(HOUR));
        await settle(plain, 'succeeded', later(HOUR));
        await expire(later(HOUR + 47 * HOUR));
        assert.equal((await message(days)).payload_expunged_at, null);
        await expire(later(HOUR + 49 * HOUR));
        assert.notEqual((await message(days)).payload_expunged_at, null, 'two days after its last final transition');
        assert.equal((await message(plain)).payload_expunged_at, null, 'the 90-day default still holds it');
        await expire(later(HOUR + 91 * DAY));
        assert.notEqual((await message(plain)).payload_expunged_at, null);
        assert.deepEqual(await bodies(plain), [null, null]);
      },
    );

    test(
      'succeeded deliveries are pruned with their attempts and timeline after the configured age; other states ' +
        'stay; the payload clock survives the pruning',
      async () => {
        const app = await api.svix.application.create({ name: 'prune' });
        const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/p' });
        const ok = await Promise.all(
          [1, 2, 3, 4, 5].map((n) => publish(app.id, { eventType: 'p.t', payload: { n }, payloadRetentionPeriod: 40 })),
        );
        const dead = await publish(app.id, { eventType: 'p.t', payload: { dead: true } });
        const pending = await publish(app.id, { eventType: 'p.t', payload: { pending: true } });
        for (const id of ok) await settle(id, 'succeeded', later(2 * HOUR));
        await settle(dead, 'dead', later(HOUR));
        const deliveryIds = (
          await q<{ id: string }>('SELECT id FROM deliveries WHERE message_id = ANY ($1)', [ok])
        ).map((r) => r.id);

        const early = await runRetention(store, settings, at(later(29 * DAY)));
        assert.equal(early.deliveriesPruned, 0);
        const report = await runRetention(store, settings, at(later(31 * DAY)));
        assert.ok(report.deliveriesPruned >= 5, 'in batches of 2');
        assert.equal((await q('SELECT 1 FROM deliveries WHERE id = ANY ($1::bigint[])', [deliveryIds])).length, 0);
        assert.equal(
          (await q('SELECT 1 FROM attempts WHERE delivery_id = ANY ($1::bigint[])', [deliveryIds])).length,
          0,
          'their attempts are gone',
        );
        assert.equal(
          (await q('SELECT 1 FROM delivery_events WHERE delivery_id = ANY ($1::bigint[])', [deliveryIds])).length,
          0,
          'their timeline rows are gone',
        );
        assert.deepEqual(
          (
            await q<{ state: string }>('SELECT state FROM deliveries WHERE message_id = ANY ($1) ORDER BY state', [
              [dead, pending],
            ])
          ).map((r) => r.state),
          ['dead', 'pending'],
          'a dead letter and a pending delivery are kept',
        );
        assert.equal(
          (
            await q<{ n: number }>(
              `SELECT count(*)::int AS n FROM messages WHERE id = ANY ($1) AND pruned_settled_at = $2`,
              [ok, later(2 * HOUR)],
            )
          )[0]!.n,
          5,
        );
        // 40-day retention: counted from the pruned deliveries' success, not from the (now empty) history.
        await expire(later(2 * HOUR + 39 * DAY));
        assert.equal((await message(ok[0]!)).payload_expunged_at, null);
        await expire(later(2 * HOUR + 40 * DAY + 60_000));
        assert.notEqual((await message(ok[0]!)).payload_expunged_at, null);
        assert.equal(
          (await message(pending)).payload_expunged_at,
          null,
          'a pending delivery holds its payload forever',
        );
        void ep;
      },
    );

    test('expired idempotency keys are pruned in batches; live ones stay', async () => {
      for (let i = 0; i < 5; i++) {
        await q(
          `INSERT INTO idempotency_keys (owner, route, key, fingerprint, expires_at) VALUES ('admin', 'POST ` +
            `/x', $1, 'f', $2)`,
          [`old-${i}`, later(HOUR)],
        );
      }
      await q(
        `INSERT INTO idempotency_keys (owner, route, key, fingerprint, expires_at) VALUES ('admin', 'POST /x', ` +
          `'live', 'f', $1)`,
        [later(10 * DAY)],
      );
      const report = await runRetention(store, { ...settings, succeededAgeMs: 0 }, at(later(2 * HOUR)));
      assert.ok(report.idempotencyKeysPruned >= 5);
      assert.deepEqual(
        (await q<{ key: string }>(`SELECT key FROM idempotency_keys WHERE route = 'POST /x'`)).map((r) => r.key),
        ['live'],
      );
    });

    test(
      'erasure by tag or eventId prefix runs as a background task, in batches, and expunges only what it names ' +
        'in its own application',
      async () => {
        const a = await api.svix.application.create({ name: 'erase-a' });
        const b = await api.svix.application.create({ name: 'erase-b' });
        await api.svix.endpoint.create(a.id, { url: 'http://127.0.0.1:9/e' });
        const tagged = await Promise.all(
          [1, 2, 3].map((n) =>
            publish(a.id, { eventType: 'e.t', eventId: `order-${n}`, tags: ['user-42'], payload: { n } }),
          ),
        );
        const prefixed = await Promise.all(
          [1, 2].map((n) => publish(a.id, { eventType: 'e.t', eventId: `user-42-${n}`, payload: { n } })),
        );
        const other = await publish(a.id, {
          eventType: 'e.t',
          eventId: 'keep-1',
          tags: ['user-7'],
          payload: { keep: true },
        });
        const foreign = await publish(b.id, {
          eventType: 'e.t',
          tags: ['user-42'],
          eventId: 'user-42-b',
          payload: { b: true },
        });
        await settle(tagged[0]!, 'succeeded', later(HOUR));

        const res = await api.request('POST', `/api/v1/app/${a.id}/msg/expunge-all-contents`, {
          body: JSON.stringify({ tag: 'user-42' }),
        });
        assert.equal(res.status, 202);
        const task = (await res.json()) as { id: string; status: string; task: string };
        assert.match(task.id, /^qtask_/);
        assert.deepEqual([task.status, task.task], ['running', 'application.purge_content']);
        const steps = await runErasures(store, 2, at(later(2 * HOUR)));
        assert.ok(steps >= 4, `${steps} batches of 2 over ${tagged.length + prefixed.length + 1} messages`);
        const row = (
          await q<{ status: string; progress: { messagesPurged: number } }>(
            'SELECT status, progress FROM background_tasks WHERE id = $1',
            [task.id],
          )
        )[0]!;
        assert.equal(row.status, 'finished');
        assert.equal(row.progress.messagesPurged, 3);
        for (const id of tagged) assert.notEqual((await message(id)).payload_expunged_at, null);
        assert.deepEqual(await bodies(tagged[0]!), [null]);
        for (const id of [...prefixed, other, foreign])
          assert.equal((await message(id)).payload_expunged_at, null, `${id} is not erased`);

        const byPrefix = (await (
          await api.request('POST', `/api/v1/app/${a.id}/msg/expunge-all-contents`, {
            body: JSON.stringify({ eventIdPrefix: 'user-42-' }),
          })
        ).json()) as { id: string };
        await runErasures(store, 50, at(later(2 * HOUR)));
        for (const id of prefixed) assert.notEqual((await message(id)).payload_expunged_at, null);
        assert.equal((await message(other)).payload_expunged_at, null);
        assert.equal(
          (await message(foreign)).payload_expunged_at,
          null,
          "another application's messages are never touched",
        );
        assert.equal(
          (await q<{ status: string }>('SELECT status FROM background_tasks WHERE id = $1', [byPrefix.id]))[0]!.status,
          'finished',
        );

        const tokenA = await api.appKey(a.id);
        assert.equal(
          (await api.request('POST', `/api/v1/app/${b.id}/msg/expunge-all-contents`, { token: tokenA, body: '{}' }))
            .status,
          404,
          'a scoped key cannot erase another application',
        );
        assert.equal(
          (
            await api.request('POST', `/api/v1/app/${a.id}/msg/expunge-all-contents`, {
              body: JSON.stringify({ eventIdPrefix: '' }),
            })
          ).status,
          422,
        );
        assert.equal(
          (
            await errorOf(
              await api.request('POST', `/api/v1/app/${a.id}/msg/expunge-all-contents`, {
                body: JSON.stringify({ tag: 'no spaces' }),
              }),
            )
          ).code,
          'validation',
        );
        assert.equal(
          (await q('SELECT 1 FROM background_tasks WHERE app_id = $1', [a.id])).length,
          2,
          'refused requests created no task',
        );

        // Svix client: expunge every payload of B.
        await api.svix.message
          .expungeAllContents(b.id)
          .catch((e: { body?: unknown }) => assert.fail(JSON.stringify(e.body)));
        await runErasures(store, 50, at(later(2 * HOUR)));
        assert.notEqual((await message(foreign)).payload_expunged_at, null);
      },
    );
  });
}
