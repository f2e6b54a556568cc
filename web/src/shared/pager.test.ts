import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageBack, pageNext, pagerView } from './pager.ts';

test('pagerView: hidden while loading and when the first page is the only one; Previous off on the first page', () => {
  assert.deepEqual(pagerView(undefined, null, []), { hidden: true, atStart: true, atEnd: true });
  assert.deepEqual(pagerView({ done: true, iterator: 'it_1' }, null, []), { hidden: true, atStart: true, atEnd: true });
  assert.deepEqual(pagerView({ done: false, iterator: 'it_1' }, null, []), {
    hidden: false,
    atStart: true,
    atEnd: false,
  });
  // A page reached by address (an iterator but no trail) has nowhere to go back to.
  assert.deepEqual(pagerView({ done: false, iterator: 'it_2' }, 'it_1', []).atStart, true);
  assert.deepEqual(pagerView({ done: false, iterator: null }, 'it_1', [null]), {
    hidden: false,
    atStart: false,
    atEnd: true,
  });
});

test('pageNext and pageBack walk forward and return to the page each came from', () => {
  const second = pageNext([], null, 'it_1');
  assert.deepEqual(second, { iterator: 'it_1', trail: [null] });
  const third = pageNext(second.trail, second.iterator, 'it_2');
  assert.deepEqual(third, { iterator: 'it_2', trail: [null, 'it_1'] });
  assert.deepEqual(pageBack(third.trail), { iterator: 'it_1', trail: [null] });
  assert.deepEqual(pageBack([null]), { iterator: null, trail: [] });
  assert.deepEqual(pageBack([]), { iterator: null, trail: [] });
});
