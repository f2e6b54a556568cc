import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBanner } from './start-banner.ts';

test('the start banner names the API, its OpenAPI document and the console', () => {
  assert.deepEqual(startBanner('http://127.0.0.1:8071', null), [
    'Tidings API on http://127.0.0.1:8071  (OpenAPI: http://127.0.0.1:8071/api/v1/openapi.json)',
    'Console on http://127.0.0.1:8071/console  (sign in with the admin token or an operator API key)',
  ]);
});

test('a first start shows its generated admin token once, before the addresses', () => {
  const lines = startBanner('http://127.0.0.1:8071', 'tidings_abc');
  assert.equal(lines.indexOf('  tidings_abc'), 3);
  assert.match(lines[1]!, /shown once, stored only as a hash/);
  assert.match(lines.at(-1)!, /^Console on http:\/\/127\.0\.0\.1:8071\/console /);
});

test('a process without the API (a dispatcher) prints no address', () => {
  assert.deepEqual(startBanner(undefined, null), []);
});
