import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameValueRefLoop } from './schema-ref-cycles.ts';

test('a reference that comes back to the same value without stepping into it is found, with its path', () => {
  const cases: [unknown, readonly (string | number)[]][] = [
    [{ anyOf: [{ $ref: '#' }, { type: 'object' }] }, ['anyOf', 0, '$ref']],
    [{ not: { $ref: '#' } }, ['not', '$ref']],
    [{ $ref: '#' }, ['$ref']],
    [{ $defs: { x: { allOf: [{ $ref: '#/$defs/x' }] } }, $ref: '#/$defs/x' }, ['$defs', 'x', 'allOf', 0, '$ref']],
    [{ $defs: { x: { $ref: '#/$defs/y' }, y: { $ref: '#/$defs/x' } } }, ['$defs', 'y', '$ref']],
    [
      { definitions: { 'a/b': { oneOf: [{ $ref: '#/definitions/a~1b' }] } } },
      ['definitions', 'a/b', 'oneOf', 0, '$ref'],
    ],
    [{ $defs: { 'a b': { not: { $ref: '#/$defs/a%20b' } } } }, ['$defs', 'a b', 'not', '$ref']],
    [{ if: { type: 'string' }, then: { $ref: '#' } }, ['then', '$ref']],
    [{ dependentSchemas: { a: { $ref: '#' } } }, ['dependentSchemas', 'a', '$ref']],
    [{ $defs: { x: { $anchor: 'me', anyOf: [{ $ref: '#me' }] } } }, ['$defs', 'x', 'anyOf', 0, '$ref']],
    [
      { $id: 'https://e.com/s', $defs: { x: { anyOf: [{ $ref: 'https://e.com/s#/$defs/x' }] } } },
      ['$defs', 'x', 'anyOf', 0, '$ref'],
    ],
    [{ $id: 'https://e.com/s', $defs: { x: { $id: 'x.json', not: { $ref: '#' } } } }, ['$defs', 'x', 'not', '$ref']],
    [{ $dynamicAnchor: 'm', anyOf: [{ $dynamicRef: '#m' }] }, ['anyOf', 0, '$dynamicRef']],
  ];
  for (const [schema, path] of cases) assert.deepEqual(sameValueRefLoop(schema), path, JSON.stringify(schema));
});

test('a recursive schema that steps into a property or an item before it refers back is sound', () => {
  const sound: unknown[] = [
    { type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } } },
    { anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#' } }] },
    { $defs: { node: { type: 'object', additionalProperties: { $ref: '#/$defs/node' } } }, $ref: '#/$defs/node' },
    { anyOf: [{ type: 'object', patternProperties: { '^a': { $ref: '#' } } }] },
    { prefixItems: [{ $ref: '#' }], contains: { $ref: '#' }, propertyNames: { $ref: '#' } },
    { $defs: { a: { type: 'string' } }, allOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/a' }] },
    { $ref: 'http://json-schema.org/draft-07/schema#' },
    { examples: [{ $ref: '#' }], const: { not: { $ref: '#' } } },
    true,
    { $ref: '#/$defs/missing' },
  ];
  for (const schema of sound) assert.equal(sameValueRefLoop(schema), null, JSON.stringify(schema));
});

test('a schema nested 50,000 levels deep is walked without overflowing the call stack', () => {
  let schema: unknown = { $ref: '#' };
  for (let i = 0; i < 50_000; i++) schema = { not: schema };
  assert.equal((sameValueRefLoop(schema) ?? []).at(-1), '$ref');
});
