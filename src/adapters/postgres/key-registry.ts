import { PLAINTEXT_KEY_ID } from '../crypto/key-ring.ts';
import type { Cipher } from '../../ports/cipher.ts';
import type { Db } from './db.ts';

/** The text every canary holds; its context binds it to its key id. */
const CANARY_TEXT = 'tidings encryption key check';
const canaryContext = (keyId: string): string => `tidings-key-check:${keyId}`;

/**
 * Start-up refuses because the key ring cannot read what is stored: `encryption_key_mismatch` (a key with
 * a known id but other bytes) or `encryption_key_missing` (a key that stored values still use is not in
 * the ring, or encryption is off while values are encrypted).
 */
export class KeyCheckError extends Error {
  readonly code: 'encryption_key_mismatch' | 'encryption_key_missing';
  readonly keyIds: readonly string[];
  constructor(code: KeyCheckError['code'], keyIds: readonly string[], message: string) {
    super(message);
    this.name = 'KeyCheckError';
    this.code = code;
    this.keyIds = keyIds;
  }
}

/**
 * Checks the key ring against the key registry (table `encryption_keys`) before anything is read or
 * written (docs/guides/security.md: a wrong or missing key fails start-up clearly):
 * - every registered key that is not retired (and the current one) must decrypt its canary: a key id in
 *   the ring whose bytes differ fails with `encryption_key_mismatch`; a key missing from the ring with
 *   `encryption_key_missing`;
 * - then the current key is registered with a canary (a fixed text encrypted under it) on first use.
 * Keys are retired by `tidings keys rotate` once no stored value uses them; a retired key may leave the
 * ring. A current key that was retired is taken back into use.
 * @throws KeyCheckError listing every key that fails
 */
export async function checkKeyRegistry(db: Db, cipher: Cipher): Promise<void> {
  const current = cipher.currentKeyId;
  const { rows, mismatched, missing } = await readRegistry(db, cipher);
  if (mismatched.length > 0) {
    throw new KeyCheckError(
      'encryption_key_mismatch',
      mismatched,
      `TIDINGS_ENCRYPTION_KEYS: key ${mismatched.map((k) => `"${k}"`).join(', ')} is not the key that ` +
        'encrypted the stored data (same id, other bytes); restore the original key',
    );
  }
  if (missing.length > 0) {
    const off = current === PLAINTEXT_KEY_ID ? 'encryption is turned off, but ' : '';
    throw new KeyCheckError(
      'encryption_key_missing',
      missing,
      `TIDINGS_ENCRYPTION_KEYS: ${off}stored data is encrypted under key ` +
        `${missing.map((k) => `"${k}"`).join(', ')}, which is not in the key ring; add it back (a key may leave ` +
        `the ring only after \`tidings keys rotate\` has retired it)`,
    );
  }
  // Registered only once every known key checked out, so a refused start leaves the registry unchanged.
  if (current !== PLAINTEXT_KEY_ID) {
    const canary = cipher.encrypt(Buffer.from(CANARY_TEXT, 'utf8'), canaryContext(current)).data;
    const inserted = await db.query(
      'INSERT INTO encryption_keys (id, canary) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
      [current, canary],
    );
    // Lost a race with another process registering the same id: check its canary like any other.
    if ((inserted.rowCount ?? 0) === 0 && !rows.includes(current)) return checkKeyRegistry(db, cipher);
  }
  await db.query('UPDATE encryption_keys SET retired_at = NULL WHERE id = $1 AND retired_at IS NOT NULL', [current]);
}

/** The registry read against a key ring: the ids checked, and those whose canary the ring cannot read. */
interface RegistryRead {
  /** Ids of the registered keys that are not retired, and of the current key when registered. */
  readonly rows: readonly string[];
  readonly mismatched: readonly string[];
  readonly missing: readonly string[];
}

/** Reads the registry and tries every canary that must decrypt (see {@link checkKeyRegistry}). Writes nothing. */
async function readRegistry(db: Db, cipher: Cipher): Promise<RegistryRead> {
  const current = cipher.currentKeyId;
  const rows = (
    await db.query<{ id: string; canary: Buffer }>(
      'SELECT id, canary FROM encryption_keys WHERE retired_at IS NULL OR id = $1 ORDER BY id',
      [current],
    )
  ).rows;
  const mismatched: string[] = [];
  const missing: string[] = [];
  for (const row of rows) {
    try {
      const text = cipher.decrypt(row.id, row.canary, canaryContext(row.id)).toString('utf8');
      if (text !== CANARY_TEXT) mismatched.push(row.id);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'unknown_key') missing.push(row.id);
      else if (code === 'decrypt_failed') mismatched.push(row.id);
      else throw error;
    }
  }
  return { rows: rows.map((r) => r.id), mismatched, missing };
}

/** What {@link inspectKeyRegistry} finds: the registry against a key ring, as a start-up would check it. */
export interface KeyRegistryState {
  /** Registered key ids, each with whether `tidings keys rotate` retired it. */
  readonly registered: readonly { readonly id: string; readonly retired: boolean }[];
  /** Keys of the ring with a registered id whose bytes differ (start-up refuses: encryption_key_mismatch). */
  readonly mismatched: readonly string[];
  /** Registered keys still in use that the ring lacks (start-up refuses: encryption_key_missing). */
  readonly missing: readonly string[];
}

/**
 * The checks of {@link checkKeyRegistry}, reported rather than thrown, and without registering the current key
 * (for `tidings doctor`, which changes nothing). A database without the registry table has no key registered.
 * @throws the database error of a failing read
 */
export async function inspectKeyRegistry(db: Db, cipher: Cipher): Promise<KeyRegistryState> {
  const exists = await db.query<{ present: boolean }>("SELECT to_regclass('encryption_keys') IS NOT NULL AS present");
  if (exists.rows[0]?.present !== true) return { registered: [], mismatched: [], missing: [] };
  const all = await db.query<{ id: string; retired: boolean }>(
    'SELECT id, retired_at IS NOT NULL AS retired FROM encryption_keys ORDER BY id',
  );
  const { mismatched, missing } = await readRegistry(db, cipher);
  return { registered: all.rows.map((r) => ({ id: r.id, retired: r.retired })), mismatched, missing };
}
