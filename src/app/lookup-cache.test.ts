import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLookupCache } from './lookup-cache.ts';

/** A reader that answers from `rows` and counts its reads. */
function reader(rows: Map<string, { readonly v: number }>) {
  const reads: string[] = [];
  return {
    reads,
    read: (key: string) => async () => {
      reads.push(key);
      return rows.get(key) ?? null;
    },
  };
}

test('a cached record is returned without a read; fresh reads and replaces it', async () => {
  const rows = new Map([['a', { v: 1 }]]);
  const r = reader(rows);
  const cache = createLookupCache<{ readonly v: number }>({ maxEntries: 10, keepAbsent: false });
  assert.deepEqual(await cache.get('a', false, r.read('a')), { v: 1 });
  rows.set('a', { v: 2 });
  assert.deepEqual(await cache.get('a', false, r.read('a')), { v: 1 }, 'served from the cache, stale on purpose');
  assert.deepEqual(await cache.get('a', true, r.read('a')), { v: 2 });
  assert.deepEqual(await cache.get('a', false, r.read('a')), { v: 2 });
  assert.deepEqual(r.reads, ['a', 'a']);
});

test('absences are kept only when asked; a fresh read that finds nothing drops the entry', async () => {
  const rows = new Map<string, { readonly v: number }>();
  const keeping = reader(rows);
  const keeps = createLookupCache<{ readonly v: number }>({ maxEntries: 10, keepAbsent: true });
  assert.equal(await keeps.get('x', false, keeping.read('x')), null);
  assert.equal(await keeps.get('x', false, keeping.read('x')), null);
  assert.deepEqual(keeping.reads, ['x']);

  rows.set('y', { v: 1 });
  const dropping = reader(rows);
  const drops = createLookupCache<{ readonly v: number }>({ maxEntries: 10, keepAbsent: false });
  await drops.get('y', false, dropping.read('y'));
  rows.delete('y');
  assert.equal(await drops.get('y', true, dropping.read('y')), null);
  assert.equal(await drops.get('y', false, dropping.read('y')), null);
  assert.deepEqual(dropping.reads, ['y', 'y', 'y'], 'nothing kept after the record went away');
});

test(
  'at most maxEntries keys are kept, the least recently used go first; 0 keeps nothing; a failed read keeps ' +
    'nothing',
  async () => {
    const rows = new Map([
      ['a', { v: 1 }],
      ['b', { v: 2 }],
      ['c', { v: 3 }],
    ]);
    const r = reader(rows);
    const cache = createLookupCache<{ readonly v: number }>({ maxEntries: 2, keepAbsent: false });
    await cache.get('a', false, r.read('a'));
    await cache.get('b', false, r.read('b'));
    await cache.get('a', false, r.read('a'));
    await cache.get('c', false, r.read('c'));
    await cache.get('a', false, r.read('a'));
    await cache.get('b', false, r.read('b'));
    assert.deepEqual(r.reads, ['a', 'b', 'c', 'b'], 'b was the least recently used when c came');

    const none = reader(rows);
    const off = createLookupCache<{ readonly v: number }>({ maxEntries: 0, keepAbsent: true });
    await off.get('a', false, none.read('a'));
    await off.get('a', false, none.read('a'));
    assert.deepEqual(none.reads, ['a', 'a']);

    const failing = createLookupCache<{ readonly v: number }>({ maxEntries: 2, keepAbsent: true });
    await assert.rejects(
      failing.get('a', false, async () => {
        throw new Error('connection lost');
      }),
      /connection lost/,
    );
    assert.deepEqual(await failing.get('a', false, async () => ({ v: 9 })), { v: 9 });
  },
);
