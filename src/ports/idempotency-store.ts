import type { Tx } from './unit-of-work.ts';

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
 * Idempotency keys kept in PostgreSQL with a unique constraint (docs/design.md#publishing): the key row is inserted
 * first in the transaction of the work, so a racing duplicate waits on it and then reads the committed answer.
 */
export interface IdempotencyStore {
  /**
   * Runs `work` in one transaction together with the key. Same key + same fingerprint → the stored answer
   * (`replayed: true`), without running `work`.
   * @throws AppError `idempotency_key_mismatch` (422) when the key was used with another fingerprint
   * @throws AppError `idempotency_key_in_flight` (409) when the first request still holds the key after `waitMs`
   * Anything `work` throws rolls the transaction back and stores nothing.
   */
  run(
    scope: IdempotencyScope,
    work: (tx: Tx) => Promise<StoredAnswer>,
  ): Promise<StoredAnswer & { readonly replayed: boolean }>;
}

/** The pruning of expired keys (the retention job, src/app/retention.ts). */
export interface IdempotencyPruning {
  /**
   * Deletes up to `batch` keys past their expiry (skipping keys locked by a request in flight).
   * `now` follows the Clock seam (null = the database clock). Returns how many were deleted.
   */
  pruneExpired(input: { readonly batch: number; readonly now: Date | null }): Promise<number>;
}

/**
 * The identity of a key: owner, route and key joined by NUL (none of them holds one: they are header and path text).
 */
export const keyIdentity = (scope: Pick<IdempotencyScope, 'owner' | 'route' | 'key'>): string =>
  `${scope.owner}\u0000${scope.route}\u0000${scope.key}`;
