import { AppError } from '../../domain/errors.ts';
import type { Tx } from '../../ports/unit-of-work.ts';
import type { Db, Queryable } from './db.ts';
import { constraintOf, sqlState, SqlState } from './sqlstate.ts';
import { txClient } from './tx.ts';

/** The client to run a statement on: the open transaction's when `tx` is given, else the pool. */
export function on(db: Db, tx: Tx | undefined): Queryable {
  return tx === undefined ? db : txClient(tx);
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
