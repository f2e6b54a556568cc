/**
 * Opaque handle of an open unit of work, passed from {@link UnitOfWork} (or from the idempotency store's
 * `run`) to the store methods whose writes must commit together. Only the adapter that made it can use it.
 */
export interface Tx {
  readonly __brand: 'Tx';
}

/**
 * The unit of work: how a use case groups its writes. Every store method that writes takes the {@link Tx}
 * of the unit it belongs to; inside a unit, reads must use it too (the embedded engine has one connection,
 * so a read through the pool would wait for the transaction forever).
 */
export interface UnitOfWork {
  /**
   * Runs `work` in one transaction: everything it writes commits together, or nothing does (anything `work`
   * throws rolls back). After-commit hooks run once the transaction has committed.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs `work` without an enclosing transaction: each statement commits on its own, and after-commit hooks
   * run once `work` returns. Only for work whose writes are one statement (publish without an
   * Idempotency-Key: docs/adr/0006-round-trips-and-wake-ups.md), where BEGIN and COMMIT would be two round trips that
   * add nothing.
   */
  autocommit<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}
