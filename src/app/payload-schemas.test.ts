import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../domain/errors.ts';
import type { EventTypeRecord } from '../ports/event-type-store.ts';
import { createPayloadSchemas, latestVersion } from './payload-schemas.ts';

const eventType = (schemas: Record<string, unknown> | null, updatedAtMs = 0): EventTypeRecord => ({
  name: 'thing.happened',
  description: '',
  archived: false,
  deprecated: false,
  schemas,
  groupName: null,
  featureFlags: null,
  createdAt: new Date(0),
  updatedAt: new Date(updatedAtMs),
  revision: '1',
});

const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

/** The issues of a refused payload, as `loc joined by dots → type`. */
function refusal(run: () => void): string[] {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof AppError && error.code === 'validation' && Array.isArray(error.detail));
    return (error.detail as { loc: (string | number)[]; type: string }[])
      .map((d) => `${d.loc.join('.')} ${d.type}`)
      .sort();
  }
  assert.fail('expected a 422');
}

test('latestVersion picks the highest numeric version, not the last key or the largest string', () => {
  assert.equal(latestVersion({ 2: {}, 10: {}, 9: {} }), '10');
  assert.equal(latestVersion({}), null);
  assert.equal(latestVersion({ v1: {} }), null);
});

test('check accepts Svix schemas maps and names each bad version', () => {
  const s = createPayloadSchemas();
  assert.deepEqual(s.check(null), []);
  assert.deepEqual(s.check({ 1: { type: 'object' }, 2: true }), []);
  assert.deepEqual(
    s.check({
      1: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }] },
    }),
    [],
  );
  assert.deepEqual(
    s.check([]).map((i) => i.loc),
    [['body', 'schemas']],
  );
  assert.deepEqual(
    s
      .check({ one: {}, 0: {}, 2: 'x', 3: { type: 'nonsense' } })
      .map((i) => i.loc.join('.'))
      .sort(),
    ['body.schemas.0', 'body.schemas.2', 'body.schemas.3', 'body.schemas.one'],
  );
});

test('validate checks the latest version with formats and reports the first violation under body.payload', () => {
  const s = createPayloadSchemas();
  const et = eventType({
    1: { type: 'object', required: ['old'] },
    2: {
      type: 'object',
      required: ['id', 'at'],
      properties: {
        id: { type: 'integer' },
        at: { type: 'string', format: 'date-time' },
        tags: { type: 'array', items: { type: 'string' } },
      },
    },
  });
  assert.doesNotThrow(
    () => s.validate(et, bytes({ id: 1, at: '2026-01-01T00:00:00Z' })),
    'version 1 no longer applies',
  );
  assert.deepEqual(
    refusal(() => s.validate(et, bytes({ at: 'soon', tags: ['a', 2] }))),
    ['body.payload.id value_error.jsonschema.required'],
  );
  assert.deepEqual(
    refusal(() => s.validate(et, bytes({ id: 1, at: 'soon', tags: ['a', 2] }))),
    ['body.payload.at value_error.jsonschema.format'],
  );
  assert.deepEqual(
    refusal(() => s.validate(et, bytes({ id: 1, at: '2026-01-01T00:00:00Z', tags: ['a', 2] }))),
    ['body.payload.tags.1 value_error.jsonschema.type'],
  );
  assert.deepEqual(
    refusal(() => s.validate(et, Buffer.from('{not json'))),
    ['body.payload value_error.json'],
  );
  assert.doesNotThrow(() => s.validate(eventType(null), Buffer.from('"anything"')));
});

test('a changed event type is compiled again (the cache follows updatedAt)', () => {
  const s = createPayloadSchemas();
  assert.doesNotThrow(() => s.validate(eventType({ 1: { type: 'number' } }, 1), bytes(5)));
  assert.deepEqual(
    refusal(() => s.validate(eventType({ 1: { type: 'string' } }, 2), bytes(5))),
    ['body.payload value_error.jsonschema.type'],
  );
  assert.doesNotThrow(() => s.validate(eventType({ 1: { type: 'number' } }, 3), bytes(5)));
});

test(
  'each pattern is checked by its own expression, within one ' + 'schema and across schemas (one shared compiler)',
  () => {
    const s = createPayloadSchemas();
    const first = { 1: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } };
    const second = {
      1: {
        type: 'object',
        properties: { x: { type: 'string', pattern: '^x+$' }, y: { type: 'string', pattern: '^y+$' } },
      },
    };
    assert.deepEqual([...s.check(first), ...s.check(second)], []);
    const record = (name: string, schemas: object) => ({ name, updatedAt: new Date(1), schemas }) as never;
    const json = (value: unknown) => Buffer.from(JSON.stringify(value));
    assert.throws(() => s.validate(record('first', first), json({ s: `${'a'.repeat(40)}!` })), /payload/);
    s.validate(record('second', second), json({ x: 'xxx', y: 'yy' }));
    assert.throws(
      () => s.validate(record('second', second), json({ x: 'yy', y: 'yy' })),
      (e: { detail: { loc: unknown[] }[] }) => e.detail.length === 1 && e.detail[0]!.loc.at(-1) === 'x',
    );
  },
);

test('a schema over the size or pattern cap is refused naming the setting', () => {
  const s = createPayloadSchemas({ maxSchemaBytes: 1024, maxSchemaPatterns: 2, maxSchemaUniqueItems: 100 });
  const big = { 1: { type: 'object', description: 'd'.repeat(2000) } };
  assert.match(s.check(big)[0]?.msg ?? '', /TIDINGS_MAX_SCHEMA_BYTES/);
  const many = {
    1: { type: 'object', patternProperties: { '^a': {}, '^b': {} }, properties: { c: { pattern: '^c' } } },
  };
  assert.match(s.check(many)[0]?.msg ?? '', /3 patterns; at most 2 \(TIDINGS_MAX_SCHEMA_PATTERNS\)/);
});

test('an event type schema whose own example fails it is refused at the example, a passing one is accepted', () => {
  const schemas = createPayloadSchemas();
  const schema = { type: 'object', required: ['invoice'], properties: { invoice: { type: 'integer' } } };
  assert.deepEqual(schemas.check({ 1: { ...schema, examples: [{ invoice: 1 }] } }), []);
  const issues = schemas.check({ 1: { ...schema, examples: [{ invoice: 1 }, { invoice: 'one' }, {}] } });
  assert.deepEqual(issues.map((i) => `${i.loc.join('.')} ${i.type}`).sort(), [
    'body.schemas.1.examples.1.invoice value_error.jsonschema.type',
    'body.schemas.1.examples.2.invoice value_error.jsonschema.required',
  ]);
});

test(
  'a uniqueItems that would compare items two by two is refused naming TIDINGS_MAX_SCHEMA_UNIQUE_ITEMS; scalar ' +
    'items or a bounded maxItems pass',
  () => {
    const s = createPayloadSchemas({ maxSchemaBytes: 16_384, maxSchemaPatterns: 64, maxSchemaUniqueItems: 10 });
    const refused = s.check({
      1: { type: 'object', properties: { a: { type: 'array', uniqueItems: true, items: { type: 'object' } } } },
    });
    assert.deepEqual(refused[0]?.loc, ['body', 'schemas', '1', 'properties', 'a', 'uniqueItems']);
    assert.match(refused[0]?.msg ?? '', /maxItems of at most 10 .*TIDINGS_MAX_SCHEMA_UNIQUE_ITEMS/);
    assert.equal(s.check({ 1: { type: 'array', uniqueItems: true, maxItems: 11 } }).length, 1);
    assert.deepEqual(s.check({ 1: { type: 'array', uniqueItems: true, maxItems: 10 } }), []);
    assert.deepEqual(s.check({ 1: { type: 'array', uniqueItems: true, items: { type: ['string', 'null'] } } }), []);
    assert.deepEqual(s.check({ 1: { type: 'array', uniqueItems: false } }), []);
  },
);

test('the uniqueItems guard reads schema positions only: the key in examples, const, enum or default is data', () => {
  const s = createPayloadSchemas({ maxSchemaBytes: 16_384, maxSchemaPatterns: 64, maxSchemaUniqueItems: 10 });
  const data = { uniqueItems: true, items: { uniqueItems: true } };
  assert.deepEqual(s.check({ 1: { type: 'object', examples: [data] } }), []);
  assert.deepEqual(s.check({ 1: { const: data } }), []);
  assert.deepEqual(s.check({ 1: { type: 'object', enum: [data, { a: [data] }] } }), []);
  assert.deepEqual(s.check({ 1: { type: 'object', properties: { a: { type: 'object', default: data } } } }), []);
  // Every position where a schema stands is still walked.
  const pairwise = { type: 'array', uniqueItems: true };
  const positions: [object, (string | number)[]][] = [
    [{ items: pairwise }, ['items']],
    [{ items: [pairwise] }, ['items', 0]],
    [{ prefixItems: [pairwise] }, ['prefixItems', 0]],
    [{ anyOf: [{}, pairwise] }, ['anyOf', 1]],
    [{ not: pairwise }, ['not']],
    [{ $defs: { x: pairwise } }, ['$defs', 'x']],
    [{ patternProperties: { '^a': pairwise } }, ['patternProperties', '^a']],
    [{ additionalProperties: pairwise }, ['additionalProperties']],
    [{ if: {}, then: pairwise }, ['then']],
    [{ dependentSchemas: { a: pairwise } }, ['dependentSchemas', 'a']],
  ];
  for (const [schema, path] of positions) {
    const loc = s.check({ 1: schema })[0]?.loc;
    assert.deepEqual(loc, ['body', 'schemas', '1', ...path, 'uniqueItems'], JSON.stringify(schema));
  }
});
