import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { tooDeepPath } from './json-depth.ts';

test('the first object or array past the limit, with its path; the root container is level 1', () => {
  assert.equal(tooDeepPath({ a: [1, { b: 2 }] }, 3), null);
  assert.deepEqual(tooDeepPath({ a: [1, { b: 2 }] }, 2), ['a', 1]);
  assert.deepEqual(tooDeepPath({ x: 1, a: { b: {} }, c: [[[]]] }, 2), ['a', 'b']);
  assert.equal(tooDeepPath('text', 1), null);
  assert.equal(tooDeepPath([], 1), null);
  assert.deepEqual(tooDeepPath([[]], 1), [0]);
});

test('a value nested 500,000 levels deep is measured without recursion', () => {
  const n = 500_000;
  const value: unknown = JSON.parse(`{"p":${'['.repeat(n)}${']'.repeat(n)}}`);
  const path = tooDeepPath(value, 128)!;
  assert.deepEqual([path.length, path[0], path.at(-1)], [128, 'p', 0]);
  assert.equal(tooDeepPath(value, n + 1), null);
});
