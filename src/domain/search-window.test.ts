import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { mulberry32 } from '../../test/support/random.ts';
import { AppError, type ValidationIssue } from './errors.ts';
import { newId } from './ids.ts';
import { durationText, idRange, searchWindow } from './search-window.ts';

const NOW = new Date(Date.UTC(2026, 2, 10, 12));
const LIMITS = { maxWindowMs: 7 * 86_400_000, maxWindowText: 'TIDINGS_SEARCH_MAX_WINDOW (7d)' };
const HOUR = 3_600_000;

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

test('a window: after is required, before defaults to now, and the width is at most the limit', () => {
  const after = new Date(NOW.valueOf() - HOUR);
  const justAfterNow = new Date(NOW.valueOf() + 1);
  assert.deepEqual(searchWindow(after, null, NOW, LIMITS), { after, before: justAfterNow }, 'now is in the window');
  const week = new Date(NOW.valueOf() - 7 * 86_400_000);
  assert.deepEqual(searchWindow(week, NOW, NOW, LIMITS), { after: week, before: NOW }, 'exactly the limit is accepted');

  const none = refusal(() => searchWindow(null, NOW, NOW, LIMITS));
  assert.equal(none.code, 'search_unbounded');
  assert.deepEqual((none.detail as readonly ValidationIssue[])[0]!.loc, ['query', 'after']);

  const wide = refusal(() => searchWindow(new Date(week.valueOf() - 1), NOW, NOW, LIMITS));
  assert.equal(wide.code, 'search_unbounded');
  assert.match((wide.detail as readonly ValidationIssue[])[0]!.msg, /wider than TIDINGS_SEARCH_MAX_WINDOW \(7d\)/);

  const reversed = refusal(() => searchWindow(NOW, after, NOW, LIMITS));
  assert.equal(reversed.code, 'validation');
  assert.deepEqual((reversed.detail as readonly ValidationIssue[])[0]!.loc, ['query', 'before']);
  assert.equal(refusal(() => searchWindow(NOW, NOW, NOW, LIMITS)).code, 'validation', 'an empty window is refused');
});

test('the id range of a window holds exactly the ids made strictly inside it (ms precision)', () => {
  const random = mulberry32(7);
  const after = new Date(NOW.valueOf() - HOUR);
  const range = idRange('msg', { after, before: NOW });
  const inside = (id: string) => id > range.above && id < range.below;
  for (let i = 0; i < 200; i++) {
    assert.equal(inside(newId('msg', after.valueOf(), random)), false, 'the after millisecond is outside');
    assert.equal(inside(newId('msg', after.valueOf() + 1, random)), true);
    assert.equal(inside(newId('msg', NOW.valueOf() - 1, random)), true);
    assert.equal(inside(newId('msg', NOW.valueOf(), random)), false, 'the before millisecond is outside');
  }
  assert.ok(range.above.startsWith('msg_') && range.below.startsWith('msg_'));
  assert.ok(idRange('atmpt', { after, before: NOW }).above.startsWith('atmpt_'));
});

test('instants before 1970 or past what a ULID encodes are clamped, never thrown', () => {
  const range = idRange('msg', { after: new Date(-86_400_000), before: new Date(8.64e15) });
  assert.ok(range.above < range.below);
});

test('durations read as a person writes them', () => {
  assert.equal(durationText(7 * 86_400_000), '7d');
  assert.equal(durationText(2 * HOUR), '2h');
  assert.equal(durationText(90_000), '1.5m');
  assert.equal(durationText(8 * 86_400_000 + 1), '8d');
  assert.equal(durationText(1500), '1.5s');
  assert.equal(durationText(20), '20ms');
});
