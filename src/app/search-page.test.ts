import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { PageQuery } from '../ports/paging.ts';
import type { Scanned } from '../ports/search-store.ts';
import { scanStart, searchPage, type Examine } from './search-page.ts';

const page = (limit: number, iterator: string | null = null, order: PageQuery['order'] = 'descending'): PageQuery => ({
  limit,
  iterator,
  order,
});
const scanned = (keys: readonly string[], stoppedAt: string | null = null): Scanned<string> => ({
  items: keys.map((key) => ({ key, value: `v${key}` })),
  stoppedAt,
});

test('a request scans in its order from its iterator; a prevIterator scans the other way from its key', () => {
  assert.deepEqual(scanStart(page(5)), { order: 'descending', after: null, backward: false });
  assert.deepEqual(scanStart(page(5, 'k7', 'ascending')), { order: 'ascending', after: 'k7', backward: false });
  assert.deepEqual(scanStart(page(5, '-k7')), { order: 'ascending', after: 'k7', backward: true });
  assert.deepEqual(scanStart(page(5, '-k7', 'ascending')), { order: 'descending', after: 'k7', backward: true });
});

test('a full page continues after its last item; a scan that reached its range end is done', async () => {
  const full = await searchPage(scanned(['9', '8', '7']), page(2), scanStart(page(2)), null);
  assert.deepEqual([full.data, full.iterator, full.prevIterator, full.done], [['v9', 'v8'], '8', '-9', false]);
  const end = await searchPage(scanned(['9', '8']), page(2), scanStart(page(2)), null);
  assert.deepEqual([end.data, end.iterator, end.done], [['v9', 'v8'], '8', true]);
  const empty = await searchPage(scanned([]), page(2, '5'), scanStart(page(2, '5')), null);
  const emptyShape = [empty.data, empty.iterator, empty.prevIterator, empty.done];
  assert.deepEqual(emptyShape, [[], '5', null, true], 'an empty last page keeps the iterator');
});

test('a scan stopped by its budget gives a short (even empty) page that resumes where the scan stopped', async () => {
  const short = await searchPage(scanned(['9'], '4'), page(5), scanStart(page(5)), null);
  assert.deepEqual([short.data, short.iterator, short.done], [['v9'], '4', false]);
  const none = await searchPage(scanned([], '4'), page(5), scanStart(page(5)), null);
  assert.deepEqual([none.data, none.iterator, none.done], [[], '4', false]);
});

test('the payload filter keeps its matches and, stopped early, resumes after the last item it examined', async () => {
  const evenOnly: Examine<string> = async (items) => {
    const examined = Math.min(items.length, 3);
    return { examined, matches: items.slice(0, examined).map((i) => Number(i.key) % 2 === 0) };
  };
  const stopped = await searchPage(scanned(['9', '8', '7', '6', '5']), page(5), scanStart(page(5)), evenOnly);
  assert.deepEqual([stopped.data, stopped.iterator, stopped.done], [['v8'], '7', false]);
  const nothingExamined: Examine<string> = async () => ({ examined: 0, matches: [] });
  const moves = await searchPage(scanned(['9', '8']), page(5), scanStart(page(5)), nothingExamined);
  assert.deepEqual([moves.data, moves.iterator, moves.done], [[], '9', false], 'a page moves on by one item at least');
});

test('a backward page shows its items in the list order, with prevIterator to go further back', async () => {
  const start = scanStart(page(2, '-5'));
  const back = await searchPage(scanned(['6', '7', '8']), page(2, '-5'), start, null);
  assert.deepEqual([back.data, back.iterator, back.prevIterator, back.done], [['v7', 'v6'], '6', '-7', false]);
  const first = await searchPage(scanned(['6']), page(2, '-5'), start, null);
  assert.deepEqual([first.data, first.prevIterator, first.done], [['v6'], '-6', true]);
});
