/**
 * The retry-policy routes (docs/reference/api.md, "Retry policies"): set, patched, cleared and read back with every
 * field resolved and its source; refused with 422 naming the field when outside the installation's limits, changing
 * nothing; the Svix request models stay strict. On both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

/** Limits of this file's installation (the defaults but the lease, to show the attempt timeout's bound). */
const ENV = { TIDINGS_LEASE: '10s', TIDINGS_ATTEMPT_DEADLINE: '2s', TIDINGS_RETRY_SCHEDULE: '5s,1m' };
const EP = '/api/v1/app/policies/endpoint/ep-p/retry-policy';
const TYPE = '/api/v1/event-type/policy.typed/retry-policy';
const NONE = { schedule: null, attemptTimeout: null, maxAttempts: null };

/** A refused body, the locs of its 422 and a pattern of the first message. */
const REFUSALS: readonly [object, string[], RegExp][] = [
  [{ attemptTimeout: '9001ms' }, ['body.attemptTimeout'], /TIDINGS_LEASE \(10000 ms\) must exceed the attempt timeout/],
  [{ maxAttempts: 0 }, ['body.maxAttempts'], /from 1 to 50 \(TIDINGS_RETRY_POLICY_MAX_ATTEMPTS\)/],
  [{ maxAttempts: 51 }, ['body.maxAttempts'], /TIDINGS_RETRY_POLICY_MAX_ATTEMPTS/],
  [{ schedule: ['1s', '2d'] }, ['body.schedule.1'], /at most 86400000 ms \(TIDINGS_RETRY_POLICY_MAX_DELAY\)/],
  [{ schedule: [10] }, ['body.schedule.0'], /TIDINGS_RETRY_POLICY_MIN_DELAY/],
  [{ schedule: Array.from({ length: 21 }, () => '1s') }, ['body.schedule'], /TIDINGS_RETRY_POLICY_MAX_DELAYS/],
  [{ schedule: [] }, ['body.schedule'], /set maxAttempts to 1/],
  [{ schedule: ['soon'] }, ['body.schedule.0'], /is not a duration/],
  [{ attemptTimeout: -1 }, ['body.attemptTimeout'], /./],
  [{ maxAttempts: 2.5 }, ['body.maxAttempts'], /./],
  [{ retries: 3 }, ['body.retries'], /extra fields not permitted/],
  [{ maxAttempts: 0, attemptTimeout: '1h' }, ['body.maxAttempts', 'body.attemptTimeout'], /./],
];

for (const engine of ENGINES) {
  describe(`retry policies through the API (${engine.name})`, () => {
    let api: ApiHarness;
    let appId: string;
    let epId: string;
    before(async () => {
      api = await startApi(engine.fresh, ENV);
      appId = (await api.svix.application.create({ name: 'policies', uid: 'policies' })).id;
      epId = (await api.svix.endpoint.create(appId, { url: 'https://hooks.example/p', uid: 'ep-p' })).id;
      await api.svix.eventType.create({ name: 'policy.typed', description: 'x' });
    });
    after(async () => api?.close());

    type Answer = { status: number; json: Record<string, unknown> | null };
    const call = async (method: string, path: string, body?: unknown, token?: string): Promise<Answer> => {
      const res = await api.request(method, path, {
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(token === undefined ? {} : { token }),
      });
      return { status: res.status, json: res.status === 204 ? null : ((await res.json()) as Record<string, unknown>) };
    };
    const policyOf = async (path: string): Promise<unknown> => (await call('GET', path)).json!.policy;

    test("an endpoint's policy is set, patched, read with each field resolved and its source, cleared", async () => {
      assert.deepEqual(await call('GET', EP), {
        status: 200,
        json: {
          policy: NONE,
          eventType: null,
          effective: {
            schedule: [5000, 60_000],
            attemptTimeout: 2000,
            maxAttempts: 3,
            sources: { schedule: 'installation', attemptTimeout: 'installation', maxAttempts: 'schedule' },
          },
        },
      });
      const set = await call('PUT', EP, { schedule: ['1s', 2500, '1m'], attemptTimeout: '1500ms' });
      assert.equal(set.status, 200);
      assert.deepEqual(set.json!.policy, { schedule: [1000, 2500, 60_000], attemptTimeout: 1500, maxAttempts: null });
      assert.deepEqual(set.json!.effective, {
        schedule: [1000, 2500, 60_000],
        attemptTimeout: 1500,
        maxAttempts: 4,
        sources: { schedule: 'endpoint', attemptTimeout: 'endpoint', maxAttempts: 'schedule' },
      });
      const patched = await call('PATCH', EP, { maxAttempts: 7, attemptTimeout: null });
      assert.deepEqual(patched.json!.policy, { schedule: [1000, 2500, 60_000], attemptTimeout: null, maxAttempts: 7 });
      // The event type's policy takes part for its messages: the fields the endpoint leaves unset come from it.
      assert.equal((await call('PUT', TYPE, { attemptTimeout: '3s', maxAttempts: 2 })).status, 200);
      const forType = await call('GET', `${EP}?event_type=policy.typed`);
      assert.deepEqual(forType.json!.effective, {
        schedule: [1000, 2500, 60_000],
        attemptTimeout: 3000,
        maxAttempts: 7,
        sources: { schedule: 'endpoint', attemptTimeout: 'eventType', maxAttempts: 'endpoint' },
      });
      assert.equal(forType.json!.eventType, 'policy.typed');
      assert.deepEqual((await call('GET', TYPE)).json!.effective, {
        schedule: [5000, 60_000],
        attemptTimeout: 3000,
        maxAttempts: 2,
        sources: { schedule: 'installation', attemptTimeout: 'eventType', maxAttempts: 'eventType' },
      });
      const replaced = await call('PUT', EP, { maxAttempts: 1 });
      assert.deepEqual(replaced.json!.policy, { ...NONE, maxAttempts: 1 }, 'PUT replaces the whole policy');
      assert.equal((await call('DELETE', EP)).status, 204);
      assert.deepEqual(await policyOf(EP), NONE);
      const stored = await api.database.db.query<{ retry_policy: unknown }>(
        'SELECT retry_policy FROM endpoints WHERE id = $1',
        [epId],
      );
      assert.equal(stored.rows[0]!.retry_policy, null, 'a cleared policy is stored as none');
      assert.equal((await call('DELETE', TYPE)).status, 204);
    });

    test("a policy outside the installation's limits is 422 naming each field, and nothing changes", async () => {
      await call('PUT', EP, { maxAttempts: 4 });
      for (const [body, locs, msg] of REFUSALS) {
        for (const [method, path] of [
          ['PUT', EP],
          ['PATCH', EP],
          ['PUT', TYPE],
        ] as const) {
          const err = await errorOf(await api.request(method, path, { body: JSON.stringify(body) }));
          const detail = err.detail as { loc: (string | number)[]; msg: string }[];
          const got = [err.status, err.code, detail.map((d) => d.loc.join('.'))];
          assert.deepEqual(got, [422, 'validation', locs], `${method} ${path} ${JSON.stringify(body)}`);
          assert.match(detail[0]!.msg, msg);
        }
      }
      assert.deepEqual(await policyOf(EP), { ...NONE, maxAttempts: 4 }, 'unchanged');
      assert.deepEqual(await policyOf(TYPE), NONE, 'unchanged');
      // At the limits themselves it is accepted.
      const atLimits = { attemptTimeout: 9000, maxAttempts: 50, schedule: ['1s', '1d'] };
      assert.equal((await call('PUT', EP, atLimits)).status, 200);
      await call('DELETE', EP);
    });

    test('the Svix models stay strict: a retryPolicy field on an endpoint or event type is 422 at it', async () => {
      const policy = { maxAttempts: 2 };
      for (const [method, path, body] of [
        ['POST', '/api/v1/app/policies/endpoint', { url: 'https://hooks.example/q', retryPolicy: policy }],
        ['PATCH', '/api/v1/app/policies/endpoint/ep-p', { retryPolicy: policy }],
        ['PUT', '/api/v1/event-type/policy.typed', { description: 'x', retryPolicy: policy }],
      ] as const) {
        const err = await errorOf(await api.request(method, path, { body: JSON.stringify(body) }));
        const locs = (err.detail as { loc: string[] }[]).map((d) => d.loc.join('.'));
        assert.deepEqual([err.status, locs], [422, ['body.retryPolicy']], `${method} ${path}`);
      }
    });

    test("an application key sets its endpoints' policies, not another's nor a type's; 404 for none", async () => {
      const token = await api.appKey(appId);
      assert.equal((await call('PUT', EP, { maxAttempts: 2 }, token)).status, 200);
      const other = await api.svix.application.create({ name: 'other', uid: 'other-app' });
      await api.svix.endpoint.create(other.id, { url: 'https://hooks.example/o', uid: 'ep-o' });
      const otherPath = '/api/v1/app/other-app/endpoint/ep-o/retry-policy';
      assert.equal((await call('PUT', otherPath, { maxAttempts: 2 }, token)).status, 404);
      assert.equal((await call('PUT', TYPE, { maxAttempts: 2 }, token)).status, 403);
      assert.equal((await call('GET', TYPE, undefined, token)).status, 200, 'read by anyone, as event types are');
      assert.equal((await call('GET', '/api/v1/app/policies/endpoint/ep-none/retry-policy')).status, 404);
      assert.equal((await call('PUT', '/api/v1/event-type/no.such.type/retry-policy', { maxAttempts: 2 })).status, 404);
      await call('DELETE', EP);
    });
  });
}
