import { DEFAULT_LEASE_MS, DEFAULT_TTL_MS, positiveMs, retryAfterSeconds, type ReceiptStore } from '../store.ts';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /** How long a handled id is remembered, ms (default 7 days). */
  readonly ttlMs?: number;
  /** How long a claim whose handler never finishes holds the id, ms (default 30 s). */
  readonly leaseMs?: number;
  /** The clock, Unix ms (default `Date.now`). */
  readonly nowMs?: () => number;
}

/** The in-memory store, plus how many ids it holds. */
export interface MemoryStore extends ReceiptStore<undefined> {
  /** Ids held (claimed or done, expired ones not yet swept). */
  size(): number;
}

/**
 * A {@link ReceiptStore} in this process's memory: for tests and single-process receivers that accept losing
 * their memory (and so running a handler again) on restart. Expired entries are swept every 1,000 claims.
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const ttlMs = positiveMs('ttlMs', options.ttlMs ?? DEFAULT_TTL_MS);
  const leaseMs = positiveMs('leaseMs', options.leaseMs ?? DEFAULT_LEASE_MS);
  const nowMs = options.nowMs ?? Date.now;
  const entries = new Map<string, { done: boolean; untilMs: number; token: symbol }>();
  let claims = 0;
  const sweep = (now: number): void => {
    for (const [id, entry] of entries) if (entry.untilMs <= now) entries.delete(id);
  };
  return {
    size: () => entries.size,
    async once(id, work) {
      const now = nowMs();
      if (++claims % 1000 === 0) sweep(now);
      const held = entries.get(id);
      if (held !== undefined && held.untilMs > now) {
        return held.done
          ? { status: 'done' }
          : { status: 'in_progress', retryAfterSeconds: retryAfterSeconds(held.untilMs - now) };
      }
      const token = Symbol(id);
      entries.set(id, { done: false, untilMs: now + leaseMs, token });
      let value;
      try {
        value = await work(undefined);
      } catch (error) {
        if (entries.get(id)?.token === token) entries.delete(id);
        throw error;
      }
      const current = entries.get(id);
      if (current === undefined || current.token === token)
        entries.set(id, { done: true, untilMs: nowMs() + ttlMs, token });
      return { status: 'ran', value };
    },
  };
}
