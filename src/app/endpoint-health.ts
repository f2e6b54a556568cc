import type { EndpointStore } from '../ports/endpoint-store.ts';
import type { ApplicationStore } from '../ports/application-store.ts';
import { AppError, notFound } from '../domain/errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { EndpointHealth, EndpointHealthStore, EndpointLimits } from '../ports/endpoint-health-store.ts';
import { resolveApplication } from './applications.ts';
import type { Principal } from './credentials.ts';

/** Dependencies of {@link createEndpointHealth}. */
export interface EndpointHealthDeps {
  readonly store: Pick<ApplicationStore, 'findApplication'> & Pick<EndpointStore, 'findEndpoint'>;
  readonly health: EndpointHealthStore;
  readonly clock: Clock;
}

/**
 * Endpoint health and flow control use cases (docs/adr/0004-endpoint-flow-control.md). Refs are ids or the caller's
 * uids.
 */
export interface EndpointHealthUseCases {
  /** @throws AppError `not_found`; `conflict` when the endpoint is disabled */
  pause(principal: Principal, appRef: string, endpointRef: string): Promise<void>;
  /** @throws AppError `not_found` */
  resume(principal: Principal, appRef: string, endpointRef: string): Promise<void>;
  /**
   * Probe now: ends an open breaker's cool-down, so that exactly one delivery goes next as its probe (success
   * closes the breaker, failure opens it for a new cool-down). A half-open breaker already has its probe:
   * nothing changes. Returns the health read model.
   * @throws AppError `not_found`; `conflict` when the breaker is closed (nothing is held by it)
   */
  probeBreaker(principal: Principal, appRef: string, endpointRef: string): Promise<EndpointHealth>;
  /**
   * Closes the breaker: the endpoint's deliveries are claimed as usual again, and its failure streak starts
   * from zero. Idempotent. Returns the health read model.
   * @throws AppError `not_found`
   */
  closeBreaker(principal: Principal, appRef: string, endpointRef: string): Promise<EndpointHealth>;
  /** @throws AppError `not_found` */
  setLimits(principal: Principal, appRef: string, endpointRef: string, limits: EndpointLimits): Promise<EndpointHealth>;
  /** @throws AppError `not_found` */
  health(principal: Principal, appRef: string, endpointRef: string): Promise<EndpointHealth>;
}

/**
 * Who paused, resumed, probed or closed, as the health history names it: the operator (admin token or
 * operator key), or the application itself — a portal token (its customer, ManageEndpoint by default) or an
 * application API key.
 */
export function actorOf(principal: Principal): string {
  if (principal.kind === 'admin') return 'the operator';
  return principal.portal === true ? 'a portal token of the application' : 'an API key of the application';
}

/** Makes the endpoint health use cases. */
export function createEndpointHealth(deps: EndpointHealthDeps): EndpointHealthUseCases {
  const endpointId = async (principal: Principal, appRef: string, endpointRef: string): Promise<string> => {
    const app = await resolveApplication(deps.store, principal, appRef);
    const ep = await deps.store.findEndpoint(app.id, endpointRef);
    if (ep === null) throw notFound('Endpoint');
    return ep.id;
  };
  const read = async (id: string): Promise<EndpointHealth> => {
    const h = await deps.health.health(id, deps.clock.sqlNow());
    if (h === null) throw notFound('Endpoint');
    return h;
  };
  return {
    async pause(principal, appRef, endpointRef) {
      if (
        !(await deps.health.pause(
          await endpointId(principal, appRef, endpointRef),
          deps.clock.sqlNow(),
          actorOf(principal),
        ))
      )
        throw notFound('Endpoint');
    },
    async resume(principal, appRef, endpointRef) {
      if (
        !(await deps.health.resume(
          await endpointId(principal, appRef, endpointRef),
          deps.clock.sqlNow(),
          actorOf(principal),
        ))
      )
        throw notFound('Endpoint');
    },
    async probeBreaker(principal, appRef, endpointRef) {
      const id = await endpointId(principal, appRef, endpointRef);
      const was = await deps.health.probeNow(id, deps.clock.sqlNow(), actorOf(principal));
      if (was === null) throw notFound('Endpoint');
      if (was === 'closed') {
        throw new AppError('conflict', 'The breaker is closed: it holds nothing back, so there is nothing to probe');
      }
      return read(id);
    },
    async closeBreaker(principal, appRef, endpointRef) {
      const id = await endpointId(principal, appRef, endpointRef);
      if ((await deps.health.closeBreaker(id, deps.clock.sqlNow(), actorOf(principal))) === null)
        throw notFound('Endpoint');
      return read(id);
    },
    async setLimits(principal, appRef, endpointRef, limits) {
      const id = await endpointId(principal, appRef, endpointRef);
      if (!(await deps.health.setLimits(id, limits))) throw notFound('Endpoint');
      return read(id);
    },
    async health(principal, appRef, endpointRef) {
      return read(await endpointId(principal, appRef, endpointRef));
    },
  };
}
