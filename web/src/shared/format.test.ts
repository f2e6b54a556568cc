import assert from 'node:assert/strict';
import { test } from 'node:test';
import { millis, pretty, relative, wholeDuration, windowName } from './format.ts';

test('millis: ms under a second, seconds with one decimal under two minutes, minutes beyond, a dash for null', () => {
  assert.equal(millis(null), '—');
  assert.equal(millis(0), '0 ms');
  assert.equal(millis(849.6), '850 ms');
  assert.equal(millis(999.4), '999 ms');
  assert.equal(millis(1000), '1.0 s');
  assert.equal(millis(119_999), '120.0 s');
  assert.equal(millis(120_000), '2.0 min');
  assert.equal(millis(5_430_000), '90.5 min');
});

test('relative: the largest whole unit, past and future, seconds for anything under a minute', () => {
  const now = Date.parse('2026-01-02T03:04:05.000Z');
  assert.equal(relative('2026-01-02T03:04:05.000Z', now), 'now');
  assert.equal(relative('2026-01-02T03:04:00.000Z', now), '5 seconds ago');
  assert.equal(relative('2026-01-02T03:07:05.000Z', now), 'in 3 minutes');
  assert.equal(relative('2026-01-02T01:04:05.000Z', now), '2 hours ago');
  assert.equal(relative('2026-01-01T03:04:05.000Z', now), 'yesterday');
  assert.equal(relative('2026-01-09T03:04:05.000Z', now), 'in 7 days');
});

test('wholeDuration: the largest unit that writes the value whole', () => {
  assert.equal(wholeDuration(86_400_000), '1 d');
  assert.equal(wholeDuration(1_800_000), '30 min');
  assert.equal(wholeDuration(7_200_000), '2 h');
  assert.equal(wholeDuration(5000), '5 s');
  assert.equal(wholeDuration(50), '50 ms');
  assert.equal(wholeDuration(1500), '1.5 s');
  assert.equal(wholeDuration(90_500), '90.5 s');
});

test('windowName: minutes under an hour, hours from one', () => {
  assert.equal(windowName(900), '15 min');
  assert.equal(windowName(3600), '1 h');
  assert.equal(windowName(86_400), '24 h');
});

test('pretty: JSON indented by two spaces, other text as given', () => {
  assert.equal(pretty('{"a":[1,{"b":null}]}'), '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ]\n}');
  assert.equal(pretty('not json {'), 'not json {');
  assert.equal(pretty(''), '');
});
