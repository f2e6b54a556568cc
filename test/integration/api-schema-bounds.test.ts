/**
 * The work of checking a payload against its event type's JSON Schema, and the size of any error answer,
 * are bounded: a schema whose `uniqueItems` would compare items two by two is refused when it is written; a
 * check stops at its first violation; an answer lists at most ERROR_BOUNDS.issuesMax fields with each text
 * bounded, whatever the request holds. Through the official client and raw requests, on the PostgreSQL server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ERROR_BOUNDS } from '../../src/domain/error-bounds.ts';
import { freshServerDatabase } from '../support/db.ts';
import { startApi, type ApiHarness } from './api-harness.ts';

/** Largest error answer a request may get, in bytes: the issues shown, each text bounded, with room for JSON. */
const ANSWER_BOUND = (ERROR_BOUNDS.issuesMax + 1) * (ERROR_BOUNDS.textMaxChars * 3 + 200);

interface Answer {
  readonly status: number;
  readonly bytes: number;
  readonly issues: readonly {
    readonly loc: readonly (string | number)[];
    readonly msg: string;
    readonly type: string;
  }[];
}

async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  const body = JSON.parse(text) as { detail?: unknown };
  return {
    status: res.status,
    bytes: Buffer.byteLength(text),
    issues: Array.isArray(body.detail) ? (body.detail as Answer['issues']) : [],
  };
}

describe('bounded schema checks and error answers', () => {
  let api: ApiHarness;
  let appId: string;
  before(async () => {
    // Bodies of any depth reach the schema checks here (TIDINGS_MAX_JSON_DEPTH, default 128, would refuse first).
    api = await startApi(freshServerDatabase, {
      TIDINGS_MAX_BODY_BYTES: String(2 * 1024 * 1024),
      TIDINGS_MAX_JSON_DEPTH: '1000000',
    });
    appId = (await api.svix.application.create({ name: 'bounds' })).id;
  });
  after(async () => api?.close());

  const publish = async (eventType: string, payload: unknown): Promise<Answer> =>
    answerOf(await api.request('POST', `/api/v1/app/${appId}/msg`, { body: JSON.stringify({ eventType, payload }) }));

  test(
    'a uniqueItems that would compare 20,000 objects two by two is refused when the event type is written, ' +
      'naming TIDINGS_MAX_SCHEMA_UNIQUE_ITEMS; scalar items, or a maxItems within the cap, are accepted',
    async () => {
      for (const [name, schema, loc] of [
        [
          'unique.untyped',
          { type: 'object', properties: { list: { type: 'array', uniqueItems: true } } },
          ['properties', 'list', 'uniqueItems'],
        ],
        ['unique.objects', { type: 'array', uniqueItems: true, items: { type: 'object' } }, ['uniqueItems']],
        [
          'unique.mixed',
          {
            $defs: { l: { type: 'array', uniqueItems: true, items: { type: ['string', 'array'] } } },
            $ref: '#/$defs/l',
          },
          ['$defs', 'l', 'uniqueItems'],
        ],
        [
          'unique.too.many',
          { type: 'array', uniqueItems: true, maxItems: api.config.maxSchemaUniqueItems + 1 },
          ['uniqueItems'],
        ],
      ] as const) {
        const res = await answerOf(
          await api.request('POST', '/api/v1/event-type', {
            body: JSON.stringify({ name, description: 'd', schemas: { 1: schema } }),
          }),
        );
        assert.equal(res.status, 422, name);
        assert.deepEqual(res.issues[0]?.loc, ['body', 'schemas', '1', ...loc], name);
        assert.match(res.issues[0]?.msg ?? '', /TIDINGS_MAX_SCHEMA_UNIQUE_ITEMS/, name);
      }
      await api.svix.eventType.create({
        name: 'unique.scalars',
        description: 'd',
        schemas: {
          1: {
            type: 'object',
            properties: { ids: { type: 'array', uniqueItems: true, items: { type: ['string', 'integer'] } } },
          },
        },
      });
      await api.svix.eventType.create({
        name: 'unique.bounded',
        description: 'd',
        schemas: {
          1: {
            type: 'object',
            properties: { list: { type: 'array', uniqueItems: true, maxItems: api.config.maxSchemaUniqueItems } },
          },
        },
      });
      const objects = Array.from({ length: 20_000 }, (_, i) => ({ n: i }));
      const refused = await publish('unique.bounded', { list: objects });
      assert.equal(refused.status, 422, 'refused');
      assert.equal(
        refused.issues[0]?.type,
        'value_error.jsonschema.maxItems',
        'by maxItems, before any pair is compared',
      );
      assert.equal(
        (await publish('unique.scalars', { ids: Array.from({ length: 50_000 }, (_, i) => `id-${i}`) })).status,
        202,
        'scalar items are hashed',
      );
    },
  );

  test('a payload with 20,000 violations gets a 422 naming the first, not a list of every violation', async () => {
    await api.svix.eventType.create({
      name: 'all.strings',
      description: 'd',
      schemas: { 1: { type: 'object', additionalProperties: { type: 'string' } } },
    });
    const payload = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
    const res = await publish('all.strings', payload);
    assert.equal(res.status, 422);
    assert.equal(res.issues.length, 1, 'the first violation');
    assert.deepEqual(res.issues[0]?.loc, ['body', 'payload', 'k0']);
    assert.ok(res.bytes < ANSWER_BOUND, `${res.bytes} bytes`);
  });

  test(
    'a body with thousands of unknown fields, or one of 100,000 characters, gets a 422 of at most ' +
      'ERROR_BOUNDS.issuesMax fields with every text bounded',
    async () => {
      const many = Object.fromEntries([['name', 'x'], ...Array.from({ length: 5_000 }, (_, i) => [`unknown${i}`, i])]);
      const res = await answerOf(await api.request('POST', '/api/v1/app', { body: JSON.stringify(many) }));
      assert.equal(res.status, 422);
      assert.equal(res.issues.length, ERROR_BOUNDS.issuesMax + 1, 'the first fields, then one saying how many more');
      assert.deepEqual(res.issues.at(-1), {
        loc: ['body'],
        msg:
          `${5_000 - ERROR_BOUNDS.issuesMax} more failing fields are not listed (an answer lists at most ` +
          `${ERROR_BOUNDS.issuesMax}); fix these and send again`,
        type: 'value_error.more_issues',
      });
      assert.ok(res.bytes < ANSWER_BOUND, `${res.bytes} bytes`);

      const long = `k${'x'.repeat(100_000)}`;
      const one = await answerOf(
        await api.request('POST', '/api/v1/app', { body: JSON.stringify({ name: 'x', [long]: 1 }) }),
      );
      assert.equal(one.status, 422);
      const segment = String(one.issues[0]?.loc[1]);
      assert.ok(
        segment.startsWith('kxxx') && segment.length < ERROR_BOUNDS.textMaxChars + 64,
        `loc segment of ${segment.length} characters`,
      );
      assert.ok(one.bytes < ANSWER_BOUND, `${one.bytes} bytes`);
    },
  );
  test(
    'a schema whose $ref comes back to the same value without stepping into it is refused 422 naming the ' +
      'field (on create, replace and patch, with or without examples); a tree that steps into items is accepted',
    async () => {
      const loops: [unknown, readonly (string | number)[]][] = [
        [{ anyOf: [{ $ref: '#' }, { type: 'object' }] }, ['anyOf', 0, '$ref']],
        [{ $defs: { x: { allOf: [{ $ref: '#/$defs/x' }] } }, $ref: '#/$defs/x' }, ['$defs', 'x', 'allOf', 0, '$ref']],
        [{ $defs: { x: { anyOf: [{ $ref: '#/$defs/x' }, { type: 'string' }] } }, $ref: '#/$defs/x' }, ['$defs', 'x']],
        [{ $defs: { x: { $ref: '#/$defs/y' }, y: { $ref: '#/$defs/x' } }, $ref: '#/$defs/x' }, ['$defs']],
        [{ not: { $ref: '#' } }, ['not', '$ref']],
        [{ anyOf: [{ $ref: '#' }, { type: 'object' }], examples: [{ a: 1 }] }, ['anyOf', 0, '$ref']],
      ];
      const base = await api.request('POST', '/api/v1/event-type', {
        body: JSON.stringify({ name: 'loop.base', description: 'd', schemas: { 1: { type: 'object' } } }),
      });
      assert.equal(base.status, 201);
      for (const [i, [schema, at]] of loops.entries()) {
        const schemas = JSON.stringify({ 1: schema });
        for (const [method, path, body] of [
          ['POST', '/api/v1/event-type', `{"name":"loop.${i}","description":"d","schemas":${schemas}}`],
          ['PUT', '/api/v1/event-type/loop.base', `{"description":"d","schemas":${schemas}}`],
          ['PATCH', '/api/v1/event-type/loop.base', `{"schemas":${schemas}}`],
        ] as const) {
          const res = await answerOf(await api.request(method, path, { body }));
          assert.equal(res.status, 422, `${method} ${schemas}`);
          const issue = res.issues[0];
          assert.deepEqual(issue?.loc.slice(0, 3 + at.length), ['body', 'schemas', '1', ...at], schemas);
          assert.equal(issue?.type, 'value_error.jsonschema.ref_loop', schemas);
          assert.doesNotMatch(issue?.msg ?? '', /call stack|RangeError/, schemas);
        }
      }
      assert.equal((await publish('loop.base', { a: 1 })).status, 202, 'the event type kept its schema');
      const tree = {
        type: 'object',
        properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
        examples: [{ name: 'a', children: [{ name: 'b', children: [] }] }],
      };
      await api.svix.eventType.create({ name: 'loop.tree', description: 'd', schemas: { 1: tree } });
      assert.equal((await publish('loop.tree', { name: 'a', children: [{ name: 'b' }] })).status, 202);
      const bad = await publish('loop.tree', { children: [{ name: 1 }] });
      assert.deepEqual([bad.status, bad.issues[0]?.loc], [422, ['body', 'payload', 'children', 0, 'name']]);
    },
  );

  test(
    'a check that runs out of call stack is a 422, never a 500: a looping schema stored earlier names ' +
      'body.eventType, a payload nested too deeply names body.payload, a schema (or its example) too deep ' +
      'names the schema',
    async () => {
      await api.svix.eventType.create({ name: 'stored.loop', description: 'd', schemas: { 1: { type: 'object' } } });
      // As a release that accepted it left it: written past the API's checks.
      await api.database.db.query(
        `UPDATE event_types SET schemas = $1, updated_at = clock_timestamp() WHERE name = 'stored.loop'`,
        [JSON.stringify({ 1: { anyOf: [{ $ref: '#' }, { type: 'object' }] } })],
      );
      for (let i = 0; i < 3; i++) {
        const res = await publish('stored.loop', { a: i });
        assert.equal(res.status, 422);
        assert.deepEqual(res.issues[0]?.loc, ['body', 'eventType']);
        assert.equal(res.issues[0]?.type, 'value_error.jsonschema.unusable_schema');
        assert.match(res.issues[0]?.msg ?? '', /stored\.loop/);
      }

      const tree = { type: 'object', properties: { c: { $ref: '#' } } };
      await api.svix.eventType.create({ name: 'deep.tree', description: 'd', schemas: { 1: tree } });
      const depth = 200_000;
      const deep = `{"eventType":"deep.tree","payload":${'{"c":'.repeat(depth)}{}${'}'.repeat(depth)}}`;
      const res = await answerOf(await api.request('POST', `/api/v1/app/${appId}/msg`, { body: deep }));
      assert.equal(res.status, 422, 'a payload nested too deeply');
      assert.deepEqual(res.issues[0]?.loc, ['body', 'payload']);
      assert.equal(res.issues[0]?.type, 'value_error.jsonschema.too_deep');

      const example = `${'{"c":'.repeat(depth)}{}${'}'.repeat(depth)}`;
      const withExample = await answerOf(
        await api.request('POST', '/api/v1/event-type', {
          body:
            '{"name":"deep.example","description":"d","schemas":{"1":{"type":"object",' +
            `"properties":{"c":{"$ref":"#"}},"examples":[${example}]}}}`,
        }),
      );
      assert.equal(withExample.status, 422, 'an example nested too deeply');
      assert.deepEqual(withExample.issues[0]?.loc, ['body', 'schemas', '1']);
      assert.equal(withExample.issues[0]?.type, 'value_error.jsonschema.too_deep');
      assert.doesNotMatch(withExample.issues[0]?.msg ?? '', /call stack|RangeError/);
    },
  );
});
