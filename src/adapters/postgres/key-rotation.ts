import { KeyRingError, PLAINTEXT_KEY_ID } from '../crypto/key-ring.ts';
import type { Cipher } from '../../ports/cipher.ts';
import type { Db } from './db.ts';

/**
 * One encrypted column and the column naming its key (docs/design.md#security). The encryption context of every value
 * is the row's `id` (the endpoint id for secrets and headers, the message id for payloads, the attempt id for
 * response bodies). A NULL key id with a
 * value present means the value was stored in plain text.
 */
export interface EncryptedColumn {
  readonly table: string;
  readonly data: string;
  readonly keyId: string;
}

/**
 * Every column that holds ciphertext. `tidings keys rotate` re-encrypts each of them; the at-rest tests read
 * every other column of every table and find no plaintext secret or payload. A new encrypted column is
 * added here.
 */
export const ENCRYPTED_COLUMNS: readonly EncryptedColumn[] = Object.freeze([
  { table: 'endpoints', data: 'secret', keyId: 'secret_key_id' },
  { table: 'endpoints', data: 'previous_secret', keyId: 'previous_secret_key_id' },
  { table: 'endpoints', data: 'sensitive_headers', keyId: 'sensitive_headers_key' },
  { table: 'endpoints', data: 'receiver_auth', keyId: 'receiver_auth_key_id' },
  { table: 'messages', data: 'payload', keyId: 'payload_key_id' },
  { table: 'attempts', data: 'response_body', keyId: 'response_body_key_id' },
]);

/** Progress of one batch of {@link rotateKeys}, reported as it happens. */
export interface RotationProgress {
  /** `table.column` */
  readonly column: string;
  /** Rows read under another key in this batch. */
  readonly read: number;
  /** Rows rewritten under the current key in this batch. */
  readonly rewritten: number;
  /**
   * Rows left alone because a concurrent write changed them between read and write (they are re-checked at the end).
   */
  readonly changedMeanwhile: number;
  /** Totals of this column so far. */
  readonly totalRewritten: number;
  /** The last row id of the batch: the next batch starts after it (keyset). */
  readonly lastId: string;
}

/** The outcome of {@link rotateKeys}. */
export interface RotationReport {
  readonly currentKeyId: string;
  readonly rewritten: Readonly<Record<string, number>>;
  readonly changedMeanwhile: number;
  /** Rows still under another key after the pass, per column (0 everywhere = done). */
  readonly remaining: Readonly<Record<string, number>>;
  /** Keys marked retired in the key registry (no stored value uses them any more). */
  readonly retired: readonly string[];
}

/** Options of {@link rotateKeys}. */
export interface RotationOptions {
  /** Rows per statement (TIDINGS_KEY_ROTATION_BATCH). */
  readonly batchSize: number;
  readonly onProgress?: (progress: RotationProgress) => void;
  /** Test seam: runs between the read and the guarded write of each batch. */
  readonly beforeWrite?: (column: EncryptedColumn, ids: readonly string[]) => Promise<void>;
  /** Stops after the current batch when it returns true (e.g. on SIGINT); the next run resumes. */
  readonly shouldStop?: () => boolean;
}

/** Thrown when rotation cannot run: no key ring (encryption is off). */
export class KeyRotationError extends Error {
  readonly code = 'key_rotation_impossible';
}

const ident = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return `"${name}"`;
};

/*
 * SELECT_BATCH — the next rows of one column whose value is not under the current key, by id (keyset: safe
 * to stop and rerun; rows already rewritten are no longer selected). $1 after id, $2 current key id,
 * $3 limit. Reads the table's primary key index.
 */
const selectBatch = (c: EncryptedColumn): string => `
SELECT id, ${ident(c.data)} AS data, ${ident(c.keyId)} AS key_id FROM ${ident(c.table)}
WHERE id > $1 AND ${ident(c.data)} IS NOT NULL AND ${ident(c.keyId)} IS DISTINCT FROM $2
ORDER BY id LIMIT $3`;

/*
 * REWRITE_BATCH — writes the re-encrypted values of one batch in one statement (its own short transaction).
 * Each row is guarded by its old key id AND its old ciphertext, so a value written concurrently (a secret
 * rotated, an endpoint updated, a payload expunged) is never clobbered: that row matches nothing and is
 * counted as changed meanwhile. $1 current key id, $2 ids, $3 old key ids, $4 old values, $5 new values.
 * Returns the ids rewritten.
 */
const rewriteBatch = (c: EncryptedColumn): string => `
UPDATE ${ident(c.table)} t SET ${ident(c.data)} = u.data, ${ident(c.keyId)} = $1
FROM unnest($2::text[], $3::text[], $4::bytea[], $5::bytea[]) AS u(id, old_key, old_data, data)
WHERE t.id = u.id AND t.${ident(c.keyId)} IS NOT DISTINCT FROM u.old_key AND t.${ident(c.data)} = u.old_data
RETURNING t.id`;

const countRemaining = (c: EncryptedColumn): string =>
  `SELECT count(*)::int AS n FROM ${ident(c.table)} ` +
  `WHERE ${ident(c.data)} IS NOT NULL AND ${ident(c.keyId)} IS DISTINCT FROM $1`;

/**
 * Re-encrypts every stored secret, sensitive header set and payload that is not under the cipher's current
 * (first) key (docs/guides/security.md): per column, batches of `batchSize` rows read by id and rewritten by one
 * guarded statement each, so delivery never waits on a long transaction and a concurrent write is never
 * overwritten. Values under a key still in the ring — or stored in plain text — are decrypted and
 * re-encrypted; a value under a key missing from the ring fails the run (KeyRingError `unknown_key`)
 * before anything of its batch is written. When no row remains under another key, every other key in the
 * key registry is marked retired.
 * @throws KeyRotationError when encryption is off; KeyRingError `unknown_key` / `decrypt_failed`
 */
export async function rotateKeys(db: Db, cipher: Cipher, options: RotationOptions): Promise<RotationReport> {
  const current = cipher.currentKeyId;
  if (current === PLAINTEXT_KEY_ID)
    throw new KeyRotationError('encryption is turned off (no TIDINGS_ENCRYPTION_KEYS): there is no key to rotate to');
  const rewritten: Record<string, number> = {};
  let changedMeanwhile = 0;
  for (const column of ENCRYPTED_COLUMNS) {
    const name = `${column.table}.${column.data}`;
    rewritten[name] = 0;
    let after = '';
    for (;;) {
      if (options.shouldStop?.() === true) break;
      const rows = (
        await db.query<{ id: string; data: Buffer; key_id: string | null }>(selectBatch(column), [
          after,
          current,
          options.batchSize,
        ])
      ).rows;
      if (rows.length === 0) break;
      const sealed = rows.map((row) => {
        try {
          return cipher.encrypt(cipher.decrypt(row.key_id ?? PLAINTEXT_KEY_ID, row.data, row.id), row.id).data;
        } catch (error) {
          if (error instanceof KeyRingError)
            throw new KeyRingError(error.code, `${name} of ${row.id}: ${error.message}`, { cause: error });
          throw error;
        }
      });
      await options.beforeWrite?.(
        column,
        rows.map((r) => r.id),
      );
      const done = (
        await db.query<{ id: string }>(rewriteBatch(column), [
          current,
          rows.map((r) => r.id),
          rows.map((r) => r.key_id),
          rows.map((r) => r.data),
          sealed,
        ])
      ).rows.length;
      rewritten[name] += done;
      changedMeanwhile += rows.length - done;
      after = rows.at(-1)!.id;
      options.onProgress?.({
        column: name,
        read: rows.length,
        rewritten: done,
        changedMeanwhile: rows.length - done,
        totalRewritten: rewritten[name],
        lastId: after,
      });
      if (rows.length < options.batchSize) break;
    }
  }
  const remaining: Record<string, number> = {};
  for (const column of ENCRYPTED_COLUMNS) {
    remaining[`${column.table}.${column.data}`] = (
      await db.query<{ n: number }>(countRemaining(column), [current])
    ).rows[0]!.n;
  }
  const clean = Object.values(remaining).every((n) => n === 0) && options.shouldStop?.() !== true;
  const retired = clean
    ? (
        await db.query<{ id: string }>(
          'UPDATE encryption_keys SET retired_at = clock_timestamp() ' +
            'WHERE id <> $1 AND retired_at IS NULL RETURNING id',
          [current],
        )
      ).rows.map((r) => r.id)
    : [];
  return { currentKeyId: current, rewritten, changedMeanwhile, remaining, retired };
}
