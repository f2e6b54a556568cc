/**
 * The rows an application owns go with it, and no row of the delivery path points at nothing, without the
 * foreign keys that migration 1764000009500 dropped (docs/adr/0016-hot-path-cost.md, decision 13).
 * - On both engines: deleting an application deletes its messages, deliveries, timeline rows, attempts,
 *   fenced attempts, endpoints and endpoint events, and nothing of another application; retention's prune of
 *   succeeded deliveries deletes their timeline rows and attempts.
 * - On the server, with two real transactions: a publish, a resend and a replay of missing deliveries, each
 *   racing its application's deletion in both orders, leave no dangling row. The deletion either waits for the
 *   writer's commit and then deletes what it wrote, or the writer waits for the deletion and writes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { AppError } from '../../src/domain/errors.ts';
import { createPgApplicationStore } from '../../src/adapters/postgres/application/application-store.ts';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import { createPgReplayStore } from '../../src/adapters/postgres/delivery/replay-store.ts';
import { createPgMessageStore } from '../../src/adapters/postgres/message/message-store.ts';
import { createPgRetentionStore } from '../../src/adapters/postgres/message/retention-store.ts';
import { runTx } from '../../src/adapters/postgres/tx.ts';
import type { Db } from '../../src/adapters/postgres/db.ts';
import type { AttemptRecord, ClaimedDelivery } from '../../src/ports/delivery-store.ts';
import type { NewMessage } from '../../src/ports/message-store.ts';
import { testCipher } from '../support/cipher.ts';
import { ENGINES, freshServerDatabase, type TestDatabase } from '../support/db.ts';
import { insertApp, insertEndpoint } from '../support/fixtures.ts';
import { danglingRows } from '../support/references.ts';

const cipher = testCipher();
let seq = 0;

function newMessage(appId: string): NewMessage {
  seq += 1;
  return {
    id: `msg_owned${String(seq).padStart(20, '0')}`,
    appId,
    eventId: null,
    eventType: 'e',
    channels: null,
    tags: null,
    payload: Buffer.from(`{"n":${seq}}`),
    retentionHours: null,
  };
}

function outcome(d: ClaimedDelivery, ok: boolean): AttemptRecord {
  return {
    deliveryId: d.deliveryId,
    fencingToken: d.fencingToken,
    dispatcherId: d.dispatcherId,
    endpointId: d.endpointId,
    attemptId: `atmpt_${d.deliveryId}_${d.fencingToken}`,
    attemptNumber: d.attemptNumber,
    trigger: 'scheduled',
    url: d.url,
    succeeded: ok,
    statusCode: ok ? 200 : 500,
    responseBody: ok ? '' : 'no',
    location: null,
    errorKind: ok ? null : 'http_status',
    errorDetail: null,
    durationMs: 3,
    next: ok ? { next: 'succeeded' } : { next: 'retry', delayMs: 60_000 },
    throttleEndpointMs: null,
    disableEndpointReason: null,
  };
}

/** Rows of each table that belong to application `appId` (by its own columns, or through its deliveries). */
async function ownedRows(db: Db, appId: string): Promise<Record<string, number>> {
  return (
    await db.query<Record<string, number>>(
      `
    SELECT (SELECT count(*)::int FROM messages WHERE app_id = $1) AS messages,
           (SELECT count(*)::int FROM deliveries WHERE app_id = $1) AS deliveries,
           (SELECT count(*)::int FROM delivery_events WHERE app_id = $1) AS events,
           (SELECT count(*)::int FROM attempts WHERE app_id = $1) AS attempts,
           (SELECT count(*)::int FROM fenced_attempts f JOIN endpoints e ON e.id = f.endpoint_id
             WHERE e.app_id = $1) AS fenced,
           (SELECT count(*)::int FROM endpoints WHERE app_id = $1) AS endpoints,
           (SELECT count(*)::int FROM endpoint_events v JOIN endpoints e ON e.id = v.endpoint_id
             WHERE e.app_id = $1) AS endpoint_events`,
      [appId],
    )
  ).rows[0]!;
}

/**
 * Publishes two messages to an application with two endpoints, claims and records them (one success, one failure each),
 * and records one fenced-out outcome.
 */
async function history(db: Db, appId: string): Promise<void> {
  const messages = createPgMessageStore(db, cipher, () => undefined);
  const deliveries = createPgDeliveryStore(db, cipher);
  await insertEndpoint(db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
  await insertEndpoint(db, cipher, { appId, url: 'http://127.0.0.1:9/b' });
  for (let i = 0; i < 2; i += 1) await runTx(db, (tx) => messages.insert(tx, newMessage(appId), null));
  const claimed = (
    await deliveries.claim({ dispatcherId: 'W', limit: 10, leaseMs: 30_000, maxReclaims: 5, now: null })
  ).deliveries.filter((d) => d.appId === appId);
  assert.equal(claimed.length, 4);
  await deliveries.recordAttempts(
    [
      ...claimed.map((d, i) => outcome(d, i % 2 === 0)),
      {
        ...outcome(claimed[0]!, true),
        attemptId: `atmpt_stale_${claimed[0]!.deliveryId}`,
        fencingToken: String(Number(claimed[0]!.fencingToken) - 1),
      },
    ],
    null,
  );
  await db.query(
    `INSERT INTO endpoint_events (endpoint_id, kind, reason, at) SELECT id, 'disabled', 'test', ` +
      'clock_timestamp() FROM endpoints WHERE app_id = $1',
    [appId],
  );
}

for (const engine of ENGINES) {
  describe(`rows an application owns, on ${engine.name}`, () => {
    let t: TestDatabase;
    before(async () => {
      t = await engine.fresh();
    });
    after(async () => {
      await t.drop();
    });

    test('deleting an application deletes every row it owns and nothing of another', async () => {
      const gone = await insertApp(t.db);
      const kept = await insertApp(t.db);
      await history(t.db, gone);
      await history(t.db, kept);
      const before = await ownedRows(t.db, gone);
      assert.deepEqual(before, {
        messages: 2,
        deliveries: 4,
        events: 12,
        attempts: 4,
        fenced: 1,
        endpoints: 2,
        endpoint_events: 2,
      });
      const keptBefore = await ownedRows(t.db, kept);
      const deliveryIds = (
        await t.db.query<{ id: string }>('SELECT id FROM deliveries WHERE app_id = $1', [gone])
      ).rows.map((r) => r.id);

      assert.equal(await runTx(t.db, (tx) => createPgApplicationStore(t.db).deleteApplication(tx, gone)), true);

      assert.deepEqual(await ownedRows(t.db, gone), {
        messages: 0,
        deliveries: 0,
        events: 0,
        attempts: 0,
        fenced: 0,
        endpoints: 0,
        endpoint_events: 0,
      });
      // By delivery id too: a timeline row or attempt is found by its delivery whatever its own app_id says.
      const left = (
        await t.db.query<{ n: number }>(
          'SELECT (SELECT count(*) FROM delivery_events WHERE delivery_id = ANY ($1::bigint[])) + (SELECT ' +
            'count(*) FROM attempts WHERE delivery_id = ANY ($1::bigint[])) AS n',
          [deliveryIds],
        )
      ).rows[0]!;
      assert.equal(Number(left.n), 0);
      assert.deepEqual(await ownedRows(t.db, kept), keptBefore);
      assert.deepEqual(await danglingRows(t.db), { deliveries: 0, events: 0, attempts: 0 });
    });

    test('a deleted message or endpoint row takes its deliveries, their timeline rows and attempts', async () => {
      // An application's deletion deletes both, in the order of its foreign keys' triggers; each must be enough alone.
      const appId = await insertApp(t.db);
      await history(t.db, appId);
      const [one, other] = (
        await t.db.query<{ id: string }>('SELECT id FROM messages WHERE app_id = $1 ORDER BY id', [appId])
      ).rows.map((r) => r.id);
      const endpoint = (
        await t.db.query<{ id: string }>('SELECT id FROM endpoints WHERE app_id = $1 ORDER BY id LIMIT 1', [appId])
      ).rows[0]!.id;
      await t.db.query('DELETE FROM messages WHERE id = $1', [one]);
      let owned = await ownedRows(t.db, appId);
      assert.deepEqual([owned.deliveries, owned.events, owned.attempts], [2, 6, 2]);
      assert.equal((await t.db.query('SELECT 1 FROM deliveries WHERE message_id = $1', [one])).rowCount, 0);
      await t.db.query('DELETE FROM endpoints WHERE id = $1', [endpoint]);
      owned = await ownedRows(t.db, appId);
      assert.deepEqual([owned.deliveries, owned.events, owned.attempts], [1, 3, 1]);
      assert.equal(
        (await t.db.query('SELECT 1 FROM deliveries WHERE message_id = $1 AND endpoint_id <> $2', [other, endpoint]))
          .rowCount,
        1,
      );
      assert.deepEqual(await danglingRows(t.db), { deliveries: 0, events: 0, attempts: 0 });
    });

    test("retention's prune of succeeded deliveries deletes their timeline rows and attempts", async () => {
      const appId = await insertApp(t.db);
      await history(t.db, appId);
      const succeeded = (
        await t.db.query<{ id: string }>(`SELECT id FROM deliveries WHERE app_id = $1 AND state = 'succeeded'`, [appId])
      ).rows.map((r) => r.id);
      assert.equal(succeeded.length, 2);
      const pruned = await createPgRetentionStore(t.db).pruneSucceeded({ ageMs: 0, batch: 100, now: null });
      assert.ok(pruned >= 2);
      const rows = (
        await t.db.query<{ deliveries: number; events: number; attempts: number }>(
          `
        SELECT (SELECT count(*)::int FROM deliveries WHERE id = ANY ($1::bigint[])) AS deliveries,
               (SELECT count(*)::int FROM delivery_events WHERE delivery_id = ANY ($1::bigint[])) AS events,
               (SELECT count(*)::int FROM attempts WHERE delivery_id = ANY ($1::bigint[])) AS attempts`,
          [succeeded],
        )
      ).rows[0]!;
      assert.deepEqual(rows, { deliveries: 0, events: 0, attempts: 0 });
      // The failed deliveries keep their history.
      const owned = await ownedRows(t.db, appId);
      assert.equal(owned.deliveries, 2);
      assert.equal(owned.events, 6);
      assert.equal(owned.attempts, 2);
      assert.deepEqual(await danglingRows(t.db), { deliveries: 0, events: 0, attempts: 0 });
    });
  });
}

describe('writers racing the deletion of their application (server)', () => {
  let t: TestDatabase;
  before(async () => {
    t = await freshServerDatabase();
  });
  after(async () => {
    await t.drop();
  });

  /**
   * Resolves true once some backend of the test database waits for a lock, false when `second` settles
   * first (it did not wait for the first transaction); rejects after 10 s.
   */
  async function waits(second: Promise<unknown>): Promise<boolean> {
    let settled = false;
    void second.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const n = (
        await t.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND ' +
            `wait_event_type = 'Lock'`,
        )
      ).rows[0]!.n;
      if (n > 0) return true;
      if (settled) return false;
      if (Date.now() > deadline) throw new Error('no transaction waited for a lock within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /**
   * An application with one endpoint and one published message (delivered to that endpoint), and a second endpoint
   * without a delivery.
   */
  async function world(): Promise<{ appId: string; messageId: string; spare: string }> {
    const appId = await insertApp(t.db);
    await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/a' });
    const m = newMessage(appId);
    await runTx(t.db, (tx) => createPgMessageStore(t.db, cipher, () => undefined).insert(tx, m, null));
    const spare = (await insertEndpoint(t.db, cipher, { appId, url: 'http://127.0.0.1:9/b' })).id;
    return { appId, messageId: m.id, spare };
  }

  type Writer = (
    appId: string,
    messageId: string,
    spare: string,
  ) => (tx: Parameters<Parameters<typeof runTx>[1]>[0]) => Promise<unknown>;
  const replay = (): ReturnType<typeof createPgReplayStore> => createPgReplayStore(t.db, () => undefined);
  const writers: Record<string, Writer> = {
    publish: (appId) => (tx) => createPgMessageStore(t.db, cipher, () => undefined).insert(tx, newMessage(appId), null),
    resend: (appId, messageId, spare) => (tx) =>
      replay().resend(tx, { appId, messageId, endpointId: spare, now: null }),
    'replay of missing deliveries': (appId, _m, spare) => (tx) =>
      replay().replayMissing(tx, {
        appId,
        endpointId: spare,
        since: new Date(0),
        until: null,
        after: null,
        limit: 100,
        intervalMs: 0,
        slots: {},
        reason: 'replay_requested',
        now: null,
      }),
  };

  for (const [name, writer] of Object.entries(writers)) {
    test(`${name} after the deletion began: the writer waits, then writes nothing`, async () => {
      const { appId, messageId, spare } = await world();
      const holder = new pg.Client({ connectionString: t.url });
      await holder.connect();
      let waited = false;
      try {
        await holder.query('BEGIN');
        await holder.query('DELETE FROM applications WHERE id = $1', [appId]);
        const writing = runTx(t.db, writer(appId, messageId, spare)).then(
          (v) => ({ ok: v }),
          (error: unknown) => ({ error }),
        );
        waited = await waits(writing);
        await holder.query('COMMIT');
        const result = await writing;
        // The publish answers 404 (not a server error); a resend finds nothing to resend.
        if (name === 'publish')
          assert.equal('error' in result && result.error instanceof AppError ? result.error.code : result, 'not_found');
        if (name === 'resend') assert.deepEqual(result, { ok: false });
      } finally {
        await holder.end();
      }
      assert.deepEqual(await ownedRows(t.db, appId), {
        messages: 0,
        deliveries: 0,
        events: 0,
        attempts: 0,
        fenced: 0,
        endpoints: 0,
        endpoint_events: 0,
      });
      assert.deepEqual(await danglingRows(t.db), { deliveries: 0, events: 0, attempts: 0 });
      assert.ok(waited, 'the writer did not wait for the deletion');
    });

    test(`${name} before the deletion: the deletion waits, then deletes what was written`, async () => {
      const { appId, messageId, spare } = await world();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => {
        wrote = resolve;
      });
      const writing = runTx(t.db, async (tx, client) => {
        await writer(appId, messageId, spare)(tx);
        // The writer made a delivery (the publish two), seen by its own transaction only.
        assert.ok(
          (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM deliveries WHERE app_id = $1', [appId]))
            .rows[0]!.n > 1,
        );
        wrote();
        await gate;
      });
      await written;
      const deleting = runTx(t.db, (tx) => createPgApplicationStore(t.db).deleteApplication(tx, appId));
      let waited = false;
      try {
        waited = await waits(deleting);
      } finally {
        release();
      }
      await writing;
      assert.equal(await deleting, true);
      assert.deepEqual(await ownedRows(t.db, appId), {
        messages: 0,
        deliveries: 0,
        events: 0,
        attempts: 0,
        fenced: 0,
        endpoints: 0,
        endpoint_events: 0,
      });
      assert.deepEqual(await danglingRows(t.db), { deliveries: 0, events: 0, attempts: 0 });
      assert.ok(waited, 'the deletion did not wait for the writer');
    });
  }
});
