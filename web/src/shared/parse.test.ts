import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoOf, listField } from './parse.ts';

test('listField: comma-separated items trimmed, empty ones dropped, null when nothing is left', () => {
  assert.deepEqual(listField('a, b ,c'), ['a', 'b', 'c']);
  assert.deepEqual(listField(' invoice.paid ,, '), ['invoice.paid']);
  assert.equal(listField(''), null);
  assert.equal(listField(' , ,'), null);
});

test('isoOf: a datetime-local value read as UTC; undefined when empty', () => {
  assert.equal(isoOf('2026-03-04T05:06'), '2026-03-04T05:06:00.000Z');
  assert.equal(isoOf('2026-03-04T05:06:07'), '2026-03-04T05:06:07.000Z');
  assert.equal(isoOf(''), undefined);
});
