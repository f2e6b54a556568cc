import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorOf } from './endpoint-health.ts';

test('the health history names who acted: the operator, a portal token or an API key of the application', () => {
  assert.equal(actorOf({ kind: 'admin' }), 'the operator');
  assert.equal(actorOf({ kind: 'admin', operatorKey: true }), 'the operator');
  assert.equal(actorOf({ kind: 'app', appId: 'app_1', portal: true }), 'a portal token of the application');
  assert.equal(
    actorOf({ kind: 'app', appId: 'app_1', portal: true, capabilities: ['ManageEndpoint'] }),
    'a portal token of the application',
  );
  assert.equal(actorOf({ kind: 'app', appId: 'app_1' }), 'an API key of the application');
});
