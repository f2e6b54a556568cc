import type { Page } from './api.ts';

/** The iterators a pager walked through to reach the page shown (the first page's is null). */
export type Trail = readonly (string | null)[];

/**
 * What the pager shows over `page` (undefined while loading), whose iterator is `at` (null = the first page):
 * Previous is off on the first page (the API gives a `prevIterator` even there), Next is off on the last; no pager
 * while loading or when the first page is the only one.
 */
export function pagerView(
  page: Pick<Page<unknown>, 'done' | 'iterator'> | undefined,
  at: string | null,
  trail: Trail,
): { hidden: boolean; atStart: boolean; atEnd: boolean } {
  const atStart = at === null || trail.length === 0;
  const atEnd = page === undefined || page.done || page.iterator === null;
  return { hidden: page === undefined || (atStart && atEnd), atStart, atEnd };
}

/** Previous: the iterator of the page it came from, and the trail without it. */
export function pageBack(trail: Trail): { iterator: string | null; trail: Trail } {
  return { iterator: trail[trail.length - 1] ?? null, trail: trail.slice(0, -1) };
}

/** Next: the page's next iterator, and the trail with the one shown now. */
export function pageNext(
  trail: Trail,
  at: string | null,
  next: string | null,
): { iterator: string | null; trail: Trail } {
  return { iterator: next, trail: [...trail, at] };
}
