import type { IdempotencyScope, IdempotencyStore, StoredAnswer } from '../ports/idempotency-store.ts';
import type { Tx, UnitOfWork } from '../ports/unit-of-work.ts';

/** What {@link writeOnce} commits through: the idempotency store for a keyed request, the unit of work otherwise. */
export interface WriteOnceDeps {
  readonly idempotency: Pick<IdempotencyStore, 'run'>;
  readonly unitOfWork: UnitOfWork;
}

/**
 * Runs one write and its answer (docs/design.md#publishing, docs/adr/0003-svix-compatibility.md). With an
 * Idempotency-Key scope, through the idempotency store: the key commits with the work, and the same request
 * again gets the stored answer (`replayed: true`) without running `work`. Without one, in a transaction, or
 * with `withoutKey: 'autocommit'` (work that writes with one statement) without BEGIN/COMMIT
 * (docs/adr/0006-round-trips-and-wake-ups.md). `work` builds its answer from app/answers.ts inside the
 * transaction; no presentation code runs there.
 * @returns the answer and whether it was replayed
 * @throws AppError `idempotency_key_mismatch`, `idempotency_key_in_flight` from the store; anything `work`
 *   throws, after rolling back (nothing stored, the key included)
 */
export async function writeOnce(
  deps: WriteOnceDeps,
  scope: IdempotencyScope | null,
  work: (tx: Tx) => Promise<StoredAnswer>,
  withoutKey: 'transaction' | 'autocommit' = 'transaction',
): Promise<StoredAnswer & { readonly replayed: boolean }> {
  if (scope !== null) return deps.idempotency.run(scope, work);
  const answer =
    withoutKey === 'autocommit' ? await deps.unitOfWork.autocommit(work) : await deps.unitOfWork.transaction(work);
  return { ...answer, replayed: false };
}
