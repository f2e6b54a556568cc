import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { IdempotencyScope, StoredAnswer } from '../ports/idempotency-store.ts';
import type { Tx, UnitOfWork } from '../ports/unit-of-work.ts';
import { writeOnce, type WriteOnceDeps } from './write-once.ts';

/* writeOnce over fake ports that record which way a write was committed. */

const SCOPE: IdempotencyScope = {
  owner: 'admin',
  route: 'POST /api/v1/app',
  key: 'k-1',
  fingerprint: 'f',
  ttlMs: 60_000,
  waitMs: 1000,
};
const TX = { tag: 'tx' } as unknown as Tx;

function fakes(stored: StoredAnswer | null = null): WriteOnceDeps & { readonly calls: string[] } {
  const calls: string[] = [];
  const unitOfWork: UnitOfWork = {
    transaction: async (work) => {
      calls.push('transaction');
      return work(TX);
    },
    autocommit: async (work) => {
      calls.push('autocommit');
      return work(TX);
    },
  };
  return {
    calls,
    unitOfWork,
    idempotency: {
      run: async (scope, work) => {
        calls.push(`keyed ${scope.key}`);
        return stored === null ? { ...(await work(TX)), replayed: false } : { ...stored, replayed: true };
      },
    },
  };
}

describe('writeOnce', () => {
  const work = async (tx: Tx): Promise<StoredAnswer> => {
    assert.equal(tx, TX);
    return { status: 201, body: { id: 'app_1' } };
  };

  test('with a key, the idempotency store runs the work and commits the answer with it', async () => {
    const deps = fakes();
    assert.deepEqual(await writeOnce(deps, SCOPE, work), { status: 201, body: { id: 'app_1' }, replayed: false });
    assert.deepEqual(deps.calls, ['keyed k-1']);
  });

  test('a repeated key answers what the store kept, marked replayed, without running the work', async () => {
    const deps = fakes({ status: 201, body: { id: 'app_first' } });
    let ran = false;
    const answer = await writeOnce(deps, SCOPE, async () => {
      ran = true;
      return { status: 500, body: null };
    });
    assert.deepEqual(answer, { status: 201, body: { id: 'app_first' }, replayed: true });
    assert.equal(ran, false);
  });

  test('without a key, a transaction, or autocommit when asked', async () => {
    const deps = fakes();
    await writeOnce(deps, null, work);
    await writeOnce(deps, null, work, 'autocommit');
    assert.deepEqual(deps.calls, ['transaction', 'autocommit']);
  });

  test('what the work throws reaches the caller', async () => {
    const deps = fakes();
    await assert.rejects(
      writeOnce(deps, SCOPE, async () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    await assert.rejects(
      writeOnce(deps, null, async () => {
        throw new Error('refused');
      }),
      /refused/,
    );
  });
});
