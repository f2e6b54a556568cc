import { keyRingCipher } from '../../src/adapters/crypto/key-ring.ts';
import type { Cipher } from '../../src/ports/cipher.ts';

/** A fixed test key ring (key id `test1`); never used outside tests. */
export const TEST_ENCRYPTION_KEYS = 'test1:' + Buffer.alloc(32, 7).toString('base64');

/** A cipher over {@link TEST_ENCRYPTION_KEYS}. */
export function testCipher(): Cipher {
  return keyRingCipher([{ id: 'test1', key: Buffer.alloc(32, 7) }]);
}
