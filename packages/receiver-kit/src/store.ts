/**
 * What a receipt store answers for one `webhook-id`:
 * - `ran`: this call claimed the id and `work` completed (in the PostgreSQL store: committed with the claim);
 * - `done`: a call before this one completed the work for this id (it is not run again);
 * - `in_progress`: another call holds the id and has not finished; ask the sender to retry after the time given.
 */
export type ReceiptOutcome<T> =
  | { readonly status: 'ran'; readonly value: T }
  | { readonly status: 'done' }
  | { readonly status: 'in_progress'; readonly retryAfterSeconds: number };

/**
 * Deduplication of webhook deliveries by their `webhook-id`. `once(id, work)` runs `work` only if no earlier call
 * for `id` completed it and none is running it now:
 * - when `work` throws, the claim is given up (rolled back or released) and the error propagates, so the
 *   sender's retry runs `work` again;
 * - when the process dies inside `work`, the id is claimable again once the claim's lease ends (PostgreSQL:
 *   at once, with the connection's transaction; Redis and memory: after `leaseMs`);
 * - a completed id is remembered for the store's `ttlMs`: keep it longer than the sender retries and replays.
 *
 * `Tx` is what `work` is handed: the PostgreSQL store's transaction client (a side effect written through it
 * commits together with the claim), nothing for the others.
 */
export interface ReceiptStore<Tx> {
  once<T>(id: string, work: (tx: Tx) => Promise<T>): Promise<ReceiptOutcome<T>>;
}

/**
 * Default of every store's `ttlMs`: 7 days, past Tidings' default retry schedule (about 28 hours),
 * with room for replays.
 */
export const DEFAULT_TTL_MS = 7 * 24 * 3600 * 1000;

/** Default of the Redis and memory stores' `leaseMs`: how long a claim outlives a crashed handler. */
export const DEFAULT_LEASE_MS = 30_000;

/** Whole seconds, at least 1, for a `Retry-After` from a duration in ms. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Checks a positive whole duration option. @throws RangeError naming the option */
export function positiveMs(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a whole number of ms, at least 1, got ${value}`);
  return value;
}
