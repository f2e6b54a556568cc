import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWindowBook } from './window.ts';

test(
  'window 4: share 2, one slot kept for answering endpoints; ' + 'endpoints not known to answer get the rest together',
  () => {
    const book = createWindowBook({ concurrency: 4, claimBatch: 100 });
    const first = book.bounds([], 4);
    assert.deepEqual(
      { limit: first.limit, share: first.window.share, budget: first.window.budget },
      { limit: 4, share: 2, budget: 3 },
    );
    const full = book.bounds(['hole-1', 'hole-1', 'hole-2'], 1);
    assert.deepEqual(full.excludeEndpoints, ['hole-1'], 'an endpoint at its share is skipped');
    assert.equal(full.window.budget, 0, 'three slots held by unproven endpoints: the last is the reserve');
    book.note('ok', true);
    book.note('hole-2', false);
    const listed = book.bounds(['hole-1', 'hole-1', 'hole-2'], 1);
    assert.deepEqual(
      [listed.window.answering, listed.window.unresponsive],
      [['ok'], ['hole-2']],
      'verdicts go with the claim while the budget binds',
    );
  },
);

test(
  'defaults at window 1,024: share 512, reserve 256; the verdict ' + 'lists are left out while the budget cannot bind',
  () => {
    const book = createWindowBook({ concurrency: 1024, claimBatch: 100 });
    book.note('a', true);
    const b = book.bounds(
      Array.from({ length: 500 }, () => 'hole'),
      524,
    );
    assert.deepEqual(
      { share: b.window.share, budget: b.window.budget, limit: b.limit },
      { share: 512, budget: 100, limit: 100 },
    );
    assert.deepEqual(
      b.window.held,
      new Map([['hole', 500]]),
      'the claim is told what the endpoint holds: 12 more at most',
    );
    assert.deepEqual([b.window.answering, b.window.unresponsive], [[], []]);
  },
);

test('a reserve of 0 keeps nothing back; a window of 1 has no reserve', () => {
  assert.equal(createWindowBook({ concurrency: 4, claimBatch: 4, windowReserve: 0 }).bounds([], 4).window.budget, 4);
  assert.equal(createWindowBook({ concurrency: 1, claimBatch: 4 }).bounds([], 1).window.budget, 1);
});

test(
  'claiming ahead: a claim counts over the window and what is claimed ahead; opening a request keeps the share ' +
    'and the reserve of the window',
  () => {
    const book = createWindowBook({ concurrency: 4, claimBatch: 100, claimAheadCount: 2 });
    const b = book.bounds([], 6);
    assert.deepEqual(
      { share: b.window.share, budget: b.window.budget },
      { share: 3, budget: 5 },
      'over 6: share 3, one kept for answering endpoints',
    );
    const open = new Map([
      ['hole-1', 2],
      ['hole-2', 1],
    ]);
    assert.equal(book.mayStart('hole-1', open), false, 'hole-1 is at its share of 2 open requests');
    assert.equal(
      book.mayStart('hole-2', open),
      false,
      'three open for endpoints not known to answer: the last slot is the reserve',
    );
    assert.equal(
      book.mayStart('new', open),
      true,
      'an endpoint with nothing open and no verdict gets its first attempt',
    );
    book.note('ok', true);
    book.note('bad', false);
    assert.equal(book.mayStart('ok', open), true, 'an answering endpoint may take the reserve');
    assert.equal(book.mayStart('bad', open), false, 'an unresponsive endpoint may not, even with nothing open');
    assert.equal(book.mayStart('bad', new Map()), true, 'with the window empty it may');
  },
);
