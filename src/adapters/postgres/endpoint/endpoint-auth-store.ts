import type { ReceiverAuth, ReceiverAuthSummary } from '../../../domain/receiver-auth.ts';
import type { Cipher } from '../../../ports/cipher.ts';
import type { EndpointHasMtls, ReceiverAuthSource, ReceiverAuthStore } from '../../../ports/receiver-auth-store.ts';
import type { Db } from '../db.ts';
import { nowSql, on } from '../sql.ts';

/*
 * WRITE_AUTH — $1 app id, $2 endpoint id, $3 configuration (ciphertext), $4 its key id, $5 summary (jsonb text),
 * $6 now, $7 whether it has mtls (then not on an http URL), $8 whether to compare the version, $9 the version
 * expected (NULL: none). A new version from the sequence at each write (migration 1764000013000). Index
 * endpoints_pkey.
 */
const WRITE_AUTH = `
UPDATE endpoints SET receiver_auth = $3, receiver_auth_key_id = $4, receiver_auth_summary = $5::jsonb,
       receiver_auth_version = nextval('endpoint_receiver_auth_version'), updated_at = ${nowSql(6)}
WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL AND NOT ($7::boolean AND url LIKE 'http:%')
  AND (NOT $8::boolean OR receiver_auth_version IS NOT DISTINCT FROM $9::bigint)
RETURNING receiver_auth_summary, receiver_auth_version::text AS version`;

/* HAS_MTLS — $1 endpoint id: whether its receiver auth has a TLS part (endpoints_pkey). */
const HAS_MTLS = `
SELECT coalesce(jsonb_typeof(receiver_auth_summary->'mtls') = 'object', false) AS mtls FROM endpoints WHERE id = $1`;

/* CLEAR_AUTH — $1 app id, $2 endpoint id, $3 now. Index endpoints_pkey. */
const CLEAR_AUTH = `
UPDATE endpoints SET receiver_auth = NULL, receiver_auth_key_id = NULL, receiver_auth_summary = NULL,
       receiver_auth_version = NULL, updated_at = ${nowSql(3)}
WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL
RETURNING id`;

/* READ_AUTH — $1 app id, $2 endpoint id: the summary only (endpoints_pkey). */
const READ_AUTH = `
SELECT receiver_auth_summary, receiver_auth_version::text AS version
FROM endpoints WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL`;

/* LOAD_AUTH — $1 endpoint id: the ciphertext, for a dispatcher (endpoints_pkey). */
const LOAD_AUTH = `
SELECT receiver_auth, receiver_auth_key_id, receiver_auth_version::text AS version
FROM endpoints WHERE id = $1 AND deleted_at IS NULL AND receiver_auth IS NOT NULL`;

interface SummaryRow {
  receiver_auth_summary: ReceiverAuthSummary | null;
  version: string | null;
}

/** The PostgreSQL receiver auth of endpoints (columns endpoints.receiver_auth*), sealed with `cipher`. */
export function createPgReceiverAuthStore(db: Db, cipher: Cipher): ReceiverAuthStore & ReceiverAuthSource {
  const stored = (row: SummaryRow | undefined) =>
    row === undefined
      ? undefined
      : row.receiver_auth_summary === null || row.version === null
        ? null
        : { summary: row.receiver_auth_summary, version: row.version };
  return {
    async read(key) {
      return stored((await db.query<SummaryRow>(READ_AUTH, [key.appId, key.endpointId])).rows[0]);
    },
    async write(key, auth, summary, now, expectedVersion) {
      const sealed = cipher.encrypt(Buffer.from(JSON.stringify(auth), 'utf8'), key.endpointId);
      const params = [
        ...[key.appId, key.endpointId, sealed.data, sealed.keyId, JSON.stringify(summary), now],
        ...[auth.mtls !== undefined, expectedVersion !== undefined, expectedVersion ?? null],
      ];
      return stored((await db.query<SummaryRow>(WRITE_AUTH, params)).rows[0]) ?? undefined;
    },
    async clear(key, now) {
      return (await db.query(CLEAR_AUTH, [key.appId, key.endpointId, now])).rows.length > 0;
    },
    async load(endpointId) {
      const res = await db.query<{ receiver_auth: Buffer; receiver_auth_key_id: string; version: string }>(LOAD_AUTH, [
        endpointId,
      ]);
      const row = res.rows[0];
      if (row === undefined) return null;
      const plain = cipher.decrypt(row.receiver_auth_key_id, row.receiver_auth, endpointId).toString('utf8');
      return { version: row.version, auth: JSON.parse(plain) as ReceiverAuth };
    },
  };
}

/** {@link EndpointHasMtls} over PostgreSQL. */
export function createPgEndpointHasMtls(db: Db): EndpointHasMtls {
  return async (tx, endpointId) =>
    (await on(db, tx).query<{ mtls: boolean }>(HAS_MTLS, [endpointId])).rows[0]?.mtls === true;
}
