/**
 * Encryption at rest (docs/design.md#security): endpoint secrets, sensitive headers and message payloads are stored
 * encrypted; each stored value names the id of its key so keys rotate without downtime.
 */
export interface Cipher {
  /** Id of the key used for new writes (the first of the key ring). */
  readonly currentKeyId: string;
  /**
   * Encrypts `plain`, bound to `context` (additional authenticated data, e.g. the row id) so a value
   * cannot be moved to another row.
   */
  encrypt(plain: Uint8Array, context: string): { readonly keyId: string; readonly data: Buffer };
  /**
   * Decrypts a value written by {@link encrypt}.
   * @throws Error with code `unknown_key` when `keyId` is not in the ring, or `decrypt_failed` when the
   *   value or its context was altered.
   */
  decrypt(keyId: string, data: Uint8Array, context: string): Buffer;
}
