import type { Page, PageQuery } from './catalog-store.ts';
import type { Tx } from './idempotency-store.ts';

/**
 * API keys as the credentials API manages them (docs/guides/security.md). Only the SHA-256 hash of a token is stored,
 * with its first characters to recognise it in a list; the token itself is shown once, at creation.
 * Instants come from the database clock; `now: Date | null` follows the Clock seam (null = database clock).
 */
export interface ApiKeyStore {
  /** Stores a new key (in `tx` when given, e.g. with an application created in the same request). */
  insert(key: NewManagedApiKey, now: Date | null, tx?: Tx): Promise<ApiKeyView>;
  /** Keys by id (creation order), optionally only those scoped to `appId`; revoked and expired keys included. */
  list(query: PageQuery & { readonly appId: string | null }): Promise<Page<ApiKeyView>>;
  /** Revokes a key; false when there is no such key. Revoking a revoked key changes nothing and is true. */
  revoke(id: string, now: Date | null): Promise<boolean>;
  /** Revokes the live application-scoped key with this token hash; false when there is none. */
  revokeScopedByHash(tokenHash: Uint8Array, now: Date | null): Promise<boolean>;
  /**
   * Makes every live key scoped to `appId` expire `afterMs` from now (0 = at once) — only the portal tokens
   * issued with one of `sessionIds` when that list is given and not empty (Svix `ApplicationTokenExpireIn`);
   * returns how many.
   */
  expireApplicationKeys(appId: string, afterMs: number, now: Date | null, sessionIds?: readonly string[] | null): Promise<number>;
}

/** A key to store. `appId` null = an operator (admin) key. */
export interface NewManagedApiKey {
  readonly id: string;
  readonly name: string;
  readonly appId: string | null;
  readonly readOnly: boolean;
  readonly tokenHash: Uint8Array;
  readonly tokenPrefix: string;
  /** Lifetime from now in ms, or null = until revoked. */
  readonly expiresInMs: number | null;
  /** An app-portal token (default false: an application or operator key). */
  readonly portal?: boolean;
  /** Capabilities it is issued with (ADR 0011); absent = those its kind and `readOnly` give. */
  readonly capabilities?: readonly string[];
  /** Svix `sessionId` of a portal token. */
  readonly sessionId?: string | null;
  /** Svix `featureFlags` of a portal token. */
  readonly featureFlags?: readonly string[] | null;
}

/** A stored key as listed (never its token or hash). */
export interface ApiKeyView {
  readonly id: string;
  readonly name: string;
  readonly role: 'admin' | 'app';
  readonly appId: string | null;
  readonly readOnly: boolean;
  readonly tokenPrefix: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}
