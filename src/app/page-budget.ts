import type { Page } from '../ports/paging.ts';

/** Bytes of the list answer around its items: `{"data":[`, the commas, `],"iterator":…}`. */
const ENVELOPE_BYTES = 256;

/**
 * The longest run of a page's items whose answer fits `budgetBytes` (TIDINGS_MAX_PAGE_BYTES), and the page
 * it makes. `sizes[i]` is the size of item i as it will be sent. A forward page keeps its first items and
 * continues after the last one kept; a page read backward (an iterator `-…`) keeps its last items — the ones
 * next to where it was asked from — and goes further back from the first one kept. A page cut short is
 * never `done`. One item is always kept, so a page always moves on (an item is bounded by its own limits:
 * the body size it was written with). A page without `keys` is returned whole.
 */
export function fitPage<T>(page: Page<T>, sizes: readonly number[], budgetBytes: number, backward: boolean): Page<T> {
  const keys = page.keys;
  if (keys === undefined || page.data.length <= 1) return page;
  const n = page.data.length;
  let total = ENVELOPE_BYTES;
  let kept = 0;
  for (; kept < n; kept++) {
    const size = (sizes[backward ? n - 1 - kept : kept] ?? 0) + 1;
    if (kept > 0 && total + size > budgetBytes) break;
    total += size;
  }
  if (kept === n) return page;
  if (!backward) {
    const iterator = keys[kept - 1] ?? page.iterator;
    return {
      data: page.data.slice(0, kept),
      keys: keys.slice(0, kept),
      iterator,
      prevIterator: page.prevIterator,
      done: false,
    };
  }
  const first = n - kept;
  const prevIterator = `-${keys[first]}`;
  return { data: page.data.slice(first), keys: keys.slice(first), iterator: page.iterator, prevIterator, done: false };
}

/** Whether a list request reads backward: its iterator is a `prevIterator` (`-` + key). */
export const readsBackward = (iterator: string | null | undefined): boolean => iterator?.startsWith('-') ?? false;

/** The payloads a store reads within a byte budget (MessageQueryStore.readPayloads). */
export type ReadPayloads = (
  ids: readonly string[],
  budgetBytes: number,
) => Promise<readonly { readonly id: string; readonly payload: Uint8Array | null }[]>;

/**
 * A page of message heads (read without payloads) with the payloads read within `budgetBytes`, from the end
 * the page was read from: the page ends before the first message whose payload was not read, with an
 * iterator to it ({@link fitPage}). `attach` puts a payload on an item.
 */
export async function withPayloadsWithin<T>(
  page: Page<T>,
  idOf: (item: T) => string,
  attach: (item: T, payload: Uint8Array | null) => T,
  read: ReadPayloads,
  budgetBytes: number,
  backward: boolean,
): Promise<Page<T>> {
  if (page.data.length === 0) return page;
  const ids = page.data.map(idOf);
  const read_ = await read(backward ? [...ids].reverse() : ids, budgetBytes);
  const payloads = new Map(read_.map((r) => [r.id, r.payload]));
  // Items whose payload was read count nothing; the first one not read counts past the budget: the cut.
  const sizes = ids.map((id) => (payloads.has(id) ? 0 : budgetBytes + 1));
  const fitted = fitPage(page, sizes, budgetBytes + 1024, backward);
  return { ...fitted, data: fitted.data.map((item) => attach(item, payloads.get(idOf(item)) ?? null)) };
}
