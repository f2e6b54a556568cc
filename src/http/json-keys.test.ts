import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ambiguousKey } from './json-keys.ts';

const check = (text: string) => ambiguousKey(text, JSON.parse(text));

test('a key repeated within one object is found with the path of its object, at any depth, escaped or not', () => {
  assert.deepEqual(check('{"a":1,"a":2}'), { path: [], key: 'a', reason: 'duplicate' });
  assert.deepEqual(check('{"p":{"x":[1,{"k":1,"j":{},"k":2}]}}'), {
    path: ['p', 'x', 1],
    key: 'k',
    reason: 'duplicate',
  });
  assert.deepEqual(check('{"a":1,"\\u0061":2}'), { path: [], key: 'a', reason: 'duplicate' });
  assert.deepEqual(check('[{"a":1},{"b":[],"b":null}]'), { path: [1], key: 'b', reason: 'duplicate' });
});

test('equal keys in different objects, and strings that hold a quote and a colon, are not duplicates', () => {
  assert.equal(check('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}'), null);
  assert.equal(check('{"s":"{\\"a\\":1,\\"a\\":2}","t":"\\":\\":"}'), null);
  assert.equal(check('{"k\\"":1,"k":2}'), null);
  assert.equal(check('[1,"a",true,null]'), null);
  assert.equal(check('"text"'), null);
});

test('a __proto__ key, or a constructor holding a prototype, is found wherever it is', () => {
  assert.deepEqual(check('{"payload":{"x":[{"__proto__":{"admin":true}}]}}'), {
    path: ['payload', 'x', 0],
    key: '__proto__',
    reason: 'prototype',
  });
  assert.deepEqual(check('{"constructor":{"prototype":{"admin":true}}}'), {
    path: [],
    key: 'constructor',
    reason: 'prototype',
  });
  assert.equal(check('{"constructor":"a builder","prototype":1}'), null);
});
