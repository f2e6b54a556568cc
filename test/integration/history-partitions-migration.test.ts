/**
 * Migration 1764000015000 over an installation that already holds history, on both engines: the old attempts and
 * timeline become the `_legacy` partitions without a row copied, the timeline's ids go on from where they were, a
 * write after it lands in the default partition, Tidings makes its partitions from the legacy range's end, and
 * retention drops the legacy partitions once their range has aged out.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createPgHistoryPartitions } from '../../src/adapters/postgres/delivery/history-partitions.ts';
import { ENGINES } from '../support/db.ts';

const MIGRATIONS = join(import.meta.dirname, '../../migrations');
const PARTITIONED = '1764000015000_history-partitions.sql';
const DAY = 86_400_000;

for (const engine of ENGINES) {
  describe(`history partitions over existing history (${engine.name})`, () => {
    test(
      'the old rows become the legacy partitions, ids go on, ' + 'partitions follow the legacy range, which ages out',
      async () => {
        const t = await engine.fresh({ migrate: false });
        try {
          const q = async <R extends Record<string, unknown>>(sql: string, params: unknown[] = []) =>
            (await t.db.query<R>(sql, params)).rows;
          const apply = async (file: string) => {
            const sql = await readFile(join(MIGRATIONS, file), 'utf8');
            await t.db.tx(async (c) => {
              await c.query(sql);
            });
          };
          for (const file of (await readdir(MIGRATIONS)).sort()) if (file < PARTITIONED) await apply(file);
          const now = Date.now();
          for (const [i, ago] of [2 * DAY, HOUR_MS].entries()) {
            await q(
              `INSERT INTO delivery_events (delivery_id, state, at, app_id, endpoint_id, since_publish_ms)
             VALUES ($1, 'pending', $2, 'app', 'ep', 0)`,
              [i + 1, new Date(now - ago)],
            );
            await q(
              `INSERT INTO attempts (id, delivery_id, app_id, message_id, endpoint_id, attempt_number, trigger,
                succeeded,
                                   url, duration_ms, dispatcher_id, fencing_token, created_at)
             VALUES ($1, $2, 'app', 'msg', 'ep', 1, 'scheduled', true, 'http://127.0.0.1:9/', 5, 'w', 1, $3)`,
              [`atmpt_${i}`, i + 1, new Date(now - ago)],
            );
          }
          const lastId = Number((await q<{ n: string }>('SELECT max(id) AS n FROM delivery_events'))[0]!.n);

          await apply(PARTITIONED);
          const partitions = async (table: string) =>
            (
              await q<{ name: string; bound: string }>(
                `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i
               JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`,
                [table],
              )
            ).map((r) => r.name);
          assert.deepEqual(await partitions('attempts'), ['attempts_default', 'attempts_legacy']);
          assert.deepEqual(await partitions('delivery_events'), ['delivery_events_default', 'delivery_events_legacy']);
          assert.equal((await q('SELECT 1 FROM attempts_legacy')).length, 2, 'the old attempts, where they were');
          assert.equal((await q('SELECT 1 FROM delivery_events_legacy')).length, 2);
          const next = await q<{ id: string; p: string }>(
            `INSERT INTO delivery_events (delivery_id, state, at, app_id, endpoint_id, since_publish_ms)
           VALUES (3, 'pending', $1, 'app', 'ep', 0) RETURNING id, tableoid::regclass::text AS p`,
            [new Date(now + 3 * DAY)],
          );
          assert.equal(Number(next[0]!.id), lastId + 1, 'the timeline ids go on');
          assert.equal(next[0]!.p, 'delivery_events_default', 'past the legacy range, before any partition');

          const history = createPgHistoryPartitions(t.db);
          const made = await history.ensure({ nowMs: now, widthMs: DAY, ahead: 3, lockTimeoutMs: 1000 });
          const cut =
            Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate()) + DAY;
          const suffix = (ms: number) => {
            const iso = new Date(ms).toISOString();
            return `p${iso.slice(0, 10).replaceAll('-', '')}t${iso.slice(11, 19).replaceAll(':', '')}`;
          };
          assert.deepEqual(
            [...made].sort(),
            ['attempts', 'delivery_events']
              .flatMap((tb) => [0, 1, 2].map((k) => `${tb}_${suffix(cut + k * DAY)}`))
              .sort(),
            'the partitions start where the legacy range ends',
          );
          assert.equal(
            (
              await q<{ p: string }>('SELECT tableoid::regclass::text AS p FROM delivery_events WHERE delivery_id = 3')
            )[0]!.p,
            `delivery_events_${suffix(cut + 2 * DAY)}`,
            'the row the default partition held moved into its partition',
          );

          const early = await history.dropAged({ nowMs: now, ageMs: 30 * DAY, lockTimeoutMs: 1000 });
          assert.deepEqual(early.dropped, []);
          const aged = await history.dropAged({ nowMs: cut + 30 * DAY, ageMs: 30 * DAY, lockTimeoutMs: 1000 });
          assert.deepEqual([...aged.dropped].sort(), ['attempts_legacy', 'delivery_events_legacy']);
          assert.equal((await q('SELECT 1 FROM attempts')).length, 0);
        } finally {
          await t.drop();
        }
      },
    );
  });
}

const HOUR_MS = 3_600_000;
