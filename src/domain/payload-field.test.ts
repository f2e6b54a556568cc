import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { payloadFieldEquals, payloadPath } from './payload-field.ts';

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const PAYLOAD = bytes(
  '{"customer":{"id":"cus_42","tier":3,"vip":true,"note":null,"big":12345678901234567890123},' +
    '"items":[{"sku":"A-1"},{"sku":"B-2"}],"price":42.0,"name":"caf\\u00e9","dup":"first","dup":"last",' +
    '"nested":{"a":1}}',
);

test('a field path is split at dots; empty, empty-segment, too long and too deep paths are refused', () => {
  assert.deepEqual(payloadPath('customer.id'), ['customer', 'id']);
  assert.deepEqual(payloadPath('items.0.sku'), ['items', '0', 'sku']);
  for (const bad of ['', '.a', 'a.', 'a..b', 'x'.repeat(257), Array.from({ length: 17 }, () => 'a').join('.')]) {
    assert.equal(payloadPath(bad), null, JSON.stringify(bad.slice(0, 20)));
  }
});

test('payload field equality: strings by their text, other scalars by their JSON text as published', () => {
  const table: readonly (readonly [string, string, boolean])[] = [
    ['customer.id', 'cus_42', true],
    ['customer.id', 'cus_4', false],
    ['customer.id', '"cus_42"', false],
    ['customer.tier', '3', true],
    ['customer.tier', '3.0', false],
    ['customer.vip', 'true', true],
    ['customer.note', 'null', true],
    ['customer.big', '12345678901234567890123', true],
    ['price', '42.0', true],
    ['price', '42', false],
    ['name', 'café', true],
    ['items.1.sku', 'B-2', true],
    ['items.2.sku', 'B-2', false],
    ['items.01.sku', 'B-2', false],
    ['dup', 'last', true],
    ['dup', 'first', false],
    ['nested', '{"a":1}', false],
    ['items', '[]', false],
    ['missing', '', false],
    ['customer.id.deeper', 'cus_42', false],
  ];
  for (const [path, value, expected] of table) {
    assert.equal(payloadFieldEquals(PAYLOAD, payloadPath(path)!, value), expected, `${path} = ${value}`);
  }
});

test('a payload that is not strict JSON (a raw body) never matches', () => {
  for (const text of ['id=cus_42', '{"id":"cus_42",}', '{"id":"cus_42"} // note', '']) {
    assert.equal(payloadFieldEquals(bytes(text), ['id'], 'cus_42'), false, text);
  }
});

test('a payload nested 200,000 levels deep is read without recursion: the field beside it matches', () => {
  const deep = '['.repeat(200_000) + '7' + ']'.repeat(200_000);
  const text = bytes(`{"a":${deep},"amount":200,"o":${'{"o":'.repeat(100_000)}1${'}'.repeat(100_000)}}`);
  assert.equal(payloadFieldEquals(text, ['amount'], '200'), true);
  assert.equal(payloadFieldEquals(text, ['a', '0'], '7'), false);
  assert.equal(payloadFieldEquals(text, ['o', 'o', 'o'], '1'), false);
  assert.equal(payloadFieldEquals(bytes(`{"x":{"y":${deep}}}`), ['x', 'y'], '7'), false);
});

test('of a name given twice on the path, the last counts at every level, as JSON.parse reads it', () => {
  const table: readonly (readonly [string, string, boolean])[] = [
    ['{"a":{"b":1},"a":{"c":2}}', 'a.b', false],
    ['{"a":{"b":1},"a":{"b":2}}', 'a.b', false],
    ['{"a":{"b":1},"a":{"b":2}}', 'a.b', true],
    ['{"a":{"b":1},"a":3}', 'a.b', false],
    ['{"a":{"b":1,"b":{}}}', 'a.b', false],
    ['{"a":[0,{"b":"x"}],"z":[{"b":"x"}]}', 'a.1.b', true],
    ['{"a":{"b":-1.5e3}}', 'a.b', true],
  ];
  const values = ['1', '1', '2', '1', '1', 'x', '-1.5e3'];
  table.forEach(([text, path, expected], i) => {
    assert.equal(payloadFieldEquals(bytes(text), payloadPath(path)!, values[i]!), expected, `${text} ${path}`);
  });
});
