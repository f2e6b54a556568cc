import type { ApiKeyRecord, CatalogStore } from '../../ports/catalog-store.ts';
import { nowSql, on } from './catalog-common.ts';
import type { Db } from './db.ts';

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
  id: row.id, name: row.name, role: row.role, appId: row.app_id, createdAt: row.created_at,
  ...(row.read_only ? { readOnly: true } : {}),
  ...(row.portal ? { portal: true } : {}),
  ...(row.capabilities === null ? {} : { capabilities: row.capabilities }),
  ...(row.session_id === null ? {} : { sessionId: row.session_id }),
  ...(row.feature_flags === null ? {} : { featureFlags: row.feature_flags }),
  ...(row.expires_at === null ? {} : { expiresAt: row.expires_at }),
});

/**
 * The API-key part of the PostgreSQL {@link CatalogStore}: only SHA-256 hashes of tokens are stored; a key
 * is live until revoked or past its `expires_at` (database clock).
 */
export function pgApiKeys(db: Db): Pick<CatalogStore, 'findApiKeyByHash' | 'insertApiKeyIfAbsent' | 'revokeApplicationKeys'> {
  return {
    async findApiKeyByHash(tokenHash) {
      const res = await db.query<ApiKeyRow>(`SELECT id, name, role, app_id, read_only, created_at, portal, capabilities, session_id, feature_flags, expires_at FROM api_keys
         WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > clock_timestamp())`, [Buffer.from(tokenHash)]);
      return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
    },

    async insertApiKeyIfAbsent(key, now) {
      const res = await db.query(
        `INSERT INTO api_keys (id, name, role, app_id, token_hash, token_prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6, ${nowSql(7)})
         ON CONFLICT DO NOTHING`,
        [key.id, key.name, key.role, key.appId, Buffer.from(key.tokenHash), key.tokenPrefix, now],
      );
      return (res.rowCount ?? 0) > 0;
    },

    async revokeApplicationKeys(tx, appId, now) {
      const res = await on(db, tx).query(`UPDATE api_keys SET revoked_at = ${nowSql(2)} WHERE app_id = $1 AND revoked_at IS NULL`, [appId, now]);
      return res.rowCount ?? 0;
    },
  };
}
