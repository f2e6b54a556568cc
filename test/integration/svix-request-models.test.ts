/**
 * Every request model of the official svix client (2.5.0, read from node_modules/svix/dist/index.d.mts):
 * each field is carried out (a probe through the client shows its effect), or refused with 422 naming it,
 * or documented as harmless to ignore — none is dropped silently. Models of routes Tidings does not serve
 * are refused whole (404 not_served, see docs/guides/coming-from-svix.md, "Not served"); a field outside any
 * served model is refused at its own loc.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { BackgroundTaskStatus, messageInRaw } from 'svix';
import { NOT_SERVED } from '../../src/http/not-served.ts';
import { encodeSecret } from '../../src/domain/signing.ts';
import { freshServerDatabase } from '../support/db.ts';
import { errorOf, startApi, type ApiHarness } from './api-harness.ts';

/** The request models of the client and their fields. */
function clientModels(): Map<string, string[]> {
  const dts = readFileSync(new URL('../../node_modules/svix/dist/index.d.mts', import.meta.url), 'utf8');
  const models = new Map<string, string[]>();
  for (const m of dts.matchAll(/^interface (\w+(?:In|Patch|UpsertIn|Update|In2)) \{\n([\s\S]*?)\n\}/gm)) {
    models.set(
      m[1]!,
      [...m[2]!.matchAll(/^ {2}(\w+)\??:/gm)].map((f) => f[1]!),
    );
  }
  return models;
}

/** How Tidings treats one field: the effect a probe below shows, or why it is refused or harmless. */
type Decision = { readonly done: string } | { readonly refused: string } | { readonly harmless: string };
const done = (what: string): Decision => ({ done: what });

const ECHOED = done('stored and read back as given');

/** Served models, field by field. */
const SERVED: Readonly<Record<string, Readonly<Record<string, Decision>>>> = {
  ApplicationIn: { name: ECHOED, throttleRate: ECHOED, uid: ECHOED, metadata: ECHOED },
  ApplicationPatch: { name: ECHOED, throttleRate: ECHOED, uid: ECHOED, metadata: ECHOED },
  EndpointIn: {
    url: ECHOED,
    description: ECHOED,
    throttleRate: ECHOED,
    uid: ECHOED,
    disabled: ECHOED,
    eventTypes: ECHOED,
    channels: ECHOED,
    metadata: ECHOED,
    secret: done('signs the requests (read back by getSecret)'),
    headers: done('sent with every request (read back by getHeaders)'),
  },
  EndpointUpsertIn: {
    url: ECHOED,
    description: ECHOED,
    throttleRate: ECHOED,
    uid: ECHOED,
    disabled: ECHOED,
    eventTypes: ECHOED,
    channels: ECHOED,
    metadata: ECHOED,
  },
  EndpointPatch: {
    url: ECHOED,
    description: ECHOED,
    throttleRate: ECHOED,
    uid: ECHOED,
    disabled: ECHOED,
    eventTypes: ECHOED,
    channels: ECHOED,
    metadata: ECHOED,
  },
  EventTypeIn: {
    name: ECHOED,
    description: ECHOED,
    archived: ECHOED,
    deprecated: ECHOED,
    schemas: done('enforced on publish, read back'),
    groupName: ECHOED,
    featureFlags: ECHOED,
  },
  EventTypeUpsertIn: {
    description: ECHOED,
    archived: ECHOED,
    deprecated: ECHOED,
    schemas: done('enforced on publish, read back'),
    groupName: ECHOED,
    featureFlags: ECHOED,
  },
  EventTypePatch: {
    description: ECHOED,
    archived: ECHOED,
    deprecated: ECHOED,
    schemas: done('enforced on publish, read back'),
    groupName: ECHOED,
    featureFlags: ECHOED,
  },
  MessageIn: {
    eventId: ECHOED,
    eventType: ECHOED,
    payload: done('delivered byte for byte'),
    channels: ECHOED,
    tags: ECHOED,
    deliverAt: done('first attempt due then, echoed'),
    application: done('created when the path names none'),
    transformationsParams: done('rawPayload delivered raw with headers["content-type"]; other keys 422'),
    payloadRetentionPeriod: done('retention in days'),
    payloadRetentionHours: done('retention in hours'),
  },
  EndpointSecretRotateIn: {
    key: done('the new secret'),
    gracePeriodSeconds: done('how long the previous secret still signs'),
  },
  EndpointHeadersIn: { headers: done('replaces the custom headers') },
  EndpointHeadersPatchIn: { headers: done('sets the given headers'), deleteHeaders: done('removes the named headers') },
  EventExampleIn: { eventType: done("the example message's type"), exampleIndex: done('which schema example is sent') },
  RecoverIn: { since: done('window start'), until: done('window end') },
  ReplayIn: { since: done('window start'), until: done('window end') },
  BulkReplayIn: {
    since: done('window start'),
    until: done('window end'),
    eventTypes: done('filter'),
    channel: done('filter'),
    tag: done('filter'),
    status: done('filter'),
    statusCodeClass: done('filter'),
  },
};

/**
 * The authentication models: served, with their own tests (test/integration/api-keys.test.ts). Their
 * fields are listed so that a new field of the client is noticed here too.
 */
const AUTHENTICATION = new Set(['AppPortalAccessIn', 'ApplicationTokenExpireIn']);

/** Models of routes Tidings does not serve → the family they belong to (docs/guides/coming-from-svix.md). */
const NOT_SERVED_MODELS: Readonly<Record<string, string>> = {
  AppUsageStatsIn: 'statistics',
  BulkExpungeContentsIn: 'bulk expunge',
  MessagePrecheckIn: 'message precheck',
  EventTypeImportOpenApiIn: 'OpenAPI import',
  EndpointTransformationIn: 'transformations',
  EndpointTransformationPatch: 'transformations',
  EnvironmentIn: 'environments',
  ConnectorIn: 'connectors',
  ConnectorPatch: 'connectors',
  ConnectorUpsertIn: 'connectors',
  IntegrationIn: 'integrations',
  IntegrationUpdate: 'integrations',
  PollingEndpointConsumerSeekIn: 'message poller',
  RotateSubscriptionIn2: 'autoconfig',
  FifoEndpointConfigIn: 'destinations',
  DestinationTransformIn: 'destinations',
  OperationalWebhookEndpointHeadersIn: 'operational-webhook endpoints',
  OperationalWebhookEndpointIn: 'operational-webhook endpoints',
  OperationalWebhookEndpointSecretIn: 'operational-webhook endpoints',
  OperationalWebhookEndpointUpsertIn: 'operational-webhook endpoints',
  CreateStreamEventsIn: 'streaming',
  StreamEventTypeIn: 'streaming',
  StreamEventTypePatch: 'streaming',
  StreamIn: 'streaming',
  StreamPatch: 'streaming',
  StreamPortalAccessIn: 'streaming',
  StreamTokenExpireIn: 'streaming',
  RotatePollerTokenIn: 'streaming',
  SinkTransformIn: 'streaming',
  HttpSinkHeadersPatchIn: 'streaming',
  IngestEndpointHeadersIn: 'ingest',
  IngestEndpointIn: 'ingest',
  IngestEndpointSecretIn: 'ingest',
  IngestEndpointTransformationPatch: 'ingest',
  IngestEndpointUpsertIn: 'ingest',
  IngestSourceConsumerPortalAccessIn: 'ingest',
  EventIn: 'streaming',
};

/** Sink configurations (of destinations and stream sinks): models named *ConfigIn / *ConfigPatch. */
const isSinkConfig = (model: string): boolean => /Config(In|Patch)$/.test(model);

test(
  'every field of every request model of the svix client has a decision: carried out, refused, or harmless to ' +
    'ignore',
  () => {
    const families = new Set(NOT_SERVED.map((f) => f.name));
    for (const [model, fields] of clientModels()) {
      if (AUTHENTICATION.has(model)) continue;
      if (isSinkConfig(model)) continue; // destinations and stream sinks: not served, whole
      if (model in NOT_SERVED_MODELS) {
        assert.ok(
          families.has(NOT_SERVED_MODELS[model]!),
          `${model}: "${NOT_SERVED_MODELS[model]}" is a not-served family`,
        );
        continue;
      }
      const decided = SERVED[model];
      assert.ok(decided !== undefined, `${model} (fields ${fields.join(', ')}) has no decision`);
      assert.deepEqual(
        Object.keys(decided).sort(),
        [...fields].sort(),
        `${model}: every field decided, no stale field`,
      );
    }
    for (const model of Object.keys(SERVED)) assert.ok(clientModels().has(model), `${model} is a model of the client`);
  },
);

describe('each field of a served model changes the outcome (through the svix client, PostgreSQL server)', () => {
  let api: ApiHarness;
  before(async () => {
    api = await startApi(freshServerDatabase, { TIDINGS_TASK_POLL_INTERVAL: '50ms' });
  });
  after(async () => api?.close());

  /** Asserts that every field of `model` decided `done` was shown by a probe. */
  const allShown = (model: string, shown: Set<string>): void => {
    const expected = Object.entries(SERVED[model]!)
      .filter(([, d]) => 'done' in d)
      .map(([f]) => f)
      .sort();
    assert.deepEqual([...shown].sort(), expected, `${model}: the probe shows every field`);
  };
  /** Compares `got[field]` with `want[field]` for each field of `want`, recording the ones that match. */
  const echoes = (got: object, want: Record<string, unknown>, shown: Set<string>): void => {
    for (const [field, value] of Object.entries(want)) {
      assert.deepEqual((got as Record<string, unknown>)[field], value, field);
      shown.add(field);
    }
  };

  test('ApplicationIn and ApplicationPatch', async () => {
    const fields = { name: 'app one', throttleRate: 7, uid: 'app-one', metadata: { k: 'v' } };
    const created = await api.svix.application.create(fields);
    const shown = new Set<string>();
    echoes(await api.svix.application.get(created.id), fields, shown);
    allShown('ApplicationIn', shown);
    const patch = { name: 'app two', throttleRate: 9, uid: 'app-two', metadata: { k: 'w' } };
    await api.svix.application.patch(created.id, patch);
    const patched = new Set<string>();
    echoes(await api.svix.application.get(created.id), patch, patched);
    allShown('ApplicationPatch', patched);
  });

  test('EndpointIn, EndpointUpsertIn and EndpointPatch', async () => {
    const app = await api.svix.application.create({ name: 'endpoints' });
    const secret = encodeSecret(Buffer.alloc(32, 3));
    const fields = {
      url: 'https://hooks.example/a',
      description: 'd',
      throttleRate: 5,
      uid: 'ep-a',
      disabled: true,
      eventTypes: ['a.b'],
      channels: ['c1'],
      metadata: { m: '1' },
    };
    const ep = await api.svix.endpoint.create(app.id, { ...fields, secret, headers: { 'x-custom': 'one' } });
    const shown = new Set<string>();
    echoes(await api.svix.endpoint.get(app.id, ep.id), fields, shown);
    assert.equal((await api.svix.endpoint.getSecret(app.id, ep.id)).key, secret);
    shown.add('secret');
    assert.deepEqual((await api.svix.endpoint.getHeaders(app.id, ep.id)).headers, { 'x-custom': 'one' });
    shown.add('headers');
    allShown('EndpointIn', shown);
    const upsert = {
      url: 'https://hooks.example/b',
      description: 'e',
      throttleRate: 6,
      uid: 'ep-b',
      disabled: false,
      eventTypes: ['b.c'],
      channels: ['c2'],
      metadata: { m: '2' },
    };
    await api.svix.endpoint.upsert(app.id, ep.id, upsert);
    const upserted = new Set<string>();
    echoes(await api.svix.endpoint.get(app.id, ep.id), upsert, upserted);
    allShown('EndpointUpsertIn', upserted);
    const patch = {
      url: 'https://hooks.example/c',
      description: 'f',
      throttleRate: 8,
      uid: 'ep-c',
      disabled: true,
      eventTypes: ['c.d'],
      channels: ['c3'],
      metadata: { m: '3' },
    };
    await api.svix.endpoint.patch(app.id, ep.id, patch);
    const patched = new Set<string>();
    echoes(await api.svix.endpoint.get(app.id, ep.id), patch, patched);
    allShown('EndpointPatch', patched);
  });

  test('EventTypeIn, EventTypeUpsertIn and EventTypePatch (schemas are enforced)', async () => {
    const schema = (required: string) => ({ 1: { type: 'object', required: [required] } });
    const fields = {
      name: 'model.type',
      description: 'd',
      archived: false,
      deprecated: true,
      schemas: schema('a'),
      groupName: 'g1',
      featureFlags: ['f1'],
    };
    await api.svix.eventType.create(fields);
    const app = await api.svix.application.create({ name: 'schemas' });
    const refusedBy = async (payload: object): Promise<boolean> =>
      api.svix.message.create(app.id, { eventType: 'model.type', payload }).then(
        () => false,
        () => true,
      );
    const check = async (model: string, want: Record<string, unknown>, required: string) => {
      const shown = new Set<string>();
      echoes(await api.svix.eventType.get('model.type'), want, shown);
      assert.equal(await refusedBy({}), true, `${model}: a payload without "${required}" is refused`);
      assert.equal(await refusedBy({ [required]: 1 }), false);
      allShown(model, shown);
    };
    await check('EventTypeIn', fields, 'a');
    const upsert = {
      description: 'e',
      archived: false,
      deprecated: false,
      schemas: schema('b'),
      groupName: 'g2',
      featureFlags: ['f2'],
    };
    await api.svix.eventType.upsert('model.type', upsert);
    await check('EventTypeUpsertIn', upsert, 'b');
    const patch = {
      description: 'f',
      archived: false,
      deprecated: true,
      schemas: schema('c'),
      groupName: 'g3',
      featureFlags: ['f3'],
    };
    await api.svix.eventType.patch('model.type', patch);
    await check('EventTypePatch', patch, 'c');
    await api.svix.eventType.patch('model.type', { archived: true });
    assert.equal((await api.svix.eventType.get('model.type')).archived, true, 'archived, too');
  });

  test('MessageIn', async () => {
    const shown = new Set<string>();
    const deliverAt = new Date(Date.now() + 60_000);
    const fields = { eventId: 'evt-model', eventType: 'model.msg', channels: ['ch'], tags: ['tg'], deliverAt };
    const msg = await api.svix.message.create('model-app', {
      ...fields,
      payload: { p: 1 },
      payloadRetentionPeriod: 3,
      application: { name: 'model app', uid: 'model-app' },
    });
    const read = await api.svix.message.get('model-app', msg.id, { withContent: true });
    echoes(read, fields, shown);
    assert.deepEqual(read.payload, { p: 1 });
    shown.add('payload');
    assert.equal((await api.svix.application.get('model-app')).name, 'model app');
    shown.add('application');
    const retention = async (id: string) =>
      (
        await api.database.db.query<{ retention_hours: number }>('SELECT retention_hours FROM messages WHERE id = $1', [
          id,
        ])
      ).rows[0]!.retention_hours;
    assert.equal(await retention(msg.id), 72);
    shown.add('payloadRetentionPeriod');
    const hours = await api.svix.message.create('model-app', {
      eventType: 'model.msg',
      payload: {},
      payloadRetentionHours: 5,
    });
    assert.equal(await retention(hours.id), 5);
    shown.add('payloadRetentionHours');
    const raw = await api.svix.message.create('model-app', messageInRaw('model.msg', 'raw body', 'text/csv'));
    assert.equal((await api.svix.message.get('model-app', raw.id, { withContent: true })).payload, 'raw body');
    shown.add('transformationsParams');
    allShown('MessageIn', shown);
  });

  test('EndpointSecretRotateIn, EndpointHeadersIn, EndpointHeadersPatchIn and EventExampleIn', async () => {
    const app = await api.svix.application.create({ name: 'settings' });
    const ep = await api.svix.endpoint.create(app.id, { url: 'https://hooks.example/settings' });
    const key = encodeSecret(Buffer.alloc(32, 9));
    await api.svix.endpoint.rotateSecret(app.id, ep.id, { key, gracePeriodSeconds: 120 });
    assert.equal((await api.svix.endpoint.getSecret(app.id, ep.id)).key, key);
    const grace = (
      await api.database.db.query<{ s: number }>(
        'SELECT extract(epoch FROM previous_secret_until - clock_timestamp())::float8 AS s FROM endpoints ' +
          'WHERE id = $1',
        [ep.id],
      )
    ).rows[0]!.s;
    assert.ok(grace > 100 && grace <= 120, String(grace));
    allShown('EndpointSecretRotateIn', new Set(['key', 'gracePeriodSeconds']));

    await api.svix.endpoint.setHeaders(app.id, ep.id, { headers: { 'x-a': '1', 'x-b': '2' } });
    assert.deepEqual((await api.svix.endpoint.getHeaders(app.id, ep.id)).headers, { 'x-a': '1', 'x-b': '2' });
    allShown('EndpointHeadersIn', new Set(['headers']));
    await api.svix.endpoint.patchHeaders(app.id, ep.id, { headers: { 'x-c': '3' }, deleteHeaders: ['x-a'] });
    assert.deepEqual((await api.svix.endpoint.getHeaders(app.id, ep.id)).headers, { 'x-b': '2', 'x-c': '3' });
    allShown('EndpointHeadersPatchIn', new Set(['headers', 'deleteHeaders']));

    await api.svix.eventType.create({
      name: 'model.example',
      description: 'x',
      schemas: { 1: { type: 'object', examples: [{ n: 0 }, { n: 1 }] } },
    });
    const sent = await api.svix.endpoint.sendExample(app.id, ep.id, { eventType: 'model.example', exampleIndex: 1 });
    const example = await api.svix.message.get(app.id, sent.id, { withContent: true });
    assert.deepEqual([example.eventType, example.payload], ['model.example', { n: 1 }]);
    allShown('EventExampleIn', new Set(['eventType', 'exampleIndex']));
  });

  test('RecoverIn, ReplayIn and BulkReplayIn select by their window and filters', async () => {
    const app = await api.svix.application.create({ name: 'replays' });
    const ep = await api.svix.endpoint.create(app.id, { url: 'https://hooks.example/replays' });
    const publish = async (eventType: string, channels: string[], tags: string[]) =>
      (await api.svix.message.create(app.id, { eventType, payload: {}, channels, tags })).id;
    const a = await publish('r.a', ['c1'], ['t1']);
    const b = await publish('r.b', ['c2'], ['t2']);
    const stamp = async (id: string) => (await api.svix.message.get(app.id, id)).timestamp;
    const since = await stamp(a);
    const until = new Date((await stamp(b)).getTime());
    const c = await publish('r.a', ['c1'], ['t1']);
    const settle = async (state: 'dead' | 'succeeded', status = 500) =>
      api.database.db.query(
        'UPDATE deliveries SET state = $2, attempt_count = 4, last_status_code = $3, dead_reason = CASE WHEN ' +
          `$2 = 'dead' THEN 'exhausted' END WHERE message_id = ANY ($1::text[])`,
        [[a, b, c], state, status],
      );
    const sent = async (started: Promise<{ id: string }>): Promise<number> => {
      const id = (await started).id;
      for (let i = 0; i < 500; i++) {
        const task = await api.svix.backgroundTask.get(id);
        if (task.status !== BackgroundTaskStatus.Running)
          return Number((task.data as { messagesSent?: number }).messagesSent);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return assert.fail('task still running');
    };
    await settle('dead');
    assert.equal(
      await sent(api.svix.endpoint.recover(app.id, ep.id, { since, until })),
      1,
      'recover: [since, until) holds a only',
    );
    await settle('dead');
    assert.equal(await sent(api.svix.endpoint.recover(app.id, ep.id, { since: until })), 2, 'recover: since');
    allShown('RecoverIn', new Set(['since', 'until']));
    await api.database.db.query(`UPDATE deliveries SET state = 'skipped' WHERE message_id = ANY ($1::text[])`, [
      [a, b, c],
    ]);
    assert.equal(
      await sent(api.svix.endpoint.replayMissing(app.id, ep.id, { since, until })),
      1,
      'replay-missing: the window',
    );
    assert.equal(await sent(api.svix.endpoint.replayMissing(app.id, ep.id, { since: until })), 2);
    allShown('ReplayIn', new Set(['since', 'until']));
    const bulk = async (
      filters: Omit<Parameters<typeof api.svix.endpoint.bulkReplay>[2], 'since'>,
      state: 'dead' | 'succeeded' = 'dead',
      status = 500,
    ) => {
      await settle(state, status);
      return sent(api.svix.endpoint.bulkReplay(app.id, ep.id, { since, ...filters }));
    };
    assert.equal(await bulk({}), 3);
    assert.equal(await bulk({ until }), 1, 'until');
    assert.equal(await bulk({ eventTypes: ['r.b'] }), 1, 'eventTypes');
    assert.equal(await bulk({ channel: 'c1' }), 2, 'channel');
    assert.equal(await bulk({ tag: 't2' }), 1, 'tag');
    assert.equal(await bulk({ status: 0 }), 0, 'status success: no succeeded delivery');
    assert.equal(await bulk({ status: 0 }, 'succeeded', 200), 3, 'status success');
    assert.equal(await bulk({ statusCodeClass: 400 }), 0, 'statusCodeClass');
    allShown('BulkReplayIn', new Set(['since', 'until', 'eventTypes', 'channel', 'tag', 'status', 'statusCodeClass']));
  });

  test('a field outside each served model is refused with 422 at that field, and nothing is done', async () => {
    const app = await api.svix.application.create({ name: 'extra', uid: 'extra-app' });
    const ep = await api.svix.endpoint.create(app.id, { url: 'https://hooks.example/extra', uid: 'extra-ep' });
    await api.svix.eventType.create({ name: 'extra.type', description: 'x' });
    const since = new Date(Date.now() - 60_000).toISOString();
    const cases: [string, string, string, Record<string, unknown>][] = [
      ['ApplicationIn', 'POST', '/api/v1/app', { name: 'x' }],
      ['ApplicationPatch', 'PATCH', '/api/v1/app/extra-app', {}],
      ['EndpointIn', 'POST', '/api/v1/app/extra-app/endpoint', { url: 'https://hooks.example/x' }],
      ['EndpointUpsertIn', 'PUT', '/api/v1/app/extra-app/endpoint/extra-ep', { url: 'https://hooks.example/x' }],
      ['EndpointPatch', 'PATCH', '/api/v1/app/extra-app/endpoint/extra-ep', {}],
      ['EventTypeIn', 'POST', '/api/v1/event-type', { name: 'extra.other', description: 'x' }],
      ['EventTypeUpsertIn', 'PUT', '/api/v1/event-type/extra.type', { description: 'x' }],
      ['EventTypePatch', 'PATCH', '/api/v1/event-type/extra.type', {}],
      ['MessageIn', 'POST', '/api/v1/app/extra-app/msg', { eventType: 'extra.type', payload: {} }],
      ['EndpointSecretRotateIn', 'POST', '/api/v1/app/extra-app/endpoint/extra-ep/secret/rotate', {}],
      ['EndpointHeadersIn', 'PUT', '/api/v1/app/extra-app/endpoint/extra-ep/headers', { headers: {} }],
      ['EndpointHeadersPatchIn', 'PATCH', '/api/v1/app/extra-app/endpoint/extra-ep/headers', { headers: {} }],
      ['EventExampleIn', 'POST', '/api/v1/app/extra-app/endpoint/extra-ep/send-example', { eventType: 'extra.type' }],
      ['RecoverIn', 'POST', '/api/v1/app/extra-app/endpoint/extra-ep/recover', { since }],
      ['ReplayIn', 'POST', '/api/v1/app/extra-app/endpoint/extra-ep/replay-missing', { since }],
      ['BulkReplayIn', 'POST', '/api/v1/app/extra-app/endpoint/extra-ep/bulk-replay', { since }],
    ];
    assert.deepEqual(cases.map((c) => c[0]).sort(), Object.keys(SERVED).sort(), 'every served model');
    const counts = async () =>
      (
        await api.database.db.query<{ n: string }>(
          'SELECT (SELECT count(*) FROM applications) + (SELECT count(*) FROM endpoints) + (SELECT count(*) ' +
            'FROM messages) + (SELECT count(*) FROM background_tasks) + (SELECT count(*) FROM event_types) AS n',
        )
      ).rows[0]!.n;
    const before = await counts();
    for (const [model, method, path, body] of cases) {
      const err = await errorOf(await api.request(method, path, { body: JSON.stringify({ ...body, notAField: 1 }) }));
      assert.deepEqual(
        [err.status, err.code, err.detail],
        [
          422,
          'validation',
          [{ loc: ['body', 'notAField'], msg: 'extra fields not permitted', type: 'value_error.extra' }],
        ],
        model,
      );
    }
    assert.equal(await counts(), before, 'nothing created');
    assert.equal((await api.svix.endpoint.get(app.id, ep.id)).url, 'https://hooks.example/extra');
  });
});
