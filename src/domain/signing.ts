import { createHash, createHmac, type KeyObject } from 'node:crypto';

/**
 * Standard Webhooks signing (spec 1.0.0, "Signature scheme"; docs/design.md#signing).
 *
 * Signed content: UTF-8 `msgId + "." + timestampS + "."` followed by the exact body bytes.
 * Signature entry: `v1,` + base64 (padded) HMAC-SHA256 with key = base64-decoded secret (without `whsec_`).
 */

/** Prefix of an endpoint signing secret. */
export const SECRET_PREFIX = 'whsec_';
/** Secret key sizes accepted for new secrets, in bytes (docs/design.md#signing). */
export const SECRET_MIN_BYTES = 24;
export const SECRET_MAX_BYTES = 64;

/** Thrown when a secret string is not `whsec_` + standard base64 of 24–64 bytes. */
export class InvalidSecretError extends Error {
  readonly code = 'invalid_secret';
}

/**
 * Decodes a `whsec_<base64>` secret into its key bytes.
 * @throws InvalidSecretError when the prefix is missing, the base64 is not canonical, or the length is
 *   outside 24–64 bytes.
 */
export function decodeSecret(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new InvalidSecretError('secret must start with whsec_');
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) {
    throw new InvalidSecretError('secret must be whsec_ followed by padded standard base64');
  }
  const key = Buffer.from(b64, 'base64');
  // Canonical only: unused padding bits must be zero, so one key has exactly one spelling.
  if (key.toString('base64') !== b64) throw new InvalidSecretError('secret base64 is not canonical');
  if (key.length < SECRET_MIN_BYTES || key.length > SECRET_MAX_BYTES) {
    throw new InvalidSecretError(`secret key must be ${SECRET_MIN_BYTES}–${SECRET_MAX_BYTES} bytes`);
  }
  return key;
}

/** Encodes key bytes as a `whsec_` secret (padded standard base64). */
export function encodeSecret(key: Uint8Array): string {
  return SECRET_PREFIX + Buffer.from(key).toString('base64');
}

/**
 * One `v1,<base64>` signature entry over (msgId, timestampS, body).
 * @param key raw key bytes (see {@link decodeSecret}), or a KeyObject made once from them (`createSecretKey`):
 *   a KeyObject skips the per-call key import, several times faster on Node 24
 * @param timestampS Unix time in whole seconds, as sent in `webhook-timestamp`
 * @param body the exact body bytes sent
 */
export function signV1(key: Uint8Array | KeyObject, msgId: string, timestampS: number, body: Uint8Array): string {
  const hmac = createHmac('sha256', key);
  hmac.update(`${msgId}.${timestampS}.`, 'utf8');
  hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

/** The three Standard Webhooks headers for one attempt. */
export interface SignatureHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

/**
 * Builds the Standard Webhooks headers. With several keys (secret rotation grace period) the signature
 * header carries one entry per key, space-separated, newest first.
 */
export function signatureHeaders(
  keys: readonly (Uint8Array | KeyObject)[],
  msgId: string,
  timestampS: number,
  body: Uint8Array,
): SignatureHeaders {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': keys.map((key) => signV1(key, msgId, timestampS, body)).join(' '),
  };
}

/**
 * Which signature headers a request carries: `webhook` (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, Standard Webhooks), `svix` (`svix-id`, `svix-timestamp`, `svix-signature`, what Svix
 * sends by default) or `both` (the same three values under both names). The `svix` and `standardwebhooks`
 * verifiers accept either set (TIDINGS_SIGNATURE_HEADERS).
 */
export type SignatureHeaderSet = 'webhook' | 'svix' | 'both';

/**
 * The signature headers of one attempt under the names `set` asks for; the signatures are computed once
 * (see {@link signatureHeaders}).
 */
export function signatureHeadersFor(
  set: SignatureHeaderSet,
  keys: readonly (Uint8Array | KeyObject)[],
  msgId: string,
  timestampS: number,
  body: Uint8Array,
): Readonly<Record<string, string>> {
  const signed = signatureHeaders(keys, msgId, timestampS, body);
  if (set === 'webhook') return { ...signed };
  const svix = {
    'svix-id': signed['webhook-id'],
    'svix-timestamp': signed['webhook-timestamp'],
    'svix-signature': signed['webhook-signature'],
  };
  return set === 'svix' ? svix : { ...signed, ...svix };
}

/**
 * The id of a signing secret as attempt records name it: `key_` and the first 16 hex digits of SHA-256 of
 * the secret's key bytes (the base64-decoded part of `whsec_…`). It identifies the secret without revealing
 * it; an operator computes the same from a secret they hold.
 */
export function signingKeyId(key: Uint8Array): string {
  return `key_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}
