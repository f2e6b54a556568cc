/**
 * Closing the server engine's database leaves no connection open: `Db.close()` (what Tidings' stop ends with) resolves
 * once every connection of its pool has closed, not as soon as `pg.Pool#end()` has asked them to (which it does before
 * their sockets close). A test that drops its database right after a stop, or a process that exits then, finds nothing
 * of it left on the server (test/support/db.ts fails a drop that finds connections still open).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { openDb } from '../../src/adapters/postgres/db.ts';
import { freshServerDatabase, SERVER_ADMIN_URL, type TestDatabase } from '../support/db.ts';

let t: TestDatabase;
let admin: pg.Client;
before(async () => {
  t = await freshServerDatabase({ migrate: false });
  admin = new pg.Client({ connectionString: SERVER_ADMIN_URL });
  await admin.connect();
});
after(async () => {
  await admin?.end();
  await t?.drop();
});

test('close resolves once every connection of the pool has closed', async () => {
  for (let round = 0; round < 5; round++) {
    const name = `tidings-db-close-${round}`;
    const db = await openDb({ databaseUrl: `${t.url!}?application_name=${name}`, dataDir: '', poolSize: 8 });
    // Eight connections at once, each idle in the pool when the close begins.
    await Promise.all(Array.from({ length: 8 }, () => db.query('SELECT pg_sleep(0.05)')));
    await db.close();
    const open = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [
      name,
    ]);
    assert.equal(open.rows[0].n, 0, `round ${round}: connections still open after close`);
  }
});
