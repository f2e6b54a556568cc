import type { ApiKeyRecord, ApiKeyStore, ApiKeyView } from '../../../ports/api-key-store.ts';
import { keyset, toPage } from '../paging.ts';
import { nowSql, on } from '../sql.ts';
import type { Db } from '../db.ts';

interface Row {
  id: string;
  name: string;
  role: 'admin' | 'app';
  app_id: string | null;
  read_only: boolean;
  token_prefix: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, name, role, app_id, read_only, token_prefix, created_at, expires_at, revoked_at';

const toView = (r: Row): ApiKeyView => ({
  id: r.id,
  name: r.name,
  role: r.role,
  appId: r.app_id,
  readOnly: r.read_only,
  tokenPrefix: r.token_prefix,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

interface ApiKeyRow {
  id: string;
  name: string;
  role: 'admin' | 'app';
  app_id: string | null;
  read_only: boolean;
  created_at: Date;
  portal: boolean;
  capabilities: string[] | null;
  session_id: string | null;
  feature_flags: string[] | null;
  expires_at: Date | null;
}

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  role: row.role,
  appId: row.app_id,
  createdAt: row.created_at,
  ...(row.read_only ? { readOnly: true } : {}),
  ...(row.portal ? { portal: true } : {}),
  ...(row.capabilities === null ? {} : { capabilities: row.capabilities }),
  ...(row.session_id === null ? {} : { sessionId: row.session_id }),
  ...(row.feature_flags === null ? {} : { featureFlags: row.feature_flags }),
  ...(row.expires_at === null ? {} : { expiresAt: row.expires_at }),
});

/**
 * The PostgreSQL {@link ApiKeyStore}, the one owner of table api_keys: tokens only as SHA-256 hashes; a key
 * is live until revoked or past its `expires_at` (database clock).
 */
export function createPgApiKeyStore(db: Db): ApiKeyStore {
  return {
    async insert(key, now, tx) {
      const res = await on(db, tx).query<Row>(
        `INSERT INTO api_keys (id, name, role, app_id, read_only, token_hash, token_prefix, created_at, expires_at,
          portal, capabilities, session_id, feature_flags)
         VALUES ($1, $2, $3, $4, $5, $6, $7, ${nowSql(8)}, ${nowSql(8)} + $9 * interval '1 millisecond', $10, $11, $12,
           $13)
         RETURNING ${COLUMNS}`,
        [
          key.id,
          key.name,
          key.appId === null ? 'admin' : 'app',
          key.appId,
          key.readOnly,
          Buffer.from(key.tokenHash),
          key.tokenPrefix,
          now,
          key.expiresInMs,
          key.portal ?? false,
          key.capabilities ?? null,
          key.sessionId ?? null,
          key.featureFlags ?? null,
        ],
      );
      return toView(res.rows[0]!);
    },

    async list(query) {
      const k = keyset(query, 'id', 3);
      const res = await db.query<Row>(
        `SELECT ${COLUMNS} FROM api_keys WHERE ($1::text IS NULL OR app_id = $1) AND ${k.where} ORDER BY ` +
          `${k.orderBy} LIMIT $2`,
        [query.appId, k.fetch, ...k.params],
      );
      return toPage(res.rows, query, (r) => r.id, toView);
    },

    async revoke(id, now) {
      const res = await db.query(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${nowSql(2)}) WHERE id = $1`, [
        id,
        now,
      ]);
      return (res.rowCount ?? 0) > 0;
    },

    async revokeScopedByHash(tokenHash, now) {
      const res = await db.query(
        `UPDATE api_keys SET revoked_at = ${nowSql(2)} WHERE token_hash = $1 AND role = 'app' AND revoked_at IS NULL`,
        [Buffer.from(tokenHash), now],
      );
      return (res.rowCount ?? 0) > 0;
    },

    async expireApplicationKeys(appId, afterMs, now, sessionIds) {
      const sessions =
        sessionIds === undefined || sessionIds === null || sessionIds.length === 0 ? null : [...sessionIds];
      const res = await db.query(
        `UPDATE api_keys SET expires_at = least(coalesce(expires_at, 'infinity'),
          ${nowSql(3)} + $2 * interval '1 millisecond')
         WHERE app_id = $1 AND revoked_at IS NULL AND ($4::text[] IS NULL OR session_id = ANY($4::text[]))`,
        [appId, afterMs, now, sessions],
      );
      return res.rowCount ?? 0;
    },

    async findApiKeyByHash(tokenHash) {
      const res = await db.query<ApiKeyRow>(
        `SELECT id, name, role, app_id, read_only, created_at, portal, capabilities, session_id, feature_flags,
          expires_at FROM api_keys
         WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > clock_timestamp())`,
        [Buffer.from(tokenHash)],
      );
      return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
    },

    async insertApiKeyIfAbsent(key, now) {
      const res = await db.query(
        `INSERT INTO api_keys (id, name, role, app_id, token_hash, token_prefix, created_at) VALUES
          ($1, $2, $3, $4, $5, $6, ${nowSql(7)})
         ON CONFLICT DO NOTHING`,
        [key.id, key.name, key.role, key.appId, Buffer.from(key.tokenHash), key.tokenPrefix, now],
      );
      return (res.rowCount ?? 0) > 0;
    },

    async revokeApplicationKeys(tx, appId, now) {
      const res = await on(db, tx).query(
        `UPDATE api_keys SET revoked_at = ${nowSql(2)} WHERE app_id = $1 AND revoked_at IS NULL`,
        [appId, now],
      );
      return res.rowCount ?? 0;
    },
  };
}
