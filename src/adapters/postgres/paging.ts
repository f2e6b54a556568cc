import type { Page, PageQuery } from '../../ports/paging.ts';

/**
 * Keyset pagination shared by the list queries of every aggregate (Svix iterators, see {@link PageQuery}). A page reads
 * `limit + 1` rows ordered by one unique key column, so `done` is known without a count, and the cost of a
 * page does not grow with its position.
 */
export interface Keyset {
  /** SQL condition on the key column (`TRUE` on a first page); uses parameter `$<n>` when it has a key. */
  readonly where: string;
  /** `ORDER BY` clause body. */
  readonly orderBy: string;
  /** Parameters to append: the key (when there is one). */
  readonly params: readonly unknown[];
  /** Rows to fetch (`limit + 1`). */
  readonly fetch: number;
}

/**
 * Builds the keyset clause for `page` on `column`, whose key parameter (if any) will be `$<nextParam>`.
 * A backward page (`-<key>`) reads in the opposite order; {@link toPage} turns it back.
 */
export function keyset(page: PageQuery, column: string, nextParam: number): Keyset {
  const backward = page.iterator?.startsWith('-') ?? false;
  const key = page.iterator === null ? null : backward ? page.iterator.slice(1) : page.iterator;
  const ascending = (page.order === 'ascending') !== backward;
  return {
    where: key === null ? 'TRUE' : `${column} ${ascending ? '>' : '<'} $${nextParam}`,
    orderBy: `${column} ${ascending ? 'ASC' : 'DESC'}`,
    params: key === null ? [] : [key],
    fetch: page.limit + 1,
  };
}

/** Turns the `limit + 1` rows read with {@link keyset} into a {@link Page}. */
export function toPage<R, T>(
  rows: readonly R[],
  page: PageQuery,
  keyOf: (row: R) => string,
  map: (row: R) => T,
): Page<T> {
  const backward = page.iterator?.startsWith('-') ?? false;
  const more = rows.length > page.limit;
  const kept = rows.slice(0, page.limit);
  if (backward) kept.reverse();
  const first = kept[0];
  const last = kept[kept.length - 1];
  const requestKey = page.iterator === null ? null : backward ? page.iterator.slice(1) : page.iterator;
  return {
    data: kept.map(map),
    keys: kept.map(keyOf),
    iterator: last === undefined ? requestKey : keyOf(last),
    prevIterator: first === undefined ? null : `-${keyOf(first)}`,
    done: !more,
  };
}
