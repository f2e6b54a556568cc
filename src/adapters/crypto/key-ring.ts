import { createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { createRandomPool } from './random-pool.ts';
import type { Cipher } from '../../ports/cipher.ts';

/** Key id that marks a value stored in plain text (only with encryption explicitly turned off). */
export const PLAINTEXT_KEY_ID = 'plain';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** One key of the ring: an id (letters, digits, `-`, `_`) and 32 raw bytes (AES-256). */
export interface RingKey {
  readonly id: string;
  readonly key: Buffer;
}

/** A coded error from the key ring. */
export class KeyRingError extends Error {
  readonly code: 'invalid_key_ring' | 'unknown_key' | 'decrypt_failed';
  constructor(code: KeyRingError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeyRingError';
    this.code = code;
  }
}

/**
 * Parses `TIDINGS_ENCRYPTION_KEYS`: comma-separated `id:base64` entries, each key 32 bytes; the first is
 * used for new writes, the others only decrypt.
 * @throws KeyRingError `invalid_key_ring` naming every bad entry.
 */
export function parseKeyRing(text: string): RingKey[] {
  const problems: string[] = [];
  const keys: RingKey[] = [];
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id) || id === PLAINTEXT_KEY_ID)
      problems.push(
        `entry ${keys.length + problems.length + 1}: key id must be 1–64 of [A-Za-z0-9_-] and not ` +
          `"${PLAINTEXT_KEY_ID}"`,
      );
    else if (key.length !== 32) problems.push(`key "${id}": must be 32 bytes of base64 (got ${key.length})`);
    else if (keys.some((k) => k.id === id)) problems.push(`key "${id}": listed twice`);
    else keys.push({ id, key });
  }
  if (problems.length === 0 && keys.length === 0) problems.push('no keys given');
  if (problems.length > 0)
    throw new KeyRingError('invalid_key_ring', `TIDINGS_ENCRYPTION_KEYS: ${problems.join('; ')}`);
  return keys;
}

/** Makes a new key-ring entry `id:base64` with 32 random bytes. */
export function generateKeyEntry(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/**
 * AES-256-GCM envelope cipher over a key ring. Stored form: 12-byte IV ‖ 16-byte tag ‖ ciphertext.
 * Values under {@link PLAINTEXT_KEY_ID} (written while encryption was off) still decrypt as themselves.
 */
export function keyRingCipher(keys: readonly RingKey[]): Cipher {
  const first = keys[0];
  if (first === undefined) throw new KeyRingError('invalid_key_ring', 'no keys given');
  // KeyObjects made once: a raw Buffer key is imported again on every cipher call (several times slower).
  const byId = new Map(keys.map((k) => [k.id, createSecretKey(k.key)]));
  const current = byId.get(first.id)!;
  // IVs from a refilled CSPRNG buffer: one system call per 4 KiB instead of one per encryption.
  const ivs = createRandomPool(4096);
  return {
    currentKeyId: first.id,
    encrypt(plain, context) {
      const iv = ivs.take(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return { keyId: first.id, data: Buffer.concat([iv, cipher.getAuthTag(), body]) };
    },
    decrypt(keyId, data, context) {
      if (keyId === PLAINTEXT_KEY_ID) return Buffer.from(data);
      const key = byId.get(keyId);
      if (key === undefined) throw new KeyRingError('unknown_key', `no key "${keyId}" in TIDINGS_ENCRYPTION_KEYS`);
      try {
        const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
        const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(buf.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(buf.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      } catch (error) {
        throw new KeyRingError('decrypt_failed', `value under key "${keyId}" failed authentication`, { cause: error });
      }
    },
  };
}

/** A cipher that stores plain text (development opt-out only; every value is marked `plain`). */
export function plaintextCipher(): Cipher {
  return {
    currentKeyId: PLAINTEXT_KEY_ID,
    encrypt: (plain) => ({ keyId: PLAINTEXT_KEY_ID, data: Buffer.from(plain) }),
    decrypt: (keyId, data) => {
      if (keyId !== PLAINTEXT_KEY_ID)
        throw new KeyRingError('unknown_key', `no key "${keyId}": encryption is turned off`);
      return Buffer.from(data);
    },
  };
}
