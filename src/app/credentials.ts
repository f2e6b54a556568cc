import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  APP_KEY_CAPABILITIES,
  CAPABILITIES,
  PORTAL_DEFAULT_CAPABILITIES,
  READ_ONLY_CAPABILITIES,
  type Capability,
} from '../domain/capabilities.ts';
import type { ApiKeyRecord, ApiKeyStore } from '../ports/api-key-store.ts';
import type { Clock } from '../ports/clock.ts';

/**
 * Who is calling (docs/design.md#security, docs/adr/0011-credential-capabilities.md): the operator (the admin token, or
 * an operator API key: `operatorKey`), or a credential scoped to one application — an application key, or an
 * app-portal token (`portal`) — which sees only that application's objects and does what its capabilities
 * allow. `readOnly` = `ViewBase` only. `capabilities` absent = those its kind and `readOnly` give
 * ({@link capabilitiesOf}).
 */
export type Principal =
  | { readonly kind: 'admin'; readonly operatorKey?: true }
  | {
      readonly kind: 'app';
      readonly appId: string;
      readonly readOnly?: true;
      readonly portal?: true;
      readonly capabilities?: readonly Capability[];
      /** Svix `sessionId` the portal token was issued with. */
      readonly sessionId?: string;
      /** Svix `featureFlags` the portal token was issued with. */
      readonly featureFlags?: readonly string[];
      readonly expiresAt?: Date;
    };

const ALL: ReadonlySet<Capability> = new Set(CAPABILITIES);

/**
 * The capabilities `principal` holds (ADR 0011): the operator every one; a scoped credential those it was
 * issued with, or — when none were stored — `ViewBase` for a read-only one, every Svix capability for a
 * portal token (Svix's default), every capability (`ManageMessages` included) for an application key.
 */
export function capabilitiesOf(principal: Principal): ReadonlySet<Capability> {
  if (principal.kind === 'admin') return ALL;
  if (principal.capabilities !== undefined) return new Set(principal.capabilities);
  if (principal.readOnly === true) return new Set(READ_ONLY_CAPABILITIES);
  return new Set(principal.portal === true ? PORTAL_DEFAULT_CAPABILITIES : APP_KEY_CAPABILITIES);
}

/**
 * The principal of a stored scoped key (stored capabilities Tidings no longer knows are dropped: they allow nothing).
 */
function scopedPrincipal(key: ApiKeyRecord & { readonly appId: string }): Principal {
  const known = new Set<string>(CAPABILITIES);
  return {
    kind: 'app',
    appId: key.appId,
    ...(key.readOnly === true ? { readOnly: true as const } : {}),
    ...(key.portal === true ? { portal: true as const } : {}),
    ...(key.capabilities === undefined
      ? {}
      : { capabilities: key.capabilities.filter((c): c is Capability => known.has(c)) }),
    ...(key.sessionId === undefined ? {} : { sessionId: key.sessionId }),
    ...(key.featureFlags === undefined ? {} : { featureFlags: key.featureFlags }),
    ...(key.expiresAt === undefined ? {} : { expiresAt: key.expiresAt }),
  };
}

/** Id of the API-key row that holds the hash of the admin token generated on first start. */
export const BOOTSTRAP_ADMIN_KEY_ID = 'key_bootstrap_admin';

/** Prefix of tokens Tidings generates (no `.`: the svix client reads a region after a dot). */
export const TOKEN_PREFIX = 'tidings_';

/** Random bytes in a generated token (256 bits). */
const TOKEN_BYTES = 32;

/** Length of a {@link hashToken} digest (SHA-256), bytes. */
const SHA256_BYTES = 32;

/** SHA-256 of a token's UTF-8 bytes: what is stored and compared (docs/guides/security.md: keys stored as hashes). */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** A new random Bearer token: `tidings_` + base64url of 32 random bytes. */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(TOKEN_BYTES).toString('base64url');
}

/** Dependencies of {@link createAuthenticator}. */
export interface AuthenticatorDeps {
  readonly store: Pick<ApiKeyStore, 'findApiKeyByHash'>;
  /** TIDINGS_API_TOKEN, or undefined when none is configured. */
  readonly adminToken: string | undefined;
}

/**
 * Makes `authenticate(tokenHash)`, given the SHA-256 of a non-empty Bearer token ({@link hashToken}, taken once
 * per request by the HTTP layer, which also keys its failed-authentication and rate limits on it; anything
 * but a 32-byte digest is refused with null): the configured admin
 * token is compared by hash in constant time (`timingSafeEqual` over two 32-byte digests); otherwise the hash
 * is looked up among live API keys (the lookup is by hash, so its timing says nothing about the token).
 * Returns the principal, or null for an unknown or revoked token.
 */
export function createAuthenticator(deps: AuthenticatorDeps): (tokenHash: Buffer) => Promise<Principal | null> {
  const adminHash = deps.adminToken === undefined ? null : hashToken(deps.adminToken);
  return async (hash) => {
    if (hash.length !== SHA256_BYTES) return null;
    if (adminHash !== null && timingSafeEqual(hash, adminHash)) return { kind: 'admin' };
    const key = await deps.store.findApiKeyByHash(hash);
    if (key === null) return null;
    if (key.role === 'admin')
      return key.id === BOOTSTRAP_ADMIN_KEY_ID ? { kind: 'admin' } : { kind: 'admin', operatorKey: true };
    if (key.appId === null) return null;
    return scopedPrincipal({ ...key, appId: key.appId });
  };
}

/** Dependencies of {@link ensureAdminToken}. */
export interface EnsureAdminTokenDeps {
  readonly store: Pick<ApiKeyStore, 'insertApiKeyIfAbsent'>;
  readonly clock: Clock;
  /** TIDINGS_API_TOKEN, or undefined. */
  readonly configuredToken: string | undefined;
}

/**
 * First start (README.md, "Quick start"): when no TIDINGS_API_TOKEN is configured, the first start generates an admin
 * token, stores only its SHA-256 hash (API key {@link BOOTSTRAP_ADMIN_KEY_ID}), and returns the token so that the
 * caller prints it once. Later starts (and a process that loses a start-up race) find the key and return null.
 * @returns the new token, or null when a token is configured or was generated before
 */
export async function ensureAdminToken(deps: EnsureAdminTokenDeps): Promise<string | null> {
  if (deps.configuredToken !== undefined) return null;
  const token = generateToken();
  const created = await deps.store.insertApiKeyIfAbsent(
    {
      id: BOOTSTRAP_ADMIN_KEY_ID,
      name: 'admin (generated on first start)',
      role: 'admin',
      appId: null,
      tokenHash: hashToken(token),
      tokenPrefix: token.slice(0, TOKEN_PREFIX.length + 4),
    },
    deps.clock.sqlNow(),
  );
  return created ? token : null;
}
