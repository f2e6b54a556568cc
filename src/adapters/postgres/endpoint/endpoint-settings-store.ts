import type { Cipher } from '../../../ports/cipher.ts';
import { splitSensitiveHeaders, type EndpointSettingsStore } from '../../../ports/endpoint-settings-store.ts';
import { nowSql, on } from '../sql.ts';
import type { Db } from '../db.ts';

/** Custom headers as stored: the plain JSON, and the sensitive part sealed (null when there is none). */
export interface StoredHeaders {
  readonly plain: Record<string, string>;
  readonly sealed: { readonly keyId: string; readonly data: Buffer } | null;
}

/**
 * Splits custom headers for storage: the sensitive ones (Authorization…) are encrypted as one JSON object
 * bound to the endpoint id, the form the claim decrypts (delivery-store.ts).
 */
export function sealHeaders(
  cipher: Cipher,
  endpointId: string,
  headers: Readonly<Record<string, string>>,
): StoredHeaders {
  const { plain, sensitive } = splitSensitiveHeaders(headers);
  const sealed =
    Object.keys(sensitive).length === 0
      ? null
      : cipher.encrypt(Buffer.from(JSON.stringify(sensitive), 'utf8'), endpointId);
  return { plain, sealed };
}

/*
 * ROTATE_SECRET — $1 app id, $2 endpoint id, $3 new secret (ciphertext), $4 its key id, $5 grace ms, $6 now.
 * The ciphertext of the current secret moves to previous_secret as is (same row, same context).
 */
const ROTATE_SECRET = `
UPDATE endpoints
SET previous_secret = secret, previous_secret_key_id = secret_key_id,
    previous_secret_until = ${nowSql(6)} + $5 * interval '1 millisecond',
    secret = $3, secret_key_id = $4, updated_at = ${nowSql(6)}
WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL`;

/** The PostgreSQL {@link EndpointSettingsStore}. Secrets and sensitive headers go through `cipher`. */
export function createPgEndpointSettingsStore(db: Db, cipher: Cipher): EndpointSettingsStore {
  return {
    async rotateSecret(tx, appId, endpointId, secret, graceMs, now) {
      const sealed = cipher.encrypt(Buffer.from(secret, 'utf8'), endpointId);
      const res = await on(db, tx).query(ROTATE_SECRET, [appId, endpointId, sealed.data, sealed.keyId, graceMs, now]);
      return (res.rowCount ?? 0) > 0;
    },

    async readHeaders(appId, endpointId, tx) {
      const res = await on(db, tx).query<{
        headers: Record<string, string> | null;
        sensitive_headers: Buffer | null;
        sensitive_headers_key: string | null;
      }>(
        'SELECT headers, sensitive_headers, sensitive_headers_key FROM endpoints WHERE app_id = $1 AND id = $2 ' +
          'AND deleted_at IS NULL',
        [appId, endpointId],
      );
      const row = res.rows[0];
      if (row === undefined) return null;
      const sensitive =
        row.sensitive_headers === null || row.sensitive_headers_key === null
          ? {}
          : (JSON.parse(
              cipher.decrypt(row.sensitive_headers_key, row.sensitive_headers, endpointId).toString('utf8'),
            ) as Record<string, string>);
      return { plain: row.headers ?? {}, sensitive };
    },

    async writeHeaders(tx, appId, endpointId, headers, now) {
      const stored = sealHeaders(cipher, endpointId, headers);
      const res = await on(db, tx).query(
        `UPDATE endpoints SET headers = $3::jsonb, sensitive_headers = $4, sensitive_headers_key = $5,
          updated_at = ${nowSql(6)}
         WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL`,
        [
          appId,
          endpointId,
          JSON.stringify(stored.plain),
          stored.sealed?.data ?? null,
          stored.sealed?.keyId ?? null,
          now,
        ],
      );
      return (res.rowCount ?? 0) > 0;
    },
  };
}
