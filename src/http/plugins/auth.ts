import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import type { HttpDeps } from '../deps.ts';

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * Bearer authentication on every route whose config is not `public` (DESIGN §10). Runs at `onRequest`,
 * before the body is read, so an unauthenticated caller cannot make the server parse anything.
 * @throws AppError `authentication_failed` (401, `www-authenticate: Bearer`) without a header, with a
 *   malformed one, or with an unknown or revoked token
 */
export function installAuth(app: FastifyInstance, deps: Pick<HttpDeps, 'authenticate'>): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public === true) return;
    const match = BEARER.exec(request.headers.authorization ?? '');
    const token = match?.[1];
    if (token === undefined) throw new AppError('authentication_failed', 'Missing or malformed "Authorization: Bearer <token>" header', { headers: { 'www-authenticate': 'Bearer' } });
    const principal = await deps.authenticate(token);
    if (principal === null) throw new AppError('authentication_failed', 'Unknown or revoked token', { headers: { 'www-authenticate': 'Bearer' } });
    request.principal = principal;
  });
}
