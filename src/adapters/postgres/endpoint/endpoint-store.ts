import type { Cipher } from '../../../ports/cipher.ts';
import type { EndpointStore } from '../../../ports/endpoint-store.ts';
import { toRecord, type EndpointRow } from '../endpoint-row.ts';
import { sealHeaders } from './endpoint-settings-store.ts';
import { keyset, toPage } from '../paging.ts';
import { nowSql, on, setClause, withConflict } from '../sql.ts';
import type { Db } from '../db.ts';
import type { Tx } from '../../../ports/unit-of-work.ts';

/** Every column but the secrets: a secret is read only by {@link createPgEndpointStore} `endpointSecret`. */
const COLUMNS =
  'id, app_id, uid, url, description, version, filter_types, channels, metadata, headers, rate_limit_per_s, ' +
  'status, status_reason, created_at, updated_at';
const UID_TAKEN = { endpoints_app_uid: 'An endpoint with this uid already exists in the application' };

/*
 * INSERT_ENDPOINT — $1 id, $2 app id, $3 uid, $4 url, $5 description, $6 version, $7 filter types,
 * $8 channels, $9 metadata (json text), $10 headers (json text), $11 rate limit, $12 status,
 * $13 status reason, $14 secret (ciphertext), $15 secret key id, $16 now, $17 sensitive headers
 * (ciphertext or NULL), $18 their key id. Returns the row.
 */
const INSERT_ENDPOINT = `
INSERT INTO endpoints (id, app_id, uid, url, description, version, filter_types, channels, metadata, headers,
                       rate_limit_per_s, status, status_reason, status_changed_at, secret, secret_key_id, created_at,
                         updated_at,
                       sensitive_headers, sensitive_headers_key)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13, ${nowSql(16)}, $14, $15, ${nowSql(16)},
  ${nowSql(16)}, $17, $18)
RETURNING ${COLUMNS}`;

/*
 * SETTLE_PENDING — moves every pending delivery of an endpoint to a final state and appends its timeline
 * row, in one statement (docs/design.md#delivery-lifecycle). Reads index deliveries_endpoint_due. Rows a claim holds
 * locked are waited for, then re-checked: a delivery that the claim leased meanwhile is no longer pending and is left
 * alone. $1 endpoint id, $2 state, $3 reason, $4 now. Returns the count.
 */
const SETTLE_PENDING = `
WITH moved AS (
  UPDATE deliveries SET state = $2, updated_at = ${nowSql(4)}
  WHERE endpoint_id = $1 AND state = 'pending'
  RETURNING id
), logged AS (
  INSERT INTO delivery_events (delivery_id, state, reason, at)
  SELECT id, $2, $3, ${nowSql(4)} FROM moved
)
SELECT count(*)::int AS n FROM moved`;

/*
 * RESET_HEALTH_ON_NEW_URL — when an endpoint's URL changes, what its health says of the old receiver no longer
 * applies: the breaker closes, the failure streak, cool-down growth, Retry-After throttle and failing-since
 * (auto-disable) start again. Runs before the UPDATE that writes the new URL, in its transaction; the row
 * lock is held until it commits. $1 app id, $2 endpoint id, $3 the new URL (as stored: WHATWG href),
 * $4 now. Returns the breaker state before when the URL differs (no row when it is the same).
 */
const RESET_HEALTH_ON_NEW_URL = `
WITH before AS (
  SELECT id, breaker_state FROM endpoints
  WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL AND url <> $3
  FOR NO KEY UPDATE
)
UPDATE endpoints e
SET breaker_state = 'closed', breaker_open_until = NULL, breaker_opened_count = 0, consecutive_failures = 0,
    failing_since = NULL, throttled_until = NULL,
    breaker_changed_at = CASE WHEN b.breaker_state <> 'closed' THEN ${nowSql(4)} ELSE e.breaker_changed_at END
FROM before b WHERE e.id = b.id
RETURNING b.breaker_state AS was`;

/**
 * The PostgreSQL {@link EndpointStore} (table endpoints). Signing secrets are encrypted with `cipher`
 * (context = endpoint id, so a value cannot be moved to another row) and never logged. The list runs on `reader`
 * (a read replica while it is fresh enough, docs/adr/0022-poolers-and-read-replicas.md; default `db`).
 */
export function createPgEndpointStore(db: Db, cipher: Cipher, reader: Db = db): EndpointStore {
  /** Appends to the endpoint's health history (endpoint_events), as the dispatcher does for its own changes. */
  const logEvent = async (tx: Tx, endpointId: string, kind: string, reason: string | null, now: Date | null) => {
    await on(db, tx).query(
      `INSERT INTO endpoint_events (endpoint_id, kind, reason, at) VALUES ($1, $2, $3, ${nowSql(4)})`,
      [endpointId, kind, reason, now],
    );
  };

  return {
    async insertEndpoint(tx, ep, now) {
      const sealed = cipher.encrypt(Buffer.from(ep.secret, 'utf8'), ep.id);
      // Credential headers (Authorization…) are stored encrypted, never in the plain headers column.
      const headers = sealHeaders(cipher, ep.id, ep.headers);
      const res = await withConflict(
        () =>
          on(db, tx).query<EndpointRow>(INSERT_ENDPOINT, [
            ep.id,
            ep.appId,
            ep.uid,
            ep.url,
            ep.description,
            ep.version,
            ep.filterTypes,
            ep.channels,
            JSON.stringify(ep.metadata),
            JSON.stringify(headers.plain),
            ep.rateLimit,
            ep.status,
            ep.statusReason,
            sealed.data,
            sealed.keyId,
            now,
            headers.sealed?.data ?? null,
            headers.sealed?.keyId ?? null,
          ]),
        UID_TAKEN,
      );
      return toRecord(res.rows[0]!);
    },

    async countEndpointsLocked(tx, appId) {
      await on(db, tx).query('SELECT 1 FROM applications WHERE id = $1 FOR NO KEY UPDATE', [appId]);
      const res = await on(db, tx).query<{ n: string }>(
        'SELECT count(*) AS n FROM endpoints WHERE app_id = $1 AND deleted_at IS NULL',
        [appId],
      );
      return Number(res.rows[0]?.n ?? 0);
    },

    async findEndpoint(appId, ref, options = {}) {
      const which =
        options.deletedToo === true
          ? 'id = $2'
          : 'deleted_at IS NULL AND (id = $2 OR uid = $2) ORDER BY (id = $2) DESC';
      const res = await on(db, options.tx).query<EndpointRow>(
        `SELECT ${COLUMNS} FROM endpoints WHERE app_id = $1 AND ${which}
         LIMIT 1${options.forUpdate === true ? ' FOR UPDATE' : ''}`,
        [appId, ref],
      );
      return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
    },

    async listEndpoints(appId, page) {
      const k = keyset(page, 'id', 3);
      const res = await reader.query<EndpointRow>(
        `SELECT ${COLUMNS} FROM endpoints WHERE app_id = $1 AND deleted_at IS NULL AND ${k.where} ORDER BY ` +
          `${k.orderBy} LIMIT $2`,
        [appId, k.fetch, ...k.params],
      );
      return toPage(res.rows, page, (r) => r.id, toRecord);
    },

    async updateEndpoint(tx, appId, id, changes, now) {
      const { status, headers: given, ...rest } = changes;
      if (changes.url !== undefined) {
        const reset = await on(db, tx).query<{ was: string }>(RESET_HEALTH_ON_NEW_URL, [appId, id, changes.url, now]);
        const was = reset.rows[0]?.was;
        if (was !== undefined && was !== 'closed')
          await logEvent(tx, id, 'breaker_closed', 'the endpoint URL changed', now);
      }
      const sealedHeaders = given === undefined ? undefined : sealHeaders(cipher, id, given);
      const fields = sealedHeaders === undefined ? rest : { ...rest, headers: sealedHeaders.plain };
      const set = setClause(
        fields,
        {
          uid: 'uid',
          url: 'url',
          description: 'description',
          version: 'version',
          filterTypes: 'filter_types',
          channels: 'channels',
          metadata: 'metadata::jsonb',
          headers: 'headers::jsonb',
          rateLimit: 'rate_limit_per_s',
        },
        4,
      );
      const sql = [...set.sql, `updated_at = ${nowSql(3)}`];
      const params: unknown[] = [appId, id, now, ...set.params];
      if (sealedHeaders !== undefined) {
        params.push(sealedHeaders.sealed?.data ?? null, sealedHeaders.sealed?.keyId ?? null);
        sql.push(`sensitive_headers = $${params.length - 1}`, `sensitive_headers_key = $${params.length}`);
      }
      if (status !== undefined) {
        params.push(status.status, status.reason);
        sql.push(
          `status = $${params.length - 1}`,
          `status_reason = $${params.length}`,
          `status_changed_at = ${nowSql(3)}`,
        );
      }
      const res = await withConflict(
        () =>
          on(db, tx).query<EndpointRow>(
            `UPDATE endpoints SET ${sql.join(', ')} WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL ` +
              `RETURNING ${COLUMNS}`,
            params,
          ),
        UID_TAKEN,
      );
      if (res.rows[0] !== undefined && status !== undefined)
        await logEvent(tx, id, status.status === 'active' ? 'enabled' : status.status, status.reason, now);
      return res.rows[0] === undefined ? null : toRecord(res.rows[0]);
    },

    async softDeleteEndpoint(tx, appId, id, now) {
      const res = await on(db, tx).query(
        `UPDATE endpoints SET deleted_at = ${nowSql(3)}, updated_at = ${nowSql(3)} WHERE app_id = $1 AND id = ` +
          '$2 AND deleted_at IS NULL',
        [appId, id, now],
      );
      if ((res.rowCount ?? 0) === 0) return false;
      await logEvent(tx, id, 'deleted', null, now);
      return true;
    },

    async endpointSecret(appId, id) {
      const res = await db.query<{ secret: Buffer; secret_key_id: string }>(
        'SELECT secret, secret_key_id FROM endpoints WHERE app_id = $1 AND id = $2 AND deleted_at IS NULL',
        [appId, id],
      );
      const row = res.rows[0];
      return row === undefined ? null : cipher.decrypt(row.secret_key_id, row.secret, id).toString('utf8');
    },

    async settlePendingDeliveries(tx, endpointId, to, reason, now) {
      const res = await on(db, tx).query<{ n: number }>(SETTLE_PENDING, [endpointId, to, reason, now]);
      return res.rows[0]!.n;
    },
  };
}
