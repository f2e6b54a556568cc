import type { Ordering, Page, PageQuery } from '../ports/paging.ts';
import type { Scanned } from '../ports/search-store.ts';

/**
 * A page of a search (docs/reference/api.md, "Search") from one bounded scan. A scan may stop before it fills the
 * page (its scan budget, or a payload budget, ran out): the page then holds what was found — possibly nothing —
 * with `done: false` and an iterator that resumes exactly where the scan stopped, so a client that follows
 * iterators until `done` reads the whole window, each request at a bounded cost.
 */

/** Where a list request starts: the order to scan in, the key to resume after, and whether it reads backward. */
export interface ScanStart {
  readonly order: Ordering;
  readonly after: string | null;
  readonly backward: boolean;
}

/** The scan a page request makes: an iterator `-key` (a `prevIterator`) reads backward from `key`. */
export function scanStart(page: PageQuery): ScanStart {
  const backward = page.iterator?.startsWith('-') ?? false;
  const after = page.iterator === null ? null : backward ? page.iterator.slice(1) : page.iterator;
  const flipped: Ordering = page.order === 'ascending' ? 'descending' : 'ascending';
  const order = backward ? flipped : page.order;
  return { order, after, backward };
}

/**
 * A second look at the items a scan matched (the payload filter): how many of the first items it examined (a
 * prefix; at least one when there are any, so a page always moves on), and for each examined one whether it
 * matches.
 */
export type Examine<T> = (
  items: readonly { readonly key: string; readonly value: T }[],
) => Promise<{ readonly examined: number; readonly matches: readonly boolean[] }>;

/**
 * The page of `scanned` for `page`: at most `page.limit` items; `examine`, when given, keeps the items it
 * matches. The page continues after its last item when it is full, after the last item examined when `examine`
 * stopped early, after the scan's stop when the scan stopped early, and is done otherwise.
 */
export async function searchPage<T>(
  scanned: Scanned<T>,
  page: PageQuery,
  start: ScanStart,
  examine: Examine<T> | null,
): Promise<Page<T>> {
  const items = scanned.items;
  const look = examine === null ? { examined: items.length, matches: items.map(() => true) } : await examine(items);
  const examined = items.length > 0 ? Math.max(1, Math.min(look.examined, items.length)) : 0;
  const kept: (typeof items)[number][] = [];
  let next: string | null = null;
  let full = false;
  for (let i = 0; i < examined; i++) {
    if (look.matches[i] !== true) continue;
    if (kept.length === page.limit) {
      full = true;
      break;
    }
    kept.push(items[i]!);
  }
  if (full) next = kept[kept.length - 1]!.key;
  else if (examined < items.length) next = items[examined - 1]!.key;
  else next = scanned.stoppedAt;

  const shown = start.backward ? [...kept].reverse() : kept;
  const keys = shown.map((item) => item.key);
  const first = keys[0];
  const last = keys[keys.length - 1];
  if (!start.backward) {
    return {
      data: shown.map((i) => i.value),
      keys,
      iterator: next ?? last ?? start.after,
      prevIterator: first === undefined ? null : `-${first}`,
      done: next === null,
    };
  }
  return {
    data: shown.map((i) => i.value),
    keys,
    iterator: last ?? start.after,
    prevIterator: next !== null ? `-${next}` : first === undefined ? null : `-${first}`,
    done: next === null,
  };
}
