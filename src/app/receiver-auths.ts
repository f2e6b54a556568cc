import { AppError, notFound } from '../domain/errors.ts';
import { receiverAuthIssues, receiverAuthSummary, type ReceiverAuth } from '../domain/receiver-auth.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import type { Clock } from '../ports/clock.ts';
import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ReceiverAuthStore, StoredReceiverAuth } from '../ports/receiver-auth-store.ts';
import type { EndpointKey } from '../ports/retry-policy-store.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** Dependencies of {@link createReceiverAuths}. */
export interface ReceiverAuthsDeps {
  readonly lookups: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  readonly store: ReceiverAuthStore;
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
  /** Removes it. @throws AppError `not_found` */
  clear(principal: Principal, appRef: string, endpointRef: string): Promise<void>;
}

/** Makes the receiver-auth use cases. */
export function createReceiverAuths(deps: ReceiverAuthsDeps): ReceiverAuths {
  const endpointKey = async (principal: Principal, appRef: string, endpointRef: string): Promise<EndpointKey> => {
    const app = await resolveApplication(deps.lookups, principal, appRef);
    const ep = await deps.lookups.findEndpoint(app.id, endpointRef);
    if (ep === null) throw notFound('Endpoint');
    return { appId: app.id, endpointId: ep.id };
  };
  return {
    async get(principal, appRef, endpointRef) {
      const stored = await deps.store.read(await endpointKey(principal, appRef, endpointRef));
      if (stored === undefined) throw notFound('Endpoint');
      return stored;
    },
    async set(principal, appRef, endpointRef, auth) {
      const key = await endpointKey(principal, appRef, endpointRef);
      const issues = receiverAuthIssues(auth, deps.egressAllowlist);
      if (issues.length > 0) throw new AppError('validation', issues);
      const stored = await deps.store.write(key, auth, receiverAuthSummary(auth), deps.clock.sqlNow());
      if (stored === undefined) throw notFound('Endpoint');
      return stored;
    },
    async clear(principal, appRef, endpointRef) {
      const key = await endpointKey(principal, appRef, endpointRef);
      if (!(await deps.store.clear(key, deps.clock.sqlNow()))) throw notFound('Endpoint');
    },
  };
}
