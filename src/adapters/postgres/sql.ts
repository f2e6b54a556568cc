import { AppError } from '../../domain/errors.ts';
import type { Tx } from '../../ports/unit-of-work.ts';
import type { QueryResultRow } from 'pg';
import type { FindOptions } from '../../ports/paging.ts';
import type { Db, Prepared, Queryable } from './db.ts';
import { constraintOf, sqlState, SqlState } from './sqlstate.ts';
import { isAutocommit, txClient } from './tx.ts';

/** The client to run a statement on: the open transaction's when `tx` is given, else the pool. */
export function on(db: Db, tx: Tx | undefined): Queryable {
  return tx === undefined ? db : txClient(tx);
}

/**
 * One row by `key`, as `options` ask: outside a transaction (no `tx`, or an autocommit one) and not for update,
 * through `grouped` (one statement for the concurrent calls); otherwise by `statements.one`, or
 * `statements.forUpdate`, on the transaction. Either statement takes `key` as `$1`.
 */
export async function findOne<R extends QueryResultRow, T>(
  db: Db,
  key: string,
  options: FindOptions,
  grouped: (key: string) => Promise<T | null>,
  statements: { readonly one: string | Prepared; readonly forUpdate: string | Prepared },
  toRecord: (row: R) => T,
): Promise<T | null> {
  if (options.forUpdate !== true && (options.tx === undefined || isAutocommit(options.tx))) return grouped(key);
  const res = await on(db, options.tx).query<R>(options.forUpdate === true ? statements.forUpdate : statements.one, [
    key,
  ]);
  return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
}

/** `now` parameter expression: the test clock's instant, or the database clock (docs/design.md#the-protocol). */
export function nowSql(param: number): string {
  return `coalesce($${param}::timestamptz, clock_timestamp())`;
}

/**
 * Runs `statement`, turning a unique violation on one of `constraints` into AppError `conflict` (409) with
 * `detail`. Other errors pass unchanged.
 */
export async function withConflict<T>(
  statement: () => Promise<T>,
  constraints: Readonly<Record<string, string>>,
): Promise<T> {
  try {
    return await statement();
  } catch (error) {
    const detail = sqlState(error) === SqlState.uniqueViolation ? constraints[constraintOf(error) ?? ''] : undefined;
    if (detail !== undefined) throw new AppError('conflict', detail, { cause: error });
    throw error;
  }
}

/** Builds `SET col = $n, …` from the present fields of `changes`; `columns` maps field → column (and cast). */
export function setClause(
  changes: object,
  columns: Readonly<Record<string, string>>,
  firstParam: number,
): { readonly sql: string[]; readonly params: unknown[] } {
  const sql: string[] = [];
  const params: unknown[] = [];
  for (const [field, column] of Object.entries(columns)) {
    const value = (changes as Record<string, unknown>)[field];
    if (value === undefined) continue;
    const [name, cast] = column.split('::');
    params.push(cast === 'jsonb' ? JSON.stringify(value) : value);
    sql.push(`${name} = $${firstParam + params.length - 1}${cast === undefined ? '' : `::${cast}`}`);
  }
  return { sql, params };
}
