import type { ApplicationStore } from '../ports/application-store.ts';
import { AppError, notFound } from '../domain/errors.ts';
import { hasPrefix, newId } from '../domain/ids.ts';
import { portalCapabilities } from '../domain/capabilities.ts';
import type { ApiKeyStore, ApiKeyView, NewManagedApiKey } from '../ports/api-key-store.ts';
import type { Page, PageQuery } from '../ports/paging.ts';
import type { Clock, Random } from '../ports/clock.ts';
import type { Tx } from '../ports/unit-of-work.ts';
import { requireAdmin, resolveApplication } from './applications.ts';
import { generateToken, hashToken, TOKEN_PREFIX, type Principal } from './credentials.ts';

/** Characters of a token kept (beside its hash) to recognise it in a list: the prefix and 4 more. */
export const TOKEN_PREFIX_LENGTH = TOKEN_PREFIX.length + 4;

/** What a caller asks for when creating a key. */
export interface ApiKeyInput {
  readonly name: string;
  /** Application id or uid the key is scoped to; null = an operator (admin) key. */
  readonly appRef: string | null;
  /** Lifetime in ms; null = until revoked. */
  readonly expiresInMs: number | null;
  /** A scoped key that may only read. */
  readonly readOnly: boolean;
}

/**
 * An app-portal token as Svix `AppPortalAccessIn` asks for it (ADR 0011): `capabilities` as requested
 * (null = Svix's default: every capability, or `ViewBase` with `readOnly`), `sessionId` for a later
 * `expire-all` by session, `featureFlags` handed back by `GET /api/v1/auth/me`.
 */
export interface PortalTokenOptions {
  readonly name: string;
  readonly expiresInMs: number;
  readonly readOnly: boolean;
  readonly capabilities: readonly string[] | null;
  readonly sessionId: string | null;
  readonly featureFlags: readonly string[] | null;
}

/** A new key and its token: the token is in this answer only (docs/guides/security.md: shown once). */
export interface IssuedKey {
  readonly key: ApiKeyView;
  readonly token: string;
}

/** Dependencies of {@link createApiKeys}. */
export interface ApiKeysDeps {
  readonly keys: ApiKeyStore;
  readonly applications: Pick<ApplicationStore, 'findApplication'>;
  readonly clock: Clock;
  readonly random: Random;
}

/**
 * The credentials API (docs/guides/security.md): operator-only creation, listing and revocation of API keys, and
 * application-portal tokens (Svix `authentication.appPortalAccess`): keys scoped to one application.
 */
export interface ApiKeys {
  /** @throws AppError `forbidden` for a scoped key; `not_found` for an unknown application */
  create(principal: Principal, input: ApiKeyInput): Promise<IssuedKey>;
  /** @throws AppError `forbidden` for a scoped key; `not_found` for an unknown application filter */
  list(principal: Principal, query: PageQuery & { readonly appRef: string | null }): Promise<Page<ApiKeyView>>;
  /** @throws AppError `forbidden` for a scoped key; `not_found` for an unknown key id */
  revoke(principal: Principal, id: string): Promise<void>;
  /**
   * Issues a token scoped to `appId` (already resolved, possibly created in `tx`) that expires after
   * `expiresInMs`.
   * @throws AppError `forbidden` for a scoped key
   */
  issueAppToken(tx: Tx, principal: Principal, appId: string, options: PortalTokenOptions): Promise<IssuedKey>;
  /**
   * Svix `authentication.logout`: revokes the application-scoped token the caller used.
   * @throws AppError `forbidden` when the caller used an operator token (it is revoked through the keys API)
   */
  logout(principal: Principal, token: string): Promise<void>;
  /**
   * Svix `authentication.expireAll`: every token scoped to the application expires after `afterMs` (0 = now);
   * with a non-empty `sessionIds`, only the portal tokens issued with one of those session ids.
   * @throws AppError `forbidden` for a scoped key; `not_found`
   */
  expireAll(
    principal: Principal,
    appRef: string,
    afterMs: number,
    sessionIds?: readonly string[] | null,
  ): Promise<void>;
}

/** Makes the credentials use cases. */
export function createApiKeys(deps: ApiKeysDeps): ApiKeys {
  const { keys, clock } = deps;
  const newKeyId = () => newId('key', clock.nowMs(), () => deps.random.next());

  const issue = async (
    name: string,
    appId: string | null,
    readOnly: boolean,
    expiresInMs: number | null,
    tx?: Tx,
    portal?: Pick<NewManagedApiKey, 'capabilities' | 'sessionId' | 'featureFlags'>,
  ): Promise<IssuedKey> => {
    const token = generateToken();
    const key = await keys.insert(
      {
        id: newKeyId(),
        name,
        appId,
        readOnly,
        tokenHash: hashToken(token),
        tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
        expiresInMs,
        ...(portal === undefined ? {} : { portal: true, ...portal }),
      },
      clock.sqlNow(),
      tx,
    );
    return { key, token };
  };

  return {
    async create(principal, input) {
      requireAdmin(principal);
      if (input.appRef === null && input.readOnly)
        throw new AppError('validation', [
          {
            loc: ['body', 'readOnly'],
            msg: 'only a key scoped to an application (appId) can be read-only',
            type: 'value_error',
          },
        ]);
      const appId =
        input.appRef === null ? null : (await resolveApplication(deps.applications, principal, input.appRef)).id;
      return issue(input.name, appId, input.readOnly, input.expiresInMs);
    },

    async list(principal, query) {
      requireAdmin(principal);
      const { appRef, ...page } = query;
      const appId = appRef === null ? null : (await resolveApplication(deps.applications, principal, appRef)).id;
      return keys.list({ ...page, appId });
    },

    async revoke(principal, id) {
      requireAdmin(principal);
      if (!hasPrefix(id, 'key') && !/^key_[A-Za-z0-9_]{1,64}$/.test(id)) throw notFound('API key');
      if (!(await keys.revoke(id, clock.sqlNow()))) throw notFound('API key');
    },

    async issueAppToken(tx, principal, appId, options) {
      requireAdmin(principal);
      const verdict = portalCapabilities(options.capabilities, options.readOnly);
      if (!verdict.ok) {
        const { field, index, msg } = verdict.problem;
        throw new AppError('validation', [
          { loc: index === null ? ['body', field] : ['body', field, index], msg, type: 'value_error' },
        ]);
      }
      const readOnly = options.readOnly || verdict.capabilities.every((c) => c === 'ViewBase');
      return issue(options.name, appId, readOnly, options.expiresInMs, tx, {
        capabilities: verdict.capabilities,
        sessionId: options.sessionId,
        featureFlags: options.featureFlags,
      });
    },

    async logout(principal, token) {
      if (principal.kind !== 'app')
        throw new AppError(
          'forbidden',
          'Only an application token can log out; revoke operator keys with DELETE /api/v1/api-key/{id}',
        );
      await keys.revokeScopedByHash(hashToken(token), clock.sqlNow());
    },

    async expireAll(principal, appRef, afterMs, sessionIds) {
      requireAdmin(principal);
      const app = await resolveApplication(deps.applications, principal, appRef);
      await keys.expireApplicationKeys(app.id, afterMs, clock.sqlNow(), sessionIds ?? null);
    },
  };
}
