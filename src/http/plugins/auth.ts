import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import type { HttpDeps } from '../deps.ts';

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * Bearer authentication on every route whose config is not `public` (DESIGN §10). Runs at `onRequest`,
 * before the body is read, so an unauthenticated caller cannot make the server parse anything.
 * An application-scoped key is refused (403) here on operator-only routes, and a read-only key on writes.
 * @throws AppError `authentication_failed` (401, `www-authenticate: Bearer`) without a header, with a
 *   malformed one, or with an unknown, revoked or expired token; `forbidden` (403)
 */
export function installAuth(app: FastifyInstance, deps: Pick<HttpDeps, 'authenticate'> & { readonly config: Pick<HttpDeps['config'], 'corsOrigins'> }): void {
  app.decorateRequest('principal', null);
  const corsOn = deps.config.corsOrigins.length > 0;
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public === true) return;
    // A CORS preflight carries no credentials (Fetch standard); @fastify/cors answers it.
    if (corsOn && request.method === 'OPTIONS') return;
    const match = BEARER.exec(request.headers.authorization ?? '');
    const token = match?.[1];
    if (token === undefined) throw new AppError('authentication_failed', 'Missing or malformed "Authorization: Bearer <token>" header', { headers: { 'www-authenticate': 'Bearer' } });
    const principal = await deps.authenticate(token);
    if (principal === null) throw new AppError('authentication_failed', 'Unknown or revoked token', { headers: { 'www-authenticate': 'Bearer' } });
    request.principal = principal;
    if (principal.kind === 'app') checkScope(request.method, `${request.method} ${request.routeOptions.url ?? ''}`, request.routeOptions.config, principal.readOnly === true);
  });
}

/**
 * Routes an application-scoped key may never use, whatever they name (issue 8 §3): listing and creating
 * applications. Routes added later mark themselves with `config.adminOnly` instead.
 */
export const ADMIN_ONLY_ROUTES: ReadonlySet<string> = new Set(['GET /api/v1/app', 'POST /api/v1/app']);

/**
 * Refuses an application-scoped key, before the body is read, on operator-only routes and — for a read-only
 * key — on anything but a read (issue 8 §3: 403 whatever the route names).
 * @throws AppError `forbidden`
 */
function checkScope(method: string, route: string, config: { readonly adminOnly?: boolean; readonly readOnlyAllowed?: boolean }, readOnly: boolean): void {
  if (config.adminOnly === true || ADMIN_ONLY_ROUTES.has(route)) throw new AppError('forbidden', 'This credential may not use this route');
  if (readOnly && method !== 'GET' && method !== 'HEAD' && config.readOnlyAllowed !== true) throw new AppError('forbidden', 'This credential may only read');
}
