import type { FastifyInstance } from 'fastify';
import { capabilitiesOf, hashToken, type Principal } from '../../app/credentials.ts';
import { allows } from '../../domain/capabilities.ts';
import { AppError } from '../../domain/errors.ts';
import type { HttpDeps } from '../deps.ts';
import { routeRequirement } from '../route-capabilities.ts';

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * Bearer authentication on every route whose config is not `public` (docs/design.md#the-http-api). Runs at `onRequest`,
 * before the body is read, so an unauthenticated caller cannot make the server parse anything.
 * A credential scoped to one application is refused (403) here, whatever the route names, on routes that
 * need a capability it does not hold (the table in src/http/route-capabilities.ts, ADR 0011).
 * @throws AppError `authentication_failed` (401, `www-authenticate: Bearer`) without a header, with a
 *   malformed one, or with an unknown, revoked or expired token; `forbidden` (403)
 */
export function installAuth(app: FastifyInstance, deps: Pick<HttpDeps, 'authenticate'> & { readonly config: Pick<HttpDeps['config'], 'corsOrigins'> }): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('tokenHash', null);
  const corsOn = deps.config.corsOrigins.length > 0;
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public === true) return;
    // A CORS preflight carries no credentials (Fetch standard); @fastify/cors answers it.
    if (corsOn && request.method === 'OPTIONS') return;
    const match = BEARER.exec(request.headers.authorization ?? '');
    const token = match?.[1];
    if (token === undefined) throw new AppError('authentication_failed', 'Missing or malformed "Authorization: Bearer <token>" header', { headers: { 'www-authenticate': 'Bearer' } });
    // Hashed once: the failed-authentication limit (auth-failures.ts) and the rate limit (rate-limit.ts) key on this hash.
    const hash = hashToken(token);
    request.tokenHash = hash;
    const principal = await deps.authenticate(hash);
    if (principal === null) throw new AppError('authentication_failed', 'Unknown or revoked token', { headers: { 'www-authenticate': 'Bearer' } });
    request.principal = principal;
    if (principal.kind === 'app') checkScope(request.method, request.routeOptions.url ?? '', request.routeOptions.config, principal);
  });
}

/**
 * Routes an application-scoped key may never use, whatever they name: listing and creating applications.
 * Routes added later say so in src/http/route-capabilities.ts (or mark themselves with `config.adminOnly`).
 */
export const ADMIN_ONLY_ROUTES: ReadonlySet<string> = new Set(['GET /api/v1/app', 'POST /api/v1/app']);

/** The 403 detail of a route a scoped credential may never use. */
export const OPERATOR_ONLY_DETAIL = 'This credential may not use this route';

/**
 * Refuses a scoped credential, before the body is read, on an operator-only route, on a route the
 * capability table does not name, and on one that needs a capability it lacks (ADR 0011).
 * @throws AppError `forbidden`
 */
function checkScope(method: string, url: string, config: { readonly adminOnly?: boolean }, principal: Principal): void {
  const requirement = routeRequirement(method, url);
  if (config.adminOnly === true || ADMIN_ONLY_ROUTES.has(`${method} ${url}`) || requirement === undefined || requirement === 'operator') throw new AppError('forbidden', OPERATOR_ONLY_DETAIL);
  if (allows(capabilitiesOf(principal), requirement)) return;
  const reading = method === 'GET' || method === 'HEAD';
  if (principal.kind === 'app' && principal.readOnly === true && !reading) throw new AppError('forbidden', 'This credential may only read');
  throw new AppError('forbidden', `This credential lacks the capability this route needs: one of ${requirement.join(', ')}`);
}
