import type { ReceiverAuth, ReceiverAuthSummary, VersionedReceiverAuth } from '../domain/receiver-auth.ts';
import type { EndpointKey } from './retry-policy-store.ts';
import type { Tx } from './unit-of-work.ts';

/** An endpoint's receiver authentication as the API shows it (docs/adr/0028-receiver-authentication.md). */
export interface StoredReceiverAuth {
  readonly summary: ReceiverAuthSummary;
  /** New at every write (a sequence). */
  readonly version: string;
}

/**
 * Endpoints' receiver authentication, stored encrypted (context = the endpoint id). The API reads the summary only;
 * the dispatcher reads the configuration itself through {@link ReceiverAuthSource}.
 */
export interface ReceiverAuthStore {
  /** The live endpoint's receiver auth (null = none), or undefined when there is no such endpoint. */
  read(key: EndpointKey): Promise<StoredReceiverAuth | null | undefined>;
  /**
   * Replaces it in one statement; `now` follows the Clock seam. Undefined when nothing was written: there is no such
   * endpoint, or `auth` has `mtls` and the endpoint's URL is http (a client certificate is offered over TLS only), or
   * `expectedVersion` is given and the stored version (null: none) is another one.
   */
  write(
    key: EndpointKey,
    auth: ReceiverAuth,
    summary: ReceiverAuthSummary,
    now: Date | null,
    expectedVersion?: string | null,
  ): Promise<StoredReceiverAuth | undefined>;
  /** Removes it; false when there is no such endpoint. */
  clear(key: EndpointKey, now: Date | null): Promise<boolean>;
}

/** Whether an endpoint has a TLS client configuration (`mtls`), read in the caller's transaction. */
export type EndpointHasMtls = (tx: Tx, endpointId: string) => Promise<boolean>;

/** What a dispatcher reads: a live endpoint's decrypted receiver auth with its version, null when it has none. */
export interface ReceiverAuthSource {
  /** @throws when the store cannot be read or the value not decrypted (the attempt is then `receiver_auth`). */
  load(endpointId: string): Promise<VersionedReceiverAuth | null>;
}
