import type { Tx, UnitOfWork } from '../../ports/unit-of-work.ts';
import type { Db, Queryable } from './db.ts';

/** The PostgreSQL form of the opaque {@link Tx}: the open transaction's client and after-commit hooks. */
interface PgTx extends Tx {
  readonly client: Queryable;
  readonly afterCommit: (() => void)[];
  /** True for {@link runAutocommit}'s handle: each statement commits on its own. */
  readonly autocommit: boolean;
}

/** Whether `tx` is an autocommit handle (no open transaction: statements may be grouped with other callers'). */
export function isAutocommit(tx: Tx): boolean {
  return (tx as PgTx).autocommit;
}

/** Unwraps a {@link Tx} made by {@link runTx} into its client. */
export function txClient(tx: Tx): Queryable {
  return (tx as PgTx).client;
}

/** Registers `hook` to run once the transaction has committed (never on rollback). */
export function onCommit(tx: Tx, hook: () => void): void {
  (tx as PgTx).afterCommit.push(hook);
}

/**
 * Runs `work` with a {@link Tx} handle whose statements each commit on their own (the pool: no BEGIN/COMMIT);
 * after-commit hooks run once `work` returns. For work that writes with a single statement (ADR 0006).
 */
export async function runAutocommit<T>(db: Db, work: (tx: Tx, client: Queryable) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = [];
  const result = await work({ client: db, afterCommit: hooks, autocommit: true } as unknown as PgTx, db);
  for (const hook of hooks) hook();
  return result;
}

/** Runs `work` in one transaction with a {@link Tx} handle; after-commit hooks run after COMMIT. */
export async function runTx<T>(db: Db, work: (tx: Tx, client: Queryable) => Promise<T>): Promise<T> {
  const hooks: (() => void)[] = [];
  const result = await db.tx((client) =>
    work({ client, afterCommit: hooks, autocommit: false } as unknown as PgTx, client),
  );
  for (const hook of hooks) hook();
  return result;
}

/** The PostgreSQL {@link UnitOfWork}: {@link runTx} and {@link runAutocommit} on `db`. */
export function createPgUnitOfWork(db: Db): UnitOfWork {
  return {
    transaction: (work) => runTx(db, (tx) => work(tx)),
    autocommit: (work) => runAutocommit(db, (tx) => work(tx)),
  };
}
