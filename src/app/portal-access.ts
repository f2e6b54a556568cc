import type { UnitOfWork } from '../ports/unit-of-work.ts';
import type { ApiKeys, IssuedKey, PortalTokenOptions } from './api-keys.ts';
import type { ApplicationInput, Applications } from './applications.ts';
import type { Principal } from './credentials.ts';

/**
 * What {@link issuePortalAccess} needs: the application lookup (or get-or-create), the token issuer, one transaction.
 */
export interface PortalAccessDeps {
  readonly applications: Pick<Applications, 'resolveForPublish'>;
  readonly apiKeys: Pick<ApiKeys, 'issueAppToken'>;
  readonly unitOfWork: Pick<UnitOfWork, 'transaction'>;
}

/**
 * Svix `authentication.appPortalAccess`: issues a portal token for the application `appRef` (an id or uid),
 * creating the application first when `create` is given and none matches (Svix `AppPortalAccessIn.application`),
 * both in one transaction, so that a refused token (a capability problem) creates no application.
 * @returns the token (shown once: only its hash is stored) and its key record
 * @throws AppError `forbidden` for a scoped credential; `not_found` when the application does not exist and
 *   `create` is null; `validation` for capabilities that cannot be combined (loc body.capabilities or body.readOnly)
 */
export function issuePortalAccess(
  deps: PortalAccessDeps,
  principal: Principal,
  appRef: string,
  create: ApplicationInput | null,
  options: PortalTokenOptions,
): Promise<IssuedKey> {
  return deps.unitOfWork.transaction(async (tx) => {
    const target = await deps.applications.resolveForPublish(tx, principal, appRef, create);
    return deps.apiKeys.issueAppToken(tx, principal, target.id, options);
  });
}
