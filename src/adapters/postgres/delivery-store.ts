import { decodeSecret } from '../../domain/signing.ts';
import type { Cipher } from '../../ports/cipher.ts';
import type { ClaimedDelivery, DeliveryStore, LeaseRef, RecordResult } from '../../ports/delivery-store.ts';
import type { Db } from './db.ts';
import { CLAIM, SWEEP, DISABLE_ENDPOINT, EXTEND_LEASES, RECORD_ATTEMPTS, RELEASE_LEASES, THROTTLE_ENDPOINT } from './delivery-sql.ts';

interface ClaimRow {
  id: string;
  fencing_token: string;
  app_id: string;
  message_id: string;
  endpoint_id: string;
  attempt_count: number;
  manual: boolean;
  reclaimed: boolean;
  event_type: string;
  payload: Buffer | null;
  payload_key_id: string | null;
  url: string;
  headers: Record<string, string> | null;
  secret: Buffer;
  secret_key_id: string;
  sensitive_headers: Buffer | null;
  sensitive_headers_key: string | null;
  previous_secret: Buffer | null;
  previous_secret_key_id: string | null;
}

/** Most expired leases settled by the sweep that precedes each claim. */
const SWEEP_BATCH = 100;

/**
 * The PostgreSQL {@link DeliveryStore}: the statements of delivery-sql.ts, decryption of payloads
 * (context = message id) and secrets (context = endpoint id) with `cipher`.
 */
export function createPgDeliveryStore(db: Db, cipher: Cipher): DeliveryStore {
  const decryptSecret = (data: Buffer, keyId: string, endpointId: string): Uint8Array =>
    decodeSecret(cipher.decrypt(keyId, data, endpointId).toString('utf8'));

  const toClaimed = (row: ClaimRow, workerId: string): ClaimedDelivery => {
    const signingKeys = [decryptSecret(row.secret, row.secret_key_id, row.endpoint_id)];
    if (row.previous_secret !== null && row.previous_secret_key_id !== null) {
      signingKeys.push(decryptSecret(row.previous_secret, row.previous_secret_key_id, row.endpoint_id));
    }
    const headers: Record<string, string> = { ...(row.headers ?? {}) };
    if (row.sensitive_headers !== null && row.sensitive_headers_key !== null) {
      Object.assign(headers, JSON.parse(cipher.decrypt(row.sensitive_headers_key, row.sensitive_headers, row.endpoint_id).toString('utf8')) as Record<string, string>);
    }
    return {
      deliveryId: row.id,
      fencingToken: row.fencing_token,
      workerId,
      appId: row.app_id,
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      eventType: row.event_type,
      attemptNumber: row.attempt_count + 1,
      manual: row.manual,
      reclaimed: row.reclaimed,
      url: row.url,
      // An expunged payload is delivered as JSON null: the delivery history stays, the content is gone.
      payload: row.payload === null || row.payload_key_id === null ? Buffer.from('null') : cipher.decrypt(row.payload_key_id, row.payload, row.message_id),
      signingKeys,
      headers,
    };
  };

  return {
    async claim(input) {
      const swept = await db.query<{ state: string }>(SWEEP, [input.maxReclaims, input.now, SWEEP_BATCH]);
      const res = await db.query<ClaimRow>(CLAIM, [input.workerId, input.limit, input.leaseMs, input.now, input.maxReclaims]);
      const deliveries = res.rows.map((row) => toClaimed(row, input.workerId));
      return { deliveries, reclaimed: deliveries.filter((d) => d.reclaimed).length, deadLettered: swept.rows.filter((r) => r.state === 'dead').length };
    },

    async extendLeases(leases, leaseMs, now) {
      const owners = groupByOwner(leases);
      const lost: string[] = [];
      for (const [owner, group] of owners) {
        const res = await db.query<{ id: string }>(EXTEND_LEASES, [group.map((l) => l.deliveryId), group.map((l) => l.fencingToken), owner, leaseMs, now]);
        const renewed = new Set(res.rows.map((r) => r.id));
        for (const l of group) if (!renewed.has(l.deliveryId)) lost.push(l.deliveryId);
      }
      return lost;
    },

    async releaseLeases(leases, now) {
      const fenced: string[] = [];
      for (const [owner, group] of groupByOwner(leases)) {
        const res = await db.query<{ id: string }>(RELEASE_LEASES, [group.map((l) => l.deliveryId), group.map((l) => l.fencingToken), owner, now]);
        const released = new Set(res.rows.map((r) => r.id));
        for (const l of group) if (!released.has(l.deliveryId)) fenced.push(l.deliveryId);
      }
      return fenced;
    },

    async recordAttempts(records, now): Promise<RecordResult> {
      if (records.length === 0) return { recorded: [], fencedOut: [] };
      const params = [
        records.map((r) => r.deliveryId),
        records.map((r) => r.fencingToken),
        records.map((r) => r.workerId),
        records.map((r) => (r.next.next === 'retry' ? 'pending' : r.next.next)),
        records.map((r) => (r.next.next === 'retry' ? r.next.delayMs : null)),
        records.map((r) => (r.next.next === 'dead' ? r.next.reason : null)),
        records.map((r) => r.attemptId),
        records.map((r) => r.attemptNumber),
        records.map((r) => r.trigger),
        records.map((r) => r.url),
        records.map((r) => r.succeeded),
        records.map((r) => r.statusCode),
        records.map((r) => r.responseBody),
        records.map((r) => r.location),
        records.map((r) => r.errorKind),
        records.map((r) => r.errorDetail),
        records.map((r) => Math.round(r.durationMs)),
        now,
      ];
      const effects = records.filter((r) => r.throttleEndpointMs !== null || r.disableEndpointReason !== null);
      const written = effects.length === 0
        ? (await db.query<{ id: string }>(RECORD_ATTEMPTS, params)).rows
        : await db.tx(async (client) => {
            const rows = (await client.query<{ id: string }>(RECORD_ATTEMPTS, params)).rows;
            const recordedIds = new Set(rows.map((r) => r.id));
            // Endpoint effects only for outcomes that were not fenced out.
            for (const r of effects) {
              if (!recordedIds.has(r.deliveryId)) continue;
              const endpointId = r.endpointId;
              if (r.throttleEndpointMs !== null) await client.query(THROTTLE_ENDPOINT, [endpointId, r.throttleEndpointMs, now]);
              if (r.disableEndpointReason !== null) await client.query(DISABLE_ENDPOINT, [endpointId, r.disableEndpointReason, now]);
            }
            return rows;
          });
      const recorded = new Set(written.map((r) => r.id));
      return {
        recorded: records.filter((r) => recorded.has(r.deliveryId)).map((r) => r.deliveryId),
        fencedOut: records.filter((r) => !recorded.has(r.deliveryId)).map((r) => r.deliveryId),
      };
    },
  };
}

function groupByOwner(leases: readonly LeaseRef[]): Map<string, LeaseRef[]> {
  const out = new Map<string, LeaseRef[]>();
  for (const l of leases) {
    const group = out.get(l.workerId);
    if (group === undefined) out.set(l.workerId, [l]);
    else group.push(l);
  }
  return out;
}
