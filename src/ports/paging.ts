import type { Tx } from './unit-of-work.ts';

/** Options of the find methods: run in `tx` (required inside a transaction), and lock the row. */
export interface FindOptions {
  readonly tx?: Tx;
  readonly forUpdate?: boolean;
}

/** Sort order of a list, by id (ids are time-sortable, so this is creation order). */
export type Ordering = 'ascending' | 'descending';

/**
 * Keyset pagination in the Svix style. `iterator` null = first page; an id = the page after that id in
 * `order`; `-` + id = the page before it (a `prevIterator`). `limit` rows at most.
 */
export interface PageQuery {
  readonly limit: number;
  readonly iterator: string | null;
  readonly order: Ordering;
}

/**
 * One page. `iterator` continues after the last row (the request's iterator when the page is empty);
 * `prevIterator` (`-` + first id) goes back; `done` = nothing further in the direction that was read.
 */
export interface Page<T> {
  readonly data: readonly T[];
  /**
   * The iterator key of each item of `data` (its id, name or cursor), when the store gives them: a page cut
   * short after item i continues at `keys[i]` (src/http/page-budget.ts).
   */
  readonly keys?: readonly string[];
  readonly iterator: string | null;
  readonly prevIterator: string | null;
  readonly done: boolean;
}
