import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../config/config.ts';
import { FD_RESERVE, fdBudget, openFileLimit } from './fd-budget.ts';

test(
  'the file-descriptor budget of serve on a server counts the API cap, the dispatcher window, the four pools and ' +
    'the reserve',
  () => {
    const config = loadConfig({});
    const budget = fdBudget(config, { api: true, dispatcher: true }, true);
    // Main pool 10, small publishes 2 × TIDINGS_DB_BATCHES_IN_FLIGHT (2), small records 1, dispatcher pool 4.
    assert.deepEqual(budget, {
      apiConnections: 2048,
      dispatcherSockets: 1024,
      databaseConnections: 10 + 4 + 1 + 4,
      reserve: FD_RESERVE,
      total: 2048 + 1024 + 19 + FD_RESERVE,
    });
    assert.equal(
      fdBudget(loadConfig({ TIDINGS_DB_BATCHES_IN_FLIGHT: '5' }), { api: true, dispatcher: false }, true)
        .databaseConnections,
      10 + 10,
    );
  },
);

test(
  'a dispatcher-only process counts no API connections, its pool and its small-statement pool; the embedded ' +
    'engine one connection',
  () => {
    const config = loadConfig({ TIDINGS_CONCURRENCY: '100' });
    assert.equal(fdBudget(config, { api: false, dispatcher: true }, true).total, 100 + 10 + 1 + FD_RESERVE);
    assert.equal(fdBudget(config, { api: true, dispatcher: true }, false).databaseConnections, 1);
  },
);

test('the open-files limit is read on Linux', { skip: process.platform !== 'linux' }, () => {
  const limit = openFileLimit();
  assert.ok(limit === null || (Number.isInteger(limit) && limit > 0), String(limit));
});
