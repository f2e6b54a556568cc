import type { Page, PageQuery } from './paging.ts';
import type { Tx } from './unit-of-work.ts';

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
  expireApplicationKeys(
    appId: string,
    afterMs: number,
    now: Date | null,
    sessionIds?: readonly string[] | null,
  ): Promise<number>;
  /** The live (not revoked, not expired) key with this token hash, or null. */
  findApiKeyByHash(tokenHash: Uint8Array): Promise<ApiKeyRecord | null>;
  /** Inserts a key; false (and nothing written) when a key with this id exists already. */
  insertApiKeyIfAbsent(key: NewApiKey, now: Date | null): Promise<boolean>;
  /** Revokes every live key scoped to `appId`; returns how many. */
  revokeApplicationKeys(tx: Tx, appId: string, now: Date | null): Promise<number>;
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

/** A stored credential. `appId` is set for application-scoped keys. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly role: 'admin' | 'app';
  readonly appId: string | null;
  readonly createdAt: Date;
  /** Set on a key that may only read (GET routes). */
  readonly readOnly?: boolean;
  /** An app-portal token (Svix `appPortalAccess`) rather than an application key. */
  readonly portal?: boolean;
  /** Capabilities the token was issued with; absent = those its kind and `readOnly` give (ADR 0011). */
  readonly capabilities?: readonly string[];
  /** Svix `sessionId` of a portal token. */
  readonly sessionId?: string;
  /** Svix `featureFlags` of a portal token. */
  readonly featureFlags?: readonly string[];
  /** When the key stops working, or absent = until revoked. */
  readonly expiresAt?: Date;
}

export interface NewApiKey {
  readonly id: string;
  readonly name: string;
  readonly role: 'admin' | 'app';
  readonly appId: string | null;
  /** SHA-256 of the token; the token itself is never stored. */
  readonly tokenHash: Uint8Array;
  /** The first characters of the token, to recognise it in a list. */
  readonly tokenPrefix: string;
}
