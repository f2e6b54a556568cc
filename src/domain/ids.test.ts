import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { decodeTime } from 'ulid';
import { mulberry32 } from '../../test/support/random.ts';
import { hasPrefix, IdPrefix, newId } from './ids.ts';

const AT_MS = Date.UTC(2026, 0, 1);
const CROCKFORD_BASE32 = /^[0-9A-HJKMNP-TV-Z]{26}$/;

test('each entity has its own prefix', () => {
  assert.deepEqual(
    { ...IdPrefix },
    { application: 'app', endpoint: 'ep', message: 'msg', attempt: 'atmpt', apiKey: 'key', task: 'qtask' },
  );
  assert.ok(Object.isFrozen(IdPrefix));
  assert.equal(new Set(Object.values(IdPrefix)).size, Object.values(IdPrefix).length, 'prefixes are distinct');
});

test('an id is <prefix>_ followed by a 26-character ULID in Crockford base32', () => {
  const random = mulberry32(1);
  for (const prefix of Object.values(IdPrefix)) {
    const id = newId(prefix, AT_MS, random);
    assert.ok(id.startsWith(`${prefix}_`), id);
    assert.equal(id.length, prefix.length + 1 + 26, id);
    assert.match(id.slice(prefix.length + 1), CROCKFORD_BASE32, id);
    assert.ok(hasPrefix(id, prefix), id);
  }
});

test('the ULID part encodes the creation instant in ms', () => {
  const random = mulberry32(2);
  for (const atMs of [1, AT_MS, AT_MS + 1, 2 ** 40, 2 ** 48 - 1]) {
    const id = newId('msg', atMs, random);
    assert.equal(decodeTime(id.slice('msg_'.length)), atMs, id);
  }
});

test('ids sort by creation time (string order = time order, one ms apart or more)', () => {
  const random = mulberry32(3);
  const instants = [AT_MS, AT_MS + 1, AT_MS + 2, AT_MS + 1_000, AT_MS + 86_400_000, AT_MS + 365 * 86_400_000];
  const ids = instants.map((atMs) => newId('msg', atMs, random));
  assert.deepEqual([...ids].sort(), ids);
  // Drawn in reverse time order, they still sort by time.
  const reversed = [...instants].reverse().map((atMs) => newId('ep', atMs, random));
  assert.deepEqual([...reversed].sort(), [...reversed].reverse());
});

test('the random part comes from the source passed in: same time and seed, same id; another seed, another id', () => {
  assert.equal(newId('app', AT_MS, mulberry32(5)), newId('app', AT_MS, mulberry32(5)));
  assert.notEqual(newId('app', AT_MS, mulberry32(5)), newId('app', AT_MS, mulberry32(6)));
  const random = mulberry32(7);
  const many = new Set(Array.from({ length: 1_000 }, () => newId('atmpt', AT_MS, random)));
  assert.equal(many.size, 1_000, 'no collision within one ms');
});

test('hasPrefix tells generated ids from caller-chosen uids and from other entities', () => {
  const id = newId('app', AT_MS, mulberry32(8));
  assert.equal(hasPrefix(id, 'app'), true);
  assert.equal(hasPrefix(id, 'ep'), false, 'another prefix');
  assert.equal(hasPrefix(newId('ep', AT_MS, mulberry32(8)), 'app'), false);
  assert.equal(hasPrefix('app_my-own-uid', 'app'), false, 'a uid that merely starts with app_');
  assert.equal(hasPrefix(`${id}x`, 'app'), false, 'too long');
  assert.equal(hasPrefix(id.slice(0, -1), 'app'), false, 'too short');
  assert.equal(hasPrefix(id.slice('app_'.length), 'app'), false, 'no prefix');
  assert.equal(hasPrefix(`apps${id.slice(3)}`, 'app'), false, 'prefix without its underscore');
});

// Regression test for a bug in newId, named after it: the ulid package treats a falsy or NaN seed time as
// "no seed" and reads Date.now() instead (`!seedTime || isNaN(seedTime) ? Date.now() : seedTime`). So
// newId(prefix, 0, random) encodes the wall clock, not the instant passed in (domain code must not read
// the clock: a ManualClock set to 0 gives ids that change from run to run), and newId(prefix, NaN, random)
// returns a wall-clock id instead of failing.
test('BUG newId reads the wall clock when the instant is 0 or NaN', () => {
  assert.equal(decodeTime(newId('msg', 0, mulberry32(9)).slice('msg_'.length)), 0, 'instant 0 must be encoded as 0');
  assert.throws(() => newId('msg', Number.NaN, mulberry32(9)), 'an instant that is not a number must be refused');
});
