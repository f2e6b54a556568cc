/**
 * Opaque handle of an open transaction, passed from {@link IdempotencyStore.run} to store methods that
 * must commit together with the stored answer. Only the adapter that made it can use it.
 */
export interface Tx {
  readonly __brand: 'Tx';
}

/** Scope and fingerprint of one idempotent request (docs/design.md#publishing). Durations in ms. */
export interface IdempotencyScope {
  /** The credential's owner (admin, or the application a scoped key belongs to). */
  readonly owner: string;
  /** Route template and method, e.g. `POST /api/v1/app/:appId/msg`. */
  readonly route: string;
  /** The Idempotency-Key header value. */
  readonly key: string;
  /** Hash of the request (method, path, body) that the key must keep matching. */
  readonly fingerprint: string;
  readonly ttlMs: number;
  /** How long to wait for a concurrent first request holding the key before `idempotency_key_in_flight`. */
  readonly waitMs: number;
}

/** The answer stored for a key: HTTP status and JSON body. */
export interface StoredAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Idempotency keys kept in PostgreSQL with a unique constraint (docs/design.md#publishing): the key row is inserted first in
 * the transaction of the work, so a racing duplicate waits on it and then reads the committed answer.
 */
export interface IdempotencyStore {
  /**
   * Runs `work` in one transaction together with the key. Same key + same fingerprint → the stored answer
   * (`replayed: true`), without running `work`.
   * @throws AppError `idempotency_key_mismatch` (422) when the key was used with another fingerprint
   * @throws AppError `idempotency_key_in_flight` (409) when the first request still holds the key after `waitMs`
   * Anything `work` throws rolls the transaction back and stores nothing.
   */
  run(scope: IdempotencyScope, work: (tx: Tx) => Promise<StoredAnswer>): Promise<StoredAnswer & { readonly replayed: boolean }>;
  /** Runs `work` in a plain transaction (a POST without an Idempotency-Key). */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs `work` without an enclosing transaction: each statement commits on its own, and after-commit hooks
   * run once `work` returns. Only for work whose writes are one statement (publish without an
   * Idempotency-Key: ADR 0006), where BEGIN and COMMIT would be two round trips that add nothing.
   */
  autocommit<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}
