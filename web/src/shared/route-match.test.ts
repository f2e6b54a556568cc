import assert from 'node:assert/strict';
import { test } from 'node:test';
import { href, match, pick, seg } from './route-match.ts';

test('match: literal and named segments, percent-decoded; the query ignored; a different length is no match', () => {
  assert.deepEqual(match('/apps', '/apps'), {});
  assert.deepEqual(match('/apps/:app/endpoints/:ep', '/apps/app_1/endpoints/ep%2F2'), { app: 'app_1', ep: 'ep/2' });
  assert.deepEqual(match('/apps/:app/messages', '/apps/a/messages?x=1'), { app: 'a' });
  assert.equal(match('/apps/:app', '/apps/a/endpoints'), null);
  assert.equal(match('/apps/:app/endpoints', '/apps/a'), null);
  assert.equal(match('/apps/:app/messages', '/apps/a/endpoints'), null);
  assert.deepEqual(match('/', '/'), {});
  assert.equal(match('/', '/apps'), null);
});

test('match: a last `*` takes one or more segments, never none', () => {
  assert.deepEqual(match('/apps/:app/*', '/apps/a/endpoints'), { app: 'a' });
  assert.deepEqual(match('/apps/:app/*', '/apps/a/messages/m/endpoints/e'), { app: 'a' });
  assert.equal(match('/apps/:app/*', '/apps/a'), null);
  assert.equal(match('/apps/:app/*', '/event-types/a/b'), null);
});

test('pick: the first route that matches, with its parameters; null when none does', () => {
  const routes = [
    { pattern: '/apps/:app/endpoints/:ep', name: 'endpoint' },
    { pattern: '/apps/:app/*', name: 'app' },
    { pattern: '/apps', name: 'apps' },
  ];
  assert.deepEqual(pick(routes, '/apps/a/endpoints/e'), { route: routes[0], params: { app: 'a', ep: 'e' } });
  assert.deepEqual(pick(routes, '/apps/a/messages'), { route: routes[1], params: { app: 'a' } });
  assert.deepEqual(pick(routes, '/apps'), { route: routes[2], params: {} });
  assert.equal(pick(routes, '/nowhere'), null);
});

test('seg and href: a segment percent-encoded round-trips through match', () => {
  const name = 'invoice.paid/v2 #1';
  assert.equal(href(`/event-types/${seg(name)}`), '#/event-types/invoice.paid%2Fv2%20%231');
  assert.deepEqual(match('/event-types/:name', `/event-types/${seg(name)}`), { name });
});
