import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyEntry, keyRingCipher, parseKeyRing, plaintextCipher } from '../adapters/crypto/key-ring.ts';
import type { Config } from '../config/config.ts';
import type { Cipher } from '../ports/cipher.ts';
import type { Logger } from '../ports/logger.ts';

/** File in the embedded data folder that holds the generated key ring. */
export const KEY_FILE = 'encryption-keys';

/** Thrown when start-up cannot encrypt at rest and was not told it may skip it. */
export class EncryptionSetupError extends Error {
  readonly code = 'encryption_keys_required';
}

/**
 * Chooses the cipher (docs/design.md#security, docs/guides/security.md): `TIDINGS_ENCRYPTION_KEYS` when set; on the
 * embedded engine a key ring generated into the data folder on first start (said in the log); with a PostgreSQL server
 * and no keys, refuses to start unless `TIDINGS_INSECURE_PLAINTEXT_STORAGE=true` (development only).
 * @throws EncryptionSetupError, KeyRingError (invalid ring)
 */
export async function resolveCipher(config: Config, logger: Logger): Promise<Cipher> {
  if (config.encryptionKeys !== undefined) return keyRingCipher(parseKeyRing(config.encryptionKeys));
  if (config.databaseUrl === undefined) {
    const file = join(config.dataDir, KEY_FILE);
    let text: string;
    try {
      text = (await readFile(file, 'utf8')).trim();
    } catch {
      text = generateKeyEntry('local1');
      await writeFile(file, `${text}\n`, { mode: 0o600, flag: 'wx' });
      await chmod(file, 0o600);
      logger.info(
        { file },
        'generated an encryption key for the embedded database; back this file up with the data folder',
      );
    }
    return keyRingCipher(parseKeyRing(text));
  }
  if (config.insecurePlaintextStorage) {
    logger.warn(
      {},
      'TIDINGS_INSECURE_PLAINTEXT_STORAGE=true: secrets and payloads are stored unencrypted (development only)',
    );
    return plaintextCipher();
  }
  throw new EncryptionSetupError(
    'DATABASE_URL is set but TIDINGS_ENCRYPTION_KEYS is not: set a key ring (id:base64 of 32 bytes, e.g. ' +
      '`tidings keys generate`) or, for development only, TIDINGS_INSECURE_PLAINTEXT_STORAGE=true',
  );
}
