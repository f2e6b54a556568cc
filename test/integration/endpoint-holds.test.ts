/**
 * What the API says of deliveries that wait behind their endpoint (docs/adr/0004-endpoint-flow-control.md),
 * and the operator's breaker actions, on both engines under a manual clock. Regression: an open breaker's
 * deliveries were shown as "due now" (overview "3 due now · 0 held", destinations and timelines "next
 * attempt (now)" or "33 seconds ago"), recover answered "0 sent" and said nothing else, and an operator had
 * no way to probe or close a breaker short of waiting out its cool-down.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createPgDeliveryStore } from '../../src/adapters/postgres/delivery/delivery-store.ts';
import type { AttemptRecord, ClaimedDelivery, DeliveryStore } from '../../src/ports/delivery-store.ts';
import { ENGINES } from '../support/db.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

const COOLDOWN_MS = 60_000;
const LEASE_MS = 30_000;

/** A failed attempt (500) whose retry is due at once: the delivery stays due, so only the breaker holds it. */
function failed(d: ClaimedDelivery): AttemptRecord {
  return {
    deliveryId: d.deliveryId,
    fencingToken: d.fencingToken,
    dispatcherId: d.dispatcherId,
    endpointId: d.endpointId,
    attemptId: `atmpt_${d.deliveryId.padStart(27, '0')}${d.fencingToken}`.slice(0, 33),
    attemptNumber: d.attemptNumber,
    trigger: 'scheduled',
    url: d.url,
    succeeded: false,
    statusCode: 500,
    responseBody: '',
    location: null,
    errorKind: 'http_status',
    errorDetail: null,
    durationMs: 1,
    next: { next: 'retry', delayMs: 0 },
    throttleEndpointMs: null,
    disableEndpointReason: null,
  };
}

interface Held {
  heldBy: string | null;
  heldUntil: string | null;
}
interface Overview {
  backlog: { dueNow: number; held: number; heldBy: Record<string, number>; oldestDueAgeMs: number | null };
}
interface Health {
  breaker: { state: string; openUntil: string | null; consecutiveFailures: number };
  history: { kind: string; reason: string | null }[];
}
type Destinations = { data: (Held & { id: string })[] };

for (const engine of ENGINES) {
  describe(`deliveries held by their endpoint, and the breaker's operator actions (${engine.name})`, () => {
    const clock = new ManualClock();
    let api: ApiHarness;
    let store: DeliveryStore;
    before(async () => {
      api = await startApi(engine.fresh, { TIDINGS_TASK_POLL_INTERVAL: '50ms' }, { clock });
      store = createPgDeliveryStore(api.database.db, api.cipher, {
        policy: {
          breakerThreshold: 1,
          breakerCooldownMs: COOLDOWN_MS,
          breakerMaxCooldownMs: 10 * COOLDOWN_MS,
          autoDisableAfterMs: 86_400_000,
        },
      });
    });
    after(async () => api?.close());
    beforeEach(async () => {
      await api.database.db.query(`UPDATE deliveries SET state = 'canceled' WHERE state IN ('pending', 'leased')`);
    });

    const json = async <T>(method: string, path: string, body?: unknown, token?: string): Promise<T> => {
      const res = await api.request(method, path, {
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(token === undefined ? {} : { token }),
      });
      const text = await res.text();
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as T;
    };
    const claim = (limit = 10) =>
      store.claim({ dispatcherId: 'W', limit, leaseMs: LEASE_MS, maxReclaims: 5, now: clock.sqlNow() });
    const health = (appId: string, endpointId: string) =>
      json<Health>('GET', `/api/v1/app/${appId}/endpoint/${endpointId}/health`);
    const breaker = (appId: string, endpointId: string, action: 'probe' | 'close', token?: string) =>
      api.request(
        'POST',
        `/api/v1/app/${appId}/endpoint/${endpointId}/breaker/${action}`,
        token === undefined ? {} : { token },
      );

    /** An application and endpoint with `n` messages whose deliveries are due; the breaker opened by one failure. */
    async function openBreaker(
      n: number,
    ): Promise<{ appId: string; endpointId: string; msgIds: string[]; openUntil: string }> {
      const app = await api.svix.application.create({ name: 'held' });
      const ep = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/held' });
      const msgIds: string[] = [];
      for (let i = 0; i < n; i++) {
        msgIds.push((await api.svix.message.create(app.id, { eventType: 'e', payload: { i } })).id);
      }
      const first = await claim(1);
      assert.equal(first.deliveries.length, 1);
      await store.recordAttempts(first.deliveries.map(failed), clock.sqlNow());
      assert.equal((await health(app.id, ep.id)).breaker.state, 'open');
      const openUntil = new Date(clock.nowMs() + COOLDOWN_MS).toISOString();
      return { appId: app.id, endpointId: ep.id, msgIds, openUntil };
    }

    test(
      "an open breaker's due deliveries are held, not due: overview, destinations, the endpoint's messages and the " +
        'timeline say so and until when',
      async () => {
        const { appId, endpointId, msgIds, openUntil } = await openBreaker(3);
        const overview = await json<Overview>('GET', `/api/v1/stats/overview?app_id=${appId}`);
        assert.equal(overview.backlog.dueNow, 0, 'nothing is due: the breaker holds all three');
        assert.equal(overview.backlog.oldestDueAgeMs, null);
        assert.equal(overview.backlog.held, 3);
        assert.deepEqual(overview.backlog.heldBy, { paused: 0, breaker: 3, throttled: 0 });
        const installation = await json<Overview>('GET', '/api/v1/stats/overview');
        assert.ok((installation.backlog.heldBy.breaker ?? 0) >= 3);

        const destinations = await json<Destinations>('GET', `/api/v1/app/${appId}/msg/${msgIds[1]}/endpoint`);
        assert.deepEqual(
          destinations.data.map((d) => [d.heldBy, d.heldUntil]),
          [['breaker', openUntil]],
        );
        const messages = await json<{ data: Held[] }>('GET', `/api/v1/app/${appId}/endpoint/${endpointId}/msg`);
        assert.deepEqual(
          messages.data.map((m) => [m.heldBy, m.heldUntil]),
          Array(3).fill(['breaker', openUntil]),
        );
        const timelinePath = `/api/v1/app/${appId}/msg/${msgIds[0]}/endpoint/${endpointId}/timeline`;
        const timeline = await json<Held & { nextAttemptAt: string }>('GET', timelinePath);
        assert.deepEqual([timeline.heldBy, timeline.heldUntil], ['breaker', openUntil]);

        // Once the cool-down is over the breaker waits for its probe: still held, with no set end.
        clock.advance(COOLDOWN_MS);
        const probing = await json<{ data: Held[] }>('GET', `/api/v1/app/${appId}/endpoint/${endpointId}/msg`);
        assert.deepEqual(
          probing.data.map((m) => [m.heldBy, m.heldUntil]),
          Array(3).fill(['breaker', null]),
        );
        await json('POST', `/api/v1/app/${appId}/endpoint/${endpointId}/breaker/close`);
        const free = await json<Overview>('GET', `/api/v1/stats/overview?app_id=${appId}`);
        assert.deepEqual([free.backlog.dueNow, free.backlog.held], [3, 0]);
        const after = await json<{ data: Held[] }>('GET', `/api/v1/app/${appId}/endpoint/${endpointId}/msg`);
        assert.deepEqual(
          after.data.map((m) => m.heldBy),
          [null, null, null],
        );
      },
    );

    test(
      "a paused endpoint's and a throttled endpoint's deliveries are held by `paused` (no end) and `throttled` " +
        '(until ' +
        'the Retry-After)',
      async () => {
        const app = await api.svix.application.create({ name: 'paused' });
        const paused = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/p' });
        const throttled = await api.svix.endpoint.create(app.id, { url: 'http://127.0.0.1:9/t' });
        assert.equal((await api.request('POST', `/api/v1/app/${app.id}/endpoint/${paused.id}/pause`)).status, 204);
        const msg = await api.svix.message.create(app.id, { eventType: 'e', payload: {} });
        const until = new Date(clock.nowMs() + 5_000);
        await api.database.db.query('UPDATE endpoints SET throttled_until = $2 WHERE id = $1', [throttled.id, until]);
        const destinations = await json<Destinations>('GET', `/api/v1/app/${app.id}/msg/${msg.id}/endpoint`);
        const byId = new Map(destinations.data.map((d) => [d.id, [d.heldBy, d.heldUntil]]));
        assert.deepEqual(byId.get(paused.id), ['paused', null]);
        assert.deepEqual(byId.get(throttled.id), ['throttled', until.toISOString()]);
        const overview = await json<Overview>('GET', `/api/v1/stats/overview?app_id=${app.id}`);
        assert.deepEqual(overview.backlog.heldBy, { paused: 1, breaker: 0, throttled: 1 });
        assert.equal(overview.backlog.dueNow, 0);
        clock.advance(5_000);
        const later = await json<Destinations>('GET', `/api/v1/app/${app.id}/msg/${msg.id}/endpoint`);
        assert.deepEqual(later.data.find((d) => d.id === throttled.id)?.heldBy, null, 'the throttle is over');
      },
    );

    test(
      'probe now ends the cool-down: exactly one probe is claimed ' + 'next, and the history says the operator asked',
      async () => {
        const { appId, endpointId } = await openBreaker(3);
        assert.equal((await claim()).deliveries.length, 0, 'held during the cool-down');
        const probed = (await (await breaker(appId, endpointId, 'probe')).json()) as Health;
        assert.equal(probed.breaker.openUntil, clock.sqlNow().toISOString());
        assert.deepEqual(
          [probed.history[0]?.kind, probed.history[0]?.reason],
          ['breaker_probe_requested', 'cool-down ended by the operator: one probe next'],
        );
        const probe = await claim();
        assert.equal(probe.deliveries.length, 1, 'exactly one probe');
        assert.equal((await claim()).deliveries.length, 0, 'no second delivery while the probe is in flight');
        const halfOpen = (await (await breaker(appId, endpointId, 'probe')).json()) as Health;
        assert.equal(halfOpen.breaker.state, 'half_open', 'a half-open breaker already has its probe: nothing changes');
      },
    );

    test(
      'close breaker lets every held delivery be claimed; probe on a closed breaker is 409; both need ' +
        'ManageEndpoint',
      async () => {
        const { appId, endpointId } = await openBreaker(3);
        // Keys rather than portal tokens: a portal token's expiry is read against the real clock, not this one
        // (test/integration/api-capabilities.test.ts runs every capability set over every route).
        const key = async (body: object) => (await json<{ token: string }>('POST', '/api/v1/api-key', body)).token;
        const viewer = await key({ name: 'viewer', appId, readOnly: true });
        for (const action of ['probe', 'close']) {
          const refused = await errorOf(await breaker(appId, endpointId, action as 'probe' | 'close', viewer));
          assert.equal(refused.status, 403, `a read-only key may not ${action} the breaker`);
        }
        const closing = await breaker(appId, endpointId, 'close', await key({ name: 'manager', appId }));
        assert.equal(closing.status, 200);
        const closed = (await closing.json()) as Health;
        assert.deepEqual([closed.breaker.state, closed.breaker.consecutiveFailures], ['closed', 0]);
        assert.deepEqual(
          [closed.history[0]?.kind, closed.history[0]?.reason],
          ['breaker_closed', 'closed by an API key of the application'],
          'the history names who closed it',
        );
        assert.equal((await claim()).deliveries.length, 3, 'every held delivery goes');
        const again = await errorOf(await breaker(appId, endpointId, 'probe'));
        assert.deepEqual([again.status, again.code], [409, 'conflict']);
      },
    );

    test('a new URL resets the breaker (with a history row); the same URL does not', async () => {
      const { appId, endpointId } = await openBreaker(1);
      await json('PATCH', `/api/v1/app/${appId}/endpoint/${endpointId}`, { url: 'http://127.0.0.1:9/held' });
      assert.equal((await health(appId, endpointId)).breaker.state, 'open', 'the same URL keeps the breaker');
      await json('PUT', `/api/v1/app/${appId}/endpoint/${endpointId}`, {
        url: 'http://127.0.0.1:9/moved',
        description: '',
      });
      const reset = await health(appId, endpointId);
      assert.deepEqual(
        [reset.breaker.state, reset.breaker.consecutiveFailures, reset.breaker.openUntil],
        ['closed', 0, null],
      );
      assert.deepEqual(
        [reset.history[0]?.kind, reset.history[0]?.reason],
        ['breaker_closed', 'the endpoint URL changed'],
      );
    });

    test('recover says how many deliveries the breaker holds instead of answering only "0 sent"', async () => {
      const { appId, endpointId, openUntil } = await openBreaker(3);
      const since = new Date(clock.nowMs() - 3_600_000).toISOString();
      type Task = { id: string; status: string; data: Record<string, unknown> };
      const started = await json<Task>('POST', `/api/v1/app/${appId}/endpoint/${endpointId}/recover`, { since });
      const d = started.data;
      assert.deepEqual(
        { held: d.held, heldBy: d.heldBy, heldUntil: d.heldUntil, sent: d.messagesSent },
        { held: 3, heldBy: { paused: 0, breaker: 3, throttled: 0 }, heldUntil: openUntil, sent: 0 },
      );
      api.deps.taskRunner.kick();
      const deadline = Date.now() + 20_000;
      let task = await json<Task>('GET', `/api/v1/background-task/${started.id}`);
      while (task.status === 'running' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        task = await json('GET', `/api/v1/background-task/${started.id}`);
      }
      assert.equal(task.status, 'finished');
      assert.deepEqual([task.data.messagesSent, task.data.held, task.data.heldUntil], [0, 3, openUntil]);
    });
  });
}
