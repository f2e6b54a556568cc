import { AppError, notFound } from '../domain/errors.ts';
import type { ValidationIssue } from '../domain/errors.ts';
import { receiverAuthIssues, receiverAuthSummary, type ReceiverAuth } from '../domain/receiver-auth.ts';
import { applyReceiverAuthPatch, type ReceiverAuthPatch } from '../domain/receiver-auth-patch.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ReceiverAuthSource, ReceiverAuthStore, StoredReceiverAuth } from '../ports/receiver-auth-store.ts';
import type { EndpointKey } from '../ports/retry-policy-store.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** Dependencies of {@link createReceiverAuths}. */
export interface ReceiverAuthsDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  /** The store; `load` (the decrypted configuration) serves PATCH, which keeps the secrets it is not given. */
  readonly store: ReceiverAuthStore & ReceiverAuthSource;
  readonly clock: Clock;
  /** TIDINGS_EGRESS_ALLOWLIST: which token URLs may be http (src/domain/receiver-auth.ts, tokenUrlIssue). */
  readonly egressAllowlist: readonly string[];
}

/**
 * Endpoints' receiver authentication (Tidings-only route `…/endpoint/{ep}/auth`;
 * docs/adr/0028-receiver-authentication.md).
 * Read by who may view the endpoint (the summary only: no secret), changed by who may change it; a credential scoped
 * to one application reaches its own endpoints only (resolveApplication).
 */
export interface ReceiverAuths {
  /** The summary (null = none). @throws AppError `not_found` */
  get(principal: Principal, appRef: string, endpointRef: string): Promise<StoredReceiverAuth | null>;
  /**
   * Replaces it. @throws AppError `not_found`; `validation` naming each bad field (PEM that does not parse, a key that
   * does not match its certificate, a token URL that is not https…), nothing changed
   */
  set(principal: Principal, appRef: string, endpointRef: string, auth: ReceiverAuth): Promise<StoredReceiverAuth>;
  /**
   * Changes the parts `patch` names and keeps the others and every secret it leaves out
   * (src/domain/receiver-auth-patch.ts); null when it removed every part. @throws as {@link set}, and `validation`
   * naming a required field left out of a part not configured yet
   */
  patch(
    principal: Principal,
    appRef: string,
    endpointRef: string,
    patch: ReceiverAuthPatch,
  ): Promise<StoredReceiverAuth | null>;
  /** Removes it. @throws AppError `not_found` */
  clear(principal: Principal, appRef: string, endpointRef: string): Promise<void>;
}

/** A client certificate is offered in a TLS handshake only: on an http endpoint it would never be used. */
const MTLS_NEEDS_HTTPS: ValidationIssue = {
  loc: ['body', 'mtls'],
  msg: "needs an https endpoint URL: this endpoint's URL is http, where no TLS client certificate or CA is used",
  type: 'value_error',
};

/** Attempts of a PATCH whose read-merge-write met a concurrent change each time; then 409. */
const PATCH_ATTEMPTS = 5;

/** Makes the receiver-auth use cases. */
export function createReceiverAuths(deps: ReceiverAuthsDeps): ReceiverAuths {
  const endpointOf = async (principal: Principal, appRef: string, endpointRef: string) => {
    const app = await resolveApplication(deps.lookups, principal, appRef);
    const ep = await deps.lookups.findEndpoint(app.id, endpointRef);
    if (ep === null) throw notFound('Endpoint');
    return { key: { appId: app.id, endpointId: ep.id } as EndpointKey, http: ep.url.startsWith('http:') };
  };
  const endpointKey = async (principal: Principal, appRef: string, endpointRef: string): Promise<EndpointKey> =>
    (await endpointOf(principal, appRef, endpointRef)).key;
  const validate = (auth: ReceiverAuth, http: boolean): void => {
    const issues = receiverAuthIssues(auth, deps.egressAllowlist);
    if (http && auth.mtls !== undefined) issues.push(MTLS_NEEDS_HTTPS);
    if (issues.length > 0) throw new AppError('validation', issues);
  };
  /** Why a write changed nothing: the endpoint is gone, or its URL became http; else (a newer version) undefined. */
  const refusal = async (principal: Principal, appRef: string, endpointRef: string, auth: ReceiverAuth) => {
    const { http } = await endpointOf(principal, appRef, endpointRef);
    if (http && auth.mtls !== undefined) throw new AppError('validation', [MTLS_NEEDS_HTTPS]);
  };
  return {
    async get(principal, appRef, endpointRef) {
      const stored = await deps.store.read(await endpointKey(principal, appRef, endpointRef));
      if (stored === undefined) throw notFound('Endpoint');
      return stored;
    },
    async set(principal, appRef, endpointRef, auth) {
      const { key, http } = await endpointOf(principal, appRef, endpointRef);
      validate(auth, http);
      const stored = await deps.store.write(key, auth, receiverAuthSummary(auth), deps.clock.sqlNow());
      if (stored !== undefined) return stored;
      await refusal(principal, appRef, endpointRef, auth);
      throw notFound('Endpoint');
    },
    async patch(principal, appRef, endpointRef, patch) {
      for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt += 1) {
        const { key, http } = await endpointOf(principal, appRef, endpointRef);
        const current = await deps.store.load(key.endpointId);
        const outcome = applyReceiverAuthPatch(current?.auth, patch);
        if ('issues' in outcome) throw new AppError('validation', outcome.issues);
        const { auth } = outcome;
        if (auth.basic === undefined && auth.oauth2 === undefined && auth.mtls === undefined) {
          if (!(await deps.store.clear(key, deps.clock.sqlNow()))) throw notFound('Endpoint');
          return null;
        }
        validate(auth, http);
        const now = deps.clock.sqlNow();
        const stored = await deps.store.write(key, auth, receiverAuthSummary(auth), now, current?.version ?? null);
        if (stored !== undefined) return stored;
        await refusal(principal, appRef, endpointRef, auth);
      }
      throw new AppError('conflict', 'Receiver auth kept changing under this PATCH; read it again and retry');
    },
    async clear(principal, appRef, endpointRef) {
      const key = await endpointKey(principal, appRef, endpointRef);
      if (!(await deps.store.clear(key, deps.clock.sqlNow()))) throw notFound('Endpoint');
    },
  };
}
