import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bind, joined, namedStatement, NOTHING, params, raw, sql } from './named-sql.ts';

const p = params({ ids: 'bigint[]: ids', now: 'timestamptz: now', limit: 'int: most rows' });
const doc = { purpose: 'Reads rows.', returns: 'id', indexes: 'pkey' };

test('named sql: parameters are numbered by first appearance, a name used twice keeps its number, pieces nest', () => {
  const filter = sql`id = ANY (${p.ids}::bigint[]) AND at <= ${p.now}`;
  const body = sql`SELECT id FROM t WHERE ${filter} AND ${p.ids} IS NOT NULL${NOTHING} LIMIT ${p.limit}`;
  const st = namedStatement('t_read', doc, body);
  assert.equal(st.text, 'SELECT id FROM t WHERE id = ANY ($1::bigint[]) AND at <= $2 AND $1 IS NOT NULL LIMIT $3');
  assert.deepEqual(st.names, ['ids', 'now', 'limit']);
  assert.deepEqual(bind(st, { limit: 5, now: null, ids: ['1'] }), [['1'], null, 5]);
  assert.match(st.header, /^-- +\$2 +now +timestamptz: now$/m);
});

test('named sql: bind refuses a missing parameter and one the statement does not have', () => {
  const st = namedStatement('t_two', doc, sql`SELECT ${p.ids}, ${p.now}`);
  assert.throws(() => bind(st, { ids: [] }), /t_two: parameters missing \[now\]/);
  assert.throws(() => bind(st, { ids: [], now: null, limit: 1 } as never), /not in the statement \[limit\]/);
});

test('named sql: joined pieces and constant text render in order; the header wraps at 120 characters', () => {
  const st = namedStatement(
    't_join',
    { ...doc, purpose: 'word '.repeat(60).trim() },
    sql`WITH ${joined([sql`a AS (SELECT ${p.now})`, sql`b AS (SELECT 1)`], ', ')} SELECT '${raw('chan')}'`,
  );
  assert.equal(st.text, "WITH a AS (SELECT $1), b AS (SELECT 1) SELECT 'chan'");
  assert.ok(st.header.split('\n').every((line) => line.length <= 120));
});
