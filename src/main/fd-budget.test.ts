import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../config/config.ts';
import { FD_RESERVE, fdBudget, openFileLimit } from './fd-budget.ts';

test('the file-descriptor budget of serve on a server counts the API cap, the dispatcher window, both pools and the reserve', () => {
  const config = loadConfig({});
  const budget = fdBudget(config, { api: true, dispatcher: true }, true);
  assert.deepEqual(budget, { apiConnections: 2048, dispatcherSockets: 1024, databaseConnections: 10 + 4, reserve: FD_RESERVE, total: 2048 + 1024 + 14 + FD_RESERVE });
});

test('a dispatcher-only process counts no API connections and one pool; the embedded engine one connection', () => {
  const config = loadConfig({ TIDINGS_CONCURRENCY: '100' });
  assert.equal(fdBudget(config, { api: false, dispatcher: true }, true).total, 100 + 10 + FD_RESERVE);
  assert.equal(fdBudget(config, { api: true, dispatcher: true }, false).databaseConnections, 1);
});

test('the open-files limit is read on Linux', { skip: process.platform !== 'linux' }, () => {
  const limit = openFileLimit();
  assert.ok(limit === null || (Number.isInteger(limit) && limit > 0), String(limit));
});
