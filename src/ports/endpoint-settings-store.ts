import type { Tx } from './unit-of-work.ts';

/**
 * Custom header names whose values are credentials (lower case). Svix redacts the same names from
 * `GET …/headers` and lists them under `sensitive`; Tidings also stores their values encrypted
 * (column sensitive_headers, docs/design.md#security) and never shows them.
 */
export const SENSITIVE_HEADER_NAMES: readonly string[] = Object.freeze([
  'authorization',
  'proxy-authorization',
  'proxy-authenticate',
  'www-authenticate',
  'x-auth-token',
]);

/** Splits custom headers (lower-case names) into the plain ones and the {@link SENSITIVE_HEADER_NAMES}. */
export function splitSensitiveHeaders(headers: Readonly<Record<string, string>>): {
  readonly plain: Record<string, string>;
  readonly sensitive: Record<string, string>;
} {
  const plain: Record<string, string> = {};
  const sensitive: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (SENSITIVE_HEADER_NAMES.includes(name.toLowerCase())) sensitive[name] = value;
    else plain[name] = value;
  }
  return { plain, sensitive };
}

/** An endpoint's custom headers, sensitive values decrypted. Names are lower case. */
export interface EndpointHeaders {
  readonly plain: Readonly<Record<string, string>>;
  readonly sensitive: Readonly<Record<string, string>>;
}

/**
 * Endpoint settings that live outside the endpoint record: the signing secret's rotation and the custom
 * headers with their encrypted part. Writes take the caller's {@link Tx}; reads inside it must pass it.
 */
export interface EndpointSettingsStore {
  /**
   * Rotates the signing secret (Svix `secret/rotate`): the current secret becomes the previous one, valid
   * until now + `graceMs` (the claim signs with both until then, docs/design.md#signing), and `secret` (`whsec_…`,
   * encrypted by the store) becomes current. A previous secret still in its grace period is replaced.
   * @returns false when there is no such live endpoint
   */
  rotateSecret(
    tx: Tx,
    appId: string,
    endpointId: string,
    secret: string,
    graceMs: number,
    now: Date | null,
  ): Promise<boolean>;
  /** The endpoint's custom headers, or null when there is no such live endpoint. */
  readHeaders(appId: string, endpointId: string, tx?: Tx): Promise<EndpointHeaders | null>;
  /**
   * Replaces the custom headers: sensitive ones are stored encrypted (context = endpoint id), the rest in
   * plain JSON. Returns false when there is no such live endpoint.
   */
  writeHeaders(
    tx: Tx,
    appId: string,
    endpointId: string,
    headers: Readonly<Record<string, string>>,
    now: Date | null,
  ): Promise<boolean>;
}
