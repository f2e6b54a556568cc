import { createSecretKey, type KeyObject } from 'node:crypto';
import { decodeSecret, signingKeyId } from '../../domain/signing.ts';
import type { Cipher } from '../../ports/cipher.ts';
import type { ClaimedDelivery } from '../../ports/delivery-store.ts';
import type { RetryPolicyFields } from '../../domain/retry-policy.ts';

/**
 * A leased delivery as the claim (claim.sql) and a publish that hands off its leases (message-store.ts) return it:
 * the delivery's lease, its message and its endpoint, payload and secrets still encrypted.
 */
export interface ClaimRow {
  id: string;
  fencing_token: string;
  app_id: string;
  message_id: string;
  endpoint_id: string;
  attempt_count: number;
  manual: boolean;
  reclaimed: boolean;
  event_type: string;
  /** NULL once the payload was expunged; also NULL in a publish's hand-off, which has the payload in memory. */
  payload: Buffer | null;
  payload_key_id: string | null;
  content_type: string | null;
  url: string;
  headers: Record<string, string> | null;
  secret: Buffer;
  secret_key_id: string;
  sensitive_headers: Buffer | null;
  sensitive_headers_key: string | null;
  previous_secret: Buffer | null;
  previous_secret_key_id: string | null;
  /** The delivery's retry policy (migration 1764000012000), as stored at its creation; NULL = none. */
  retry_policy: RetryPolicyFields | null;
}

/** Most endpoint signing keys a reader keeps imported (see {@link createClaimedReader}). */
const SIGNING_KEY_CACHE_MAX = 10_000;

/**
 * Makes the reader of {@link ClaimRow}s: decrypts payloads (context = message id) and secrets and sensitive headers
 * (context = endpoint id) with `cipher`. `payload`, when given, is the exact payload already in memory (a publish's
 * hand-off) and is used instead of the row's. Signing keys are decrypted and imported once per stored ciphertext, not
 * once per delivery: a bounded cache, in which a rotated or re-encrypted secret is simply a miss.
 */
export function createClaimedReader(
  cipher: Cipher,
): (row: ClaimRow, dispatcherId: string, payload?: Uint8Array) => ClaimedDelivery {
  const signingKeyCache = new Map<string, { key: KeyObject; id: string }>();
  const decryptSecret = (data: Buffer, keyId: string, endpointId: string): { key: KeyObject; id: string } => {
    const cacheKey = `${endpointId}:${keyId}:${data.toString('base64')}`;
    let entry = signingKeyCache.get(cacheKey);
    if (entry === undefined) {
      const raw = decodeSecret(cipher.decrypt(keyId, data, endpointId).toString('utf8'));
      entry = { key: createSecretKey(raw), id: signingKeyId(raw) };
      if (signingKeyCache.size >= SIGNING_KEY_CACHE_MAX) signingKeyCache.clear();
      signingKeyCache.set(cacheKey, entry);
    }
    return entry;
  };
  return (row, dispatcherId, payload) => {
    const secrets = [decryptSecret(row.secret, row.secret_key_id, row.endpoint_id)];
    if (row.previous_secret !== null && row.previous_secret_key_id !== null) {
      secrets.push(decryptSecret(row.previous_secret, row.previous_secret_key_id, row.endpoint_id));
    }
    const headers: Record<string, string> = { ...(row.headers ?? {}) };
    if (row.sensitive_headers !== null && row.sensitive_headers_key !== null) {
      Object.assign(
        headers,
        JSON.parse(
          cipher.decrypt(row.sensitive_headers_key, row.sensitive_headers, row.endpoint_id).toString('utf8'),
        ) as Record<string, string>,
      );
    }
    return {
      deliveryId: String(row.id),
      fencingToken: String(row.fencing_token),
      dispatcherId,
      appId: row.app_id,
      messageId: row.message_id,
      endpointId: row.endpoint_id,
      eventType: row.event_type,
      attemptNumber: row.attempt_count + 1,
      manual: row.manual,
      reclaimed: row.reclaimed,
      url: row.url,
      // An expunged payload is delivered as JSON null: the delivery history stays, the content is gone.
      payload:
        payload ??
        (row.payload === null || row.payload_key_id === null
          ? Buffer.from('null')
          : cipher.decrypt(row.payload_key_id, row.payload, row.message_id)),
      contentType: row.content_type,
      signingKeys: secrets.map((s) => s.key),
      signingKeyIds: secrets.map((s) => s.id),
      headers,
      retryPolicy: row.retry_policy,
    };
  };
}
