import { LRUCache } from 'lru-cache';

/**
 * A bounded cache of records that publishes look up (applications by reference, event types by name), in
 * front of the store that reads them. What it returns may be stale: the caller passes what it relied on to the
 * publish statement, which stores nothing when it no longer holds, and the caller then reads again with
 * `fresh` (docs/adr/0006-round-trips-and-wake-ups.md, "Publish lookups are cached and confirmed").
 */
export interface LookupCache<T> {
  /**
   * The record under `key`: the cached one, unless `fresh` or there is none; otherwise `read()`'s result,
   * which is kept for later calls (a null result only when the cache keeps absences).
   * @throws what `read` throws (nothing is kept then)
   */
  get(key: string, fresh: boolean, read: () => Promise<T | null>): Promise<T | null>;
}

/** Options of {@link createLookupCache}. */
export interface LookupCacheOptions {
  /** Most keys kept; the least recently used go first (TIDINGS_PUBLISH_LOOKUP_CACHE). 0 = nothing is kept. */
  readonly maxEntries: number;
  /** Whether a null result is kept too (an event type that is not registered), or read again every time. */
  readonly keepAbsent: boolean;
}

/** Makes a {@link LookupCache} (lru-cache underneath). */
export function createLookupCache<T>(options: LookupCacheOptions): LookupCache<T> {
  if (options.maxEntries === 0) return { get: (_key, _fresh, read) => read() };
  // lru-cache keeps objects, not null: each record travels in a box.
  const entries = new LRUCache<string, { readonly record: T | null }>({ max: options.maxEntries });
  return {
    async get(key, fresh, read) {
      if (!fresh) {
        const hit = entries.get(key);
        if (hit !== undefined) return hit.record;
      }
      const record = await read();
      if (record !== null || options.keepAbsent) entries.set(key, { record });
      else entries.delete(key);
      return record;
    },
  };
}
