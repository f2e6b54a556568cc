import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progress } from './task-progress.ts';

test('progress: the known counters in order, words from their names, the error last; a dash when none', () => {
  assert.equal(progress({ data: { scanned: 10, messagesSent: 3 } }), 'messages sent: 3 · scanned: 10');
  assert.equal(
    progress({ data: { expunged: 2, alreadyQueued: 1, unavailable: 0, error: 'database down' } }),
    'already queued: 1 · unavailable: 0 · expunged: 2 · error: database down',
  );
  assert.equal(progress({ data: { scanned: '10', other: 4 } }), '—');
  assert.equal(progress({ data: {} }), '—');
});
