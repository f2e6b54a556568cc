/** A promise together with the functions that settle it (see {@link deferred}). */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  /** Fulfils `promise` with `value`. Later calls (and calls after `reject`) do nothing. */
  resolve(value: T | PromiseLike<T>): void;
  /** Rejects `promise` with `reason`. Later calls (and calls after `resolve`) do nothing. */
  reject(reason?: unknown): void;
}

/**
 * Makes a promise that the test settles by hand: freeze work mid-flight (hold a claim open, hold a
 * store call, hold a receiver answer) and release it at the exact moment the scenario needs.
 *
 * @example
 * const gate = deferred<void>();
 * store.beforeRecord = () => gate.promise; // the dispatcher now waits here
 * // …advance the clock, let a second dispatcher reclaim…
 * gate.resolve();
 */
export function deferred<T = void>(): Deferred<T> {
  const { promise, resolve, reject } = Promise.withResolvers<T>();
  return { promise, resolve, reject };
}
