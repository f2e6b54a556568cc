/**
 * Recover, replay-missing, bulk replay and Tidings' dead letters through the official svix client
 * (docs/adr/0003-svix-compatibility.md), on both engines, without a dispatcher: the tests read what the replay tasks
 * did to the delivery rows (state, fresh schedule, pace, timeline) and the tasks' progress. Delivery to real receivers
 * is shown end to end in test/e2e/svix-replay.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, BackgroundTaskStatus, BackgroundTaskType, MessageStatus } from 'svix';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

/** Rows examined per task step: small, so every task takes several steps. */
const BATCH = 7;
/** TIDINGS_REPLAY_RATE for the suite: deliveries queued for one endpoint are due 100 ms apart. */
const RATE_PER_S = 10;
const INTERVAL_MS = 1000 / RATE_PER_S;

async function refusal(call: Promise<unknown>): Promise<{ status: number; body: { code: string; detail: unknown } }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiException)
      return { status: error.code, body: error.body as { code: string; detail: unknown } };
    throw error;
  }
  assert.fail('the call was expected to fail');
}

interface DeliveryRow {
  message_id: string;
  endpoint_id: string;
  state: string;
  attempt_count: number;
  dead_reason: string | null;
  next_attempt_at: Date;
  replays: number;
}

for (const engine of ENGINES) {
  describe(`recover and replay through the svix client (${engine.name})`, () => {
    let api: ApiHarness;
    before(async () => {
      api = await startApi(engine.fresh, {
        TIDINGS_TASK_BATCH: String(BATCH),
        TIDINGS_REPLAY_RATE: String(RATE_PER_S),
        TIDINGS_TASK_POLL_INTERVAL: '100ms',
      });
    });
    after(async () => api?.close());

    const db = () => api.database.db;

    /** Waits (bounded) until the task is no longer running; returns it as the client reads it. */
    async function finished(taskId: string, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const task = await api.svix.backgroundTask.get(taskId);
        if (task.status !== BackgroundTaskStatus.Running) return task;
        if (Date.now() > deadline)
          assert.fail(`task ${taskId} still running after ${timeoutMs} ms: ${JSON.stringify(task.data)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    /** Publishes `n` messages of `eventType`; returns their ids in order. */
    async function publish(
      appId: string,
      n: number,
      eventType = 'r.test',
      extra: { channels?: string[]; tags?: string[] } = {},
    ): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < n; i++)
        ids.push((await api.svix.message.create(appId, { eventType, payload: { i }, ...extra })).id);
      return ids;
    }

    /** What a dispatcher would have left: the deliveries of these messages to the endpoint end in `state`. */
    async function settle(
      messageIds: readonly string[],
      endpointId: string,
      state: 'dead' | 'succeeded' | 'skipped',
      lastStatus = 500,
    ) {
      await db().query(
        `UPDATE deliveries SET state = $3, attempt_count = 4, last_status_code = $4, dead_reason = CASE WHEN $3 = 'dead'
          THEN 'exhausted' END
         WHERE message_id = ANY ($1::text[]) AND endpoint_id = $2`,
        [messageIds, endpointId, state, lastStatus],
      );
    }

    async function rows(endpointId: string, reason: string): Promise<DeliveryRow[]> {
      return (
        await db().query<DeliveryRow>(
          `SELECT d.message_id, d.endpoint_id, d.state, d.attempt_count, d.dead_reason, d.next_attempt_at,
                (SELECT count(*)::int FROM delivery_events ev WHERE ev.delivery_id = d.id AND ev.reason = $2) AS replays
         FROM deliveries d WHERE d.endpoint_id = $1 ORDER BY d.message_id`,
          [endpointId, reason],
        )
      ).rows;
    }

    /** The instant the API shows for a message (its `timestamp`). */
    const stamp = async (appId: string, msgId: string) => (await api.svix.message.get(appId, msgId)).timestamp;

    test(
      'recover re-queues exactly the dead deliveries of the window, paced, with a fresh schedule; a second ' +
        'recover finds nothing',
      async () => {
        const app = await api.svix.application.create({ name: 'recover', uid: 'recover' });
        const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/r', uid: 'rec-ep' });
        const older = await publish(app.id, 2);
        await db().query(
          `UPDATE messages SET created_at = created_at - interval '1 hour' WHERE id = ANY ($1::text[])`,
          [older],
        );
        const dead = await publish(app.id, 10);
        const delivered = await publish(app.id, 10);
        await settle([...older, ...dead], ep.id, 'dead');
        await settle(delivered, ep.id, 'succeeded', 200);
        const since = await stamp(app.id, dead[0]!);

        const started = await api.svix.endpoint.recover('recover', 'rec-ep', { since });
        assert.match(started.id, /^qtask_/);
        assert.equal(started.task, BackgroundTaskType.EndpointRecover);
        assert.ok([BackgroundTaskStatus.Running, BackgroundTaskStatus.Finished].includes(started.status));
        const task = await finished(started.id);
        assert.equal(task.status, BackgroundTaskStatus.Finished);
        assert.equal(task.task, BackgroundTaskType.EndpointRecover);
        assert.equal(task.data.messagesSent, 10);
        assert.equal(task.data.scanned, 10, 'only dead deliveries of the window were examined');

        const after1 = await rows(ep.id, 'recover_requested');
        const byMsg = new Map(after1.map((r) => [r.message_id, r]));
        for (const id of dead) {
          const r = byMsg.get(id)!;
          assert.equal(r.state, 'pending', `${id} queued again`);
          assert.equal(r.attempt_count, 0, 'the retry schedule starts over');
          assert.equal(r.dead_reason, null);
          assert.equal(r.replays, 1, 'one timeline row');
        }
        for (const id of older) assert.equal(byMsg.get(id)!.state, 'dead', 'outside the window: untouched');
        for (const id of delivered)
          assert.equal(byMsg.get(id)!.state, 'succeeded', 'delivered ones are not sent again');
        // Paced: one endpoint's replayed deliveries are due INTERVAL_MS apart, across task steps too (batch of 7).
        const due = dead.map((id) => byMsg.get(id)!.next_attempt_at.valueOf()).sort((a, b) => a - b);
        due
          .slice(1)
          .forEach((t, i) =>
            assert.ok(Math.abs(t - due[i]! - INTERVAL_MS) < 2, `gap ${i}: ${t - due[i]!} ms, pace ${INTERVAL_MS} ms`),
          );

        // Recover again: they are pending now, so nothing is queued twice.
        const second = await finished((await api.svix.endpoint.recover(app.id, ep.id, { since })).id);
        assert.equal(second.data.messagesSent, 0);
        // After they succeeded, a recover of the same window sends nothing either.
        await settle(dead, ep.id, 'succeeded', 200);
        const third = await finished(
          (await api.svix.endpoint.recover(app.id, ep.id, { since, until: new Date(Date.now() + 60_000) })).id,
        );
        assert.equal(third.data.messagesSent, 0);
        assert.ok((await rows(ep.id, 'recover_requested')).every((r) => r.replays <= 1));

        // The tasks are listed (operator), newest first, filterable by kind and status.
        const listed = await api.svix.backgroundTask.list({
          task: BackgroundTaskType.EndpointRecover,
          status: BackgroundTaskStatus.Finished,
        });
        assert.deepEqual(
          listed.data.slice(0, 3).map((t) => t.id),
          [third.id, second.id, task.id],
        );
      },
    );

    test(
      'recover refuses a disabled endpoint (409), an unknown one (404), a bad window (422); the same ' +
        'Idempotency-Key answers the same task',
      async () => {
        const app = await api.svix.application.create({ name: 'recover-errors' });
        const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/r' });
        const since = new Date(Date.now() - 60_000);
        const tasks = async () =>
          Number(
            (await db().query<{ n: string }>('SELECT count(*) AS n FROM background_tasks WHERE app_id = $1', [app.id]))
              .rows[0]!.n,
          );

        const first = await api.svix.endpoint.recover(app.id, ep.id, { since }, { idempotencyKey: 'recover-1' });
        const again = await api.svix.endpoint.recover(app.id, ep.id, { since }, { idempotencyKey: 'recover-1' });
        assert.equal(again.id, first.id);
        assert.equal(await tasks(), 1);
        const mismatch = await refusal(
          api.svix.endpoint.recover(app.id, ep.id, { since: new Date(0) }, { idempotencyKey: 'recover-1' }),
        );
        assert.deepEqual(mismatch, {
          status: 422,
          body: {
            code: 'idempotency_key_mismatch',
            detail: [
              {
                loc: ['header', 'idempotency-key'],
                msg: 'This Idempotency-Key was already used with a different request',
                type: 'value_error.idempotency_key_mismatch',
              },
            ],
          },
        });

        assert.deepEqual(await refusal(api.svix.endpoint.recover(app.id, 'no-such-ep', { since })), {
          status: 404,
          body: { code: 'not_found', detail: 'Endpoint not found' },
        });
        assert.deepEqual(await refusal(api.svix.endpoint.recover('no-such-app', ep.id, { since })), {
          status: 404,
          body: { code: 'not_found', detail: 'Application not found' },
        });
        assert.deepEqual(
          await refusal(api.svix.endpoint.recover(app.id, ep.id, { since, until: new Date(since.valueOf() - 1) })),
          {
            status: 422,
            body: {
              code: 'validation',
              detail: [{ loc: ['body', 'until'], msg: 'until must not be before since', type: 'value_error' }],
            },
          },
        );
        const noSince = await errorOf(
          await api.request('POST', `/api/v1/app/${app.id}/endpoint/${ep.id}/recover`, { body: '{}' }),
        );
        assert.equal(noSince.status, 422);
        assert.deepEqual((noSince.detail as { loc: unknown[] }[])[0]?.loc, ['body', 'since']);
        await api.svix.endpoint.patch(app.id, ep.id, { disabled: true });
        const disabled = {
          status: 409,
          body: { code: 'conflict', detail: 'The endpoint is disabled; enable it before replaying to it' },
        };
        assert.deepEqual(await refusal(api.svix.endpoint.recover(app.id, ep.id, { since })), disabled);
        assert.deepEqual(await refusal(api.svix.endpoint.replayMissing(app.id, ep.id, { since })), disabled);
        assert.deepEqual(await refusal(api.svix.endpoint.bulkReplay(app.id, ep.id, { since })), disabled);
        assert.equal(await tasks(), 1, 'refused requests started nothing');
        assert.deepEqual(await refusal(api.svix.backgroundTask.get('qtask_00000000000000000000000000')), {
          status: 404,
          body: { code: 'not_found', detail: 'Background task not found' },
        });
      },
    );

    test(
      'replay-missing sends the skipped deliveries and the ' + 'matching messages the endpoint never had, once',
      async () => {
        const app = await api.svix.application.create({ name: 'missing' });
        const early = await publish(app.id, 4, 'rm.a');
        const otherType = await publish(app.id, 3, 'rm.b');
        const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/m', eventTypes: ['rm.a'] });
        await api.svix.endpoint.patch(app.id, ep.id, { disabled: true });
        const whileDisabled = await publish(app.id, 5, 'rm.a');
        await api.svix.endpoint.patch(app.id, ep.id, { disabled: false });
        const delivered = await publish(app.id, 2, 'rm.a');
        await settle(delivered, ep.id, 'succeeded', 200);
        const expungedId = (await publish(app.id, 1, 'rm.a'))[0]!;
        await db().query(`UPDATE deliveries SET state = 'skipped' WHERE message_id = $1`, [expungedId]);
        await api.svix.message.expungeContent(app.id, expungedId);
        assert.deepEqual((await rows(ep.id, 'x')).filter((r) => r.state === 'skipped').length, 6);

        const since = await stamp(app.id, early[0]!);
        const started = await api.svix.endpoint.replayMissing(app.id, ep.id, { since });
        assert.equal(started.task, BackgroundTaskType.EndpointReplay);
        const task = await finished(started.id);
        assert.equal(task.status, BackgroundTaskStatus.Finished);
        assert.equal(
          task.data.messagesSent,
          early.length + whileDisabled.length,
          'the 4 it never had and the 5 skipped',
        );
        assert.equal(task.data.expunged, 1);
        const after1 = await rows(ep.id, 'replay_missing_requested');
        const byMsg = new Map(after1.map((r) => [r.message_id, r]));
        for (const id of [...early, ...whileDisabled]) {
          assert.equal(byMsg.get(id)?.state, 'pending', id);
          assert.equal(byMsg.get(id)?.replays, 1);
        }
        for (const id of otherType) assert.equal(byMsg.get(id), undefined, 'not subscribed: no delivery made');
        for (const id of delivered) assert.equal(byMsg.get(id)!.state, 'succeeded');
        assert.equal(byMsg.get(expungedId)!.state, 'skipped', 'nothing to send once the content is gone');
        const destinations = await api.svix.messageAttempt.listAttemptedDestinations(app.id, early[0]!);
        assert.deepEqual(
          destinations.data.map((d) => [d.id, d.status]),
          [[ep.id, MessageStatus.Pending]],
        );

        const again = await finished((await api.svix.endpoint.replayMissing(app.id, ep.id, { since })).id);
        assert.equal(again.data.messagesSent, 0, 'each message is sent once');
        assert.equal(again.data.alreadyQueued, early.length + whileDisabled.length + delivered.length);
      },
    );

    test('bulk replay selects dead and/or succeeded deliveries by status, event type and status class', async () => {
      const app = await api.svix.application.create({ name: 'bulk' });
      const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/b' });
      const deadA = await publish(app.id, 3, 'bk.a');
      const deadB = await publish(app.id, 2, 'bk.b');
      const okA = await publish(app.id, 2, 'bk.a');
      await settle(deadA, ep.id, 'dead', 503);
      await settle(deadB, ep.id, 'dead', 404);
      await settle(okA, ep.id, 'succeeded', 200);
      const since = await stamp(app.id, deadA[0]!);

      const failedA = await finished(
        (await api.svix.endpoint.bulkReplay(app.id, ep.id, { since, status: MessageStatus.Fail, eventTypes: ['bk.a'] }))
          .id,
      );
      assert.equal(failedA.task, BackgroundTaskType.EndpointBulkReplay);
      assert.equal(failedA.data.messagesSent, 3);
      await settle(deadA, ep.id, 'dead', 503);
      const class4 = await finished(
        (await api.svix.endpoint.bulkReplay(app.id, ep.id, { since, statusCodeClass: 400 })).id,
      );
      assert.equal(class4.data.messagesSent, 2, 'the 404s only');
      await settle(deadB, ep.id, 'dead', 404);
      const all = await finished((await api.svix.endpoint.bulkReplay(app.id, ep.id, { since })).id);
      assert.equal(all.data.messagesSent, 7, 'dead and succeeded by default (Svix: both)');
      assert.ok((await rows(ep.id, 'bulk_replay_requested')).every((r) => r.state === 'pending'));

      // A paused endpoint's replayed deliveries wait like its other pending ones (at 'infinity') until resumed.
      await settle(deadA, ep.id, 'dead', 503);
      await db().query(`UPDATE endpoints SET status = 'paused' WHERE id = $1`, [ep.id]);
      const paused = await finished(
        (await api.svix.endpoint.bulkReplay(app.id, ep.id, { since, status: MessageStatus.Fail })).id,
      );
      assert.equal(paused.data.messagesSent, 3);
      const held = (
        await db().query<{ held: boolean }>(
          `SELECT next_attempt_at = 'infinity'::timestamptz AS held FROM deliveries WHERE message_id = ANY ` +
            '($1::text[]) AND endpoint_id = $2',
          [deadA, ep.id],
        )
      ).rows;
      assert.deepEqual(
        held.map((r) => r.held),
        [true, true, true],
      );
    });

    test(
      'dead letters are listed per application and per endpoint with their reason, and replayed by filter, paced ' +
        'per endpoint',
      async () => {
        const app = await api.svix.application.create({ name: 'dead-letters', uid: 'dl' });
        const e1 = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/d1', uid: 'dl-1' });
        const e2 = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/d2', uid: 'dl-2' });
        const m = await publish(app.id, 4, 'dl.a');
        const n = await publish(app.id, 2, 'dl.b');
        await settle(m, e1.id, 'dead', 500);
        await settle(n, e1.id, 'dead', 500);
        await settle(m, e2.id, 'dead', 500);
        await db().query(
          `UPDATE deliveries SET dead_reason = 'gone', last_status_code = 410 WHERE message_id = $1 AND ` +
            'endpoint_id = $2',
          [n[1], e1.id],
        );

        type DeadLetter = {
          msgId: string;
          endpointId: string;
          eventType: string;
          reason: string;
          attemptCount: number;
          lastStatusCode: number;
        };
        type Page = { data: DeadLetter[]; iterator: string | null; done: boolean };
        const get = async (path: string) => (await (await api.request('GET', path)).json()) as Page;
        const appList = await get('/api/v1/app/dl/dead-letter?limit=250');
        assert.equal(appList.data.length, 10);
        assert.equal(appList.data[0]!.msgId, n[1], 'newest first');
        assert.equal(appList.data[0]!.eventType, 'dl.b');
        assert.equal(appList.data[0]!.attemptCount, 4);
        assert.equal(appList.data[0]!.lastStatusCode, 410);
        assert.equal(appList.data.find((d) => d.msgId === n[1] && d.endpointId === e1.id)!.reason, 'gone');
        assert.equal(appList.data.find((d) => d.msgId === m[0] && d.endpointId === e1.id)!.reason, 'exhausted');
        assert.equal((await get('/api/v1/app/dl/endpoint/dl-2/dead-letter')).data.length, 4);
        assert.equal((await get('/api/v1/app/dl/dead-letter?event_types=dl.b')).data.length, 2);
        // Pages of 3, nothing missed or doubled.
        const seen: string[] = [];
        let page = await get('/api/v1/app/dl/dead-letter?limit=3');
        for (;;) {
          seen.push(...page.data.map((d) => `${d.msgId}/${d.endpointId}`));
          if (page.done) break;
          page = await get(`/api/v1/app/dl/dead-letter?limit=3&iterator=${page.iterator}`);
        }
        assert.deepEqual(
          seen,
          appList.data.map((d) => `${d.msgId}/${d.endpointId}`),
        );
        assert.deepEqual(await errorOf(await api.request('GET', '/api/v1/app/dl/endpoint/no-such/dead-letter')), {
          status: 404,
          code: 'not_found',
          detail: 'Endpoint not found',
        });
        const badIterator = await errorOf(await api.request('GET', '/api/v1/app/dl/dead-letter?iterator=msg_x'));
        assert.equal(badIterator.status, 422);

        // Replay the dl.a dead letters of every endpoint: 4 per endpoint, each endpoint paced on its own.
        const since = await stamp(app.id, m[0]!);
        const res = await api.request('POST', '/api/v1/app/dl/dead-letter/replay', {
          body: JSON.stringify({ since: since.toISOString(), eventTypes: ['dl.a'] }),
          headers: { 'idempotency-key': 'dl-replay-1' },
        });
        assert.equal(res.status, 202);
        const started = (await res.json()) as { id: string; task: string };
        assert.equal(started.task, 'dead-letter.replay');
        const task = await finished(started.id);
        assert.equal(task.data.messagesSent, 8);
        for (const ep of [e1, e2]) {
          const due = (await rows(ep.id, 'dead_letter_replay_requested'))
            .filter((r) => r.replays === 1)
            .map((r) => r.next_attempt_at.valueOf())
            .sort((a, b) => a - b);
          assert.equal(due.length, 4);
          due
            .slice(1)
            .forEach((t, i) =>
              assert.ok(Math.abs(t - due[i]! - INTERVAL_MS) < 2, `${ep.id} gap ${i}: ${t - due[i]!} ms`),
            );
        }
        assert.equal((await get('/api/v1/app/dl/dead-letter')).data.length, 2, 'the dl.b ones are still dead letters');
        const replayAgain = await api.request('POST', '/api/v1/app/dl/dead-letter/replay', {
          body: JSON.stringify({ since: since.toISOString(), eventTypes: ['dl.a'] }),
          headers: { 'idempotency-key': 'dl-replay-1' },
        });
        assert.equal(
          ((await replayAgain.json()) as { id: string }).id,
          started.id,
          'the same key answers the same task',
        );
        assert.equal(replayAgain.headers.get('idempotent-replayed'), 'true');
        const unknownEp = await errorOf(
          await api.request('POST', '/api/v1/app/dl/dead-letter/replay', {
            body: JSON.stringify({ since: since.toISOString(), endpointId: 'nope' }),
          }),
        );
        assert.deepEqual(unknownEp, { status: 404, code: 'not_found', detail: 'Endpoint not found' });
      },
    );

    test(
      'the operator lists the dead letters of every application, each with its application, newest first and ' +
        'paged; a credential of one application is refused',
      async () => {
        const apps = [
          await api.svix.application.create({ name: 'all-dl-1' }),
          await api.svix.application.create({ name: 'all-dl-2' }),
        ];
        const made: string[] = [];
        for (const app of apps) {
          const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/all' });
          const ids = await publish(app.id, 3, 'all.dl');
          await settle(ids, ep.id, 'dead');
          made.push(...ids.map((id) => `${app.id}/${id}/${ep.id}`));
        }
        type Page = {
          data: { appId: string; msgId: string; endpointId: string }[];
          iterator: string | null;
          done: boolean;
        };
        const get = async (path: string, token?: string) =>
          api.request('GET', path, token === undefined ? {} : { token });
        const all = (await (await get('/api/v1/dead-letter?limit=250&event_types=all.dl')).json()) as Page;
        assert.deepEqual(
          all.data.map((d) => `${d.appId}/${d.msgId}/${d.endpointId}`),
          [...made].sort((a, b) => b.split('/')[1]!.localeCompare(a.split('/')[1]!)),
          "every application's, newest first",
        );
        const seen: string[] = [];
        let page = (await (await get('/api/v1/dead-letter?limit=2&event_types=all.dl')).json()) as Page;
        for (let i = 0; i < 10; i++) {
          seen.push(...page.data.map((d) => d.msgId));
          if (page.done) break;
          page = (await (
            await get(`/api/v1/dead-letter?limit=2&event_types=all.dl&iterator=${page.iterator}`)
          ).json()) as Page;
        }
        assert.deepEqual(
          seen,
          all.data.map((d) => d.msgId),
          'pages of 2 miss and double nothing',
        );
        const scoped = await get('/api/v1/dead-letter', await api.appKey(apps[0]!.id));
        assert.equal(scoped.status, 403);
      },
    );

    test(
      'a task left running (its process stopped after a step) resumes from its last committed progress and ' +
        'queues nothing twice',
      async () => {
        const app = await api.svix.application.create({ name: 'resume' });
        const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/x' });
        const dead = await publish(app.id, 2 * BATCH + 3);
        await settle(dead, ep.id, 'dead');
        const runner = api.deps.taskRunner;
        await runner.stop();
        try {
          const started = await api.svix.endpoint.recover(app.id, ep.id, { since: await stamp(app.id, dead[0]!) });
          assert.equal(await runner.step(), true, 'one step, then the process "dies"');
          const mid = await api.svix.backgroundTask.get(started.id);
          assert.equal(mid.status, BackgroundTaskStatus.Running);
          assert.equal(mid.data.messagesSent, BATCH);
          assert.equal((await rows(ep.id, 'recover_requested')).filter((r) => r.state === 'pending').length, BATCH);
          runner.start();
          const done = await finished(started.id);
          assert.equal(done.status, BackgroundTaskStatus.Finished);
          assert.equal(done.data.messagesSent, dead.length);
          assert.ok(
            (await rows(ep.id, 'recover_requested')).every((r) => r.replays === 1 && r.state === 'pending'),
            'every delivery queued exactly once',
          );
        } finally {
          runner.start();
        }
      },
    );

    test("a scoped key reads its own tasks by id, not another application's, and not the operator list", async () => {
      const mine = await api.svix.application.create({ name: 'mine' });
      const theirs = await api.svix.application.create({ name: 'theirs' });
      const epMine = await api.svix.endpoint.create(mine.id, { url: 'http://127.0.0.1:9/s' });
      const epTheirs = await api.svix.endpoint.create(theirs.id, { url: 'http://127.0.0.1:9/s' });
      const token = await api.appKey(mine.id);
      const since = new Date(Date.now() - 1000).toISOString();
      const own = (await (
        await api.request('POST', `/api/v1/app/${mine.id}/endpoint/${epMine.id}/recover`, {
          token,
          body: JSON.stringify({ since }),
        })
      ).json()) as { id: string };
      const other = await api.svix.endpoint.recover(theirs.id, epTheirs.id, { since: new Date(since) });
      assert.equal((await api.request('GET', `/api/v1/background-task/${own.id}`, { token })).status, 200);
      assert.deepEqual(await errorOf(await api.request('GET', `/api/v1/background-task/${other.id}`, { token })), {
        status: 404,
        code: 'not_found',
        detail: 'Background task not found',
      });
      assert.deepEqual(await errorOf(await api.request('GET', '/api/v1/background-task', { token })), {
        status: 403,
        code: 'insufficient access',
        detail: 'This credential may not use this route',
      });
      assert.deepEqual(
        await errorOf(
          await api.request('POST', `/api/v1/app/${theirs.id}/endpoint/${epTheirs.id}/recover`, {
            token,
            body: JSON.stringify({ since }),
          }),
        ),
        { status: 404, code: 'not_found', detail: 'Application not found' },
      );
    });
  });
}
