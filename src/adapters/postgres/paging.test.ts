import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PageQuery } from '../../ports/paging.ts';
import { keyset, toPage } from './paging.ts';

test('keyset: a first page has no key; forward pages continue after the key in the order asked', () => {
  assert.deepEqual(keyset({ limit: 5, iterator: null, order: 'ascending' }, 'id', 3), {
    where: 'TRUE',
    orderBy: 'id ASC',
    params: [],
    fetch: 6,
  });
  assert.deepEqual(keyset({ limit: 5, iterator: 'app_B', order: 'ascending' }, 'id', 3), {
    where: 'id > $3',
    orderBy: 'id ASC',
    params: ['app_B'],
    fetch: 6,
  });
  assert.deepEqual(keyset({ limit: 5, iterator: 'app_B', order: 'descending' }, 'a.id', 2), {
    where: 'a.id < $2',
    orderBy: 'a.id DESC',
    params: ['app_B'],
    fetch: 6,
  });
});

test('keyset: a backward page (-key) reads the other way', () => {
  assert.deepEqual(keyset({ limit: 5, iterator: '-app_B', order: 'ascending' }, 'id', 3), {
    where: 'id < $3',
    orderBy: 'id DESC',
    params: ['app_B'],
    fetch: 6,
  });
  assert.deepEqual(keyset({ limit: 5, iterator: '-app_B', order: 'descending' }, 'id', 3), {
    where: 'id > $3',
    orderBy: 'id ASC',
    params: ['app_B'],
    fetch: 6,
  });
});

test(
  'toPage: limit + 1 rows mean more; iterators name the last and ' + "(with -) the first row; each row's key is kept",
  () => {
    const q: PageQuery = { limit: 2, iterator: null, order: 'ascending' };
    assert.deepEqual(
      toPage(
        ['a', 'b', 'c'],
        q,
        (r) => r,
        (r) => r,
      ),
      { data: ['a', 'b'], keys: ['a', 'b'], iterator: 'b', prevIterator: '-a', done: false },
    );
    assert.deepEqual(
      toPage(
        ['a'],
        q,
        (r) => r,
        (r) => r,
      ),
      { data: ['a'], keys: ['a'], iterator: 'a', prevIterator: '-a', done: true },
    );
    assert.deepEqual(
      toPage(
        [],
        { ...q, iterator: 'z' },
        (r: string) => r,
        (r) => r,
      ),
      { data: [], keys: [], iterator: 'z', prevIterator: null, done: true },
    );
  },
);

test('toPage: a backward page is returned in the order asked', () => {
  // Rows read DESC before key "d" for an ascending list: c, b, a → shown a.., limited to 2: c, b → b, c.
  assert.deepEqual(
    toPage(
      ['c', 'b', 'a'],
      { limit: 2, iterator: '-d', order: 'ascending' },
      (r) => r,
      (r) => r,
    ),
    { data: ['b', 'c'], keys: ['b', 'c'], iterator: 'c', prevIterator: '-b', done: false },
  );
});
