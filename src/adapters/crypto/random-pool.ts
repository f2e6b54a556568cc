import { randomFillSync } from 'node:crypto';

/** Cryptographically secure random bytes handed out from a refilled buffer; see {@link createRandomPool}. */
export interface RandomPool {
  /**
   * `n` fresh random bytes (a copy the caller owns). Every byte is handed out once: the pool is refilled
   * from the CSPRNG when fewer than `n` are left.
   * @throws RangeError when `n` is larger than the pool
   */
  take(n: number): Buffer;
}

/**
 * A pool of `size` bytes filled by `crypto.randomFillSync` (the same CSPRNG as `randomBytes`), so that
 * small draws — a 12-byte AES-GCM IV per encryption — cost one system call per `size` bytes instead of
 * one per draw. Bytes are never handed out twice, so IVs stay as unique as `randomBytes` makes them
 * (NIST SP 800-38D §8.2.2: random 96-bit IVs). docs/adr/0016-hot-path-cost.md has the measurement.
 */
export function createRandomPool(size = 4096): RandomPool {
  const pool = Buffer.allocUnsafe(size);
  let offset = size;
  return {
    take(n) {
      if (n > size) throw new RangeError(`cannot take ${n} random bytes from a pool of ${size}`);
      if (offset + n > size) {
        randomFillSync(pool);
        offset = 0;
      }
      const out = Buffer.allocUnsafe(n);
      pool.copy(out, 0, offset, offset + n);
      // Handed-out bytes are wiped in the pool, so no later reader of the pool memory sees them.
      pool.fill(0, offset, offset + n);
      offset += n;
      return out;
    },
  };
}
