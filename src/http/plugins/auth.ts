import type { FastifyInstance } from 'fastify';
import { capabilitiesOf, hashToken, type Principal } from '../../app/credentials.ts';
import { allows } from '../../domain/capabilities.ts';
import { AppError } from '../../domain/errors.ts';
import type { Config } from '../../config/config.ts';
import type { HttpDeps } from '../deps.ts';
import { routeRequirement } from '../route-capabilities.ts';
import type { AuthFailures } from './auth-failures.ts';
import { clientAddress } from './client-address.ts';

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * Most token hashes remembered as unknown (oldest forgotten first), each for TIDINGS_AUTH_FAILURE_WINDOW: a
 * client repeating one bad token costs one credential lookup per window. A token is random (256 bits), so
 * one unknown now cannot be a valid one a moment later.
 */
const MAX_UNKNOWN = 10_000;

/**
 * Bearer authentication on every route whose config is not `public` (docs/design.md#the-http-api). Runs at `onRequest`,
 * before the body is read, so an unauthenticated caller cannot make the server parse anything.
 * The credential is checked before anything is counted against its address: a valid one always passes, and
 * only a failure is reported to `failures` (TIDINGS_AUTH_FAILURE_LIMIT), which decides between 401 and 429.
 * A credential scoped to one application is refused (403) here, whatever the route names, on routes that
 * need a capability it does not hold (the table in src/http/route-capabilities.ts, ADR 0011).
 * @throws AppError `authentication_failed` (401, `www-authenticate: Bearer`) without a header, with a
 *   malformed one, or with an unknown, revoked or expired token; `rate_limited` (429) for those past the
 *   failure limit of the client address; `forbidden` (403)
 */
export function installAuth(
  app: FastifyInstance,
  deps: Pick<HttpDeps, 'authenticate'> & { readonly config: Pick<Config, 'corsOrigins' | 'authFailureWindowMs'> },
  failures: AuthFailures,
  nowMs: () => number = Date.now,
): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('tokenHash', null);
  const corsOn = deps.config.corsOrigins.length > 0;
  // Insertion-ordered: the first entry is the oldest. Value: when it was found unknown.
  const unknown = new Map<string, number>();
  const knownUnknown = (key: string): boolean => {
    const at = unknown.get(key);
    if (at === undefined) return false;
    if (nowMs() - at < deps.config.authFailureWindowMs) return true;
    unknown.delete(key);
    return false;
  };
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public === true) return;
    // A CORS preflight carries no credentials (Fetch standard); @fastify/cors answers it.
    if (corsOn && request.method === 'OPTIONS') return;
    const match = BEARER.exec(request.headers.authorization ?? '');
    const token = match?.[1];
    if (token === undefined) {
      throw failures.refuse(clientAddress(request), 'Missing or malformed "Authorization: Bearer <token>" header');
    }
    // Hashed once: the rate limit (rate-limit.ts) and the in-progress limit (in-progress.ts) key on this hash.
    const hash = hashToken(token);
    request.tokenHash = hash;
    const key = hash.toString('base64url');
    const principal = knownUnknown(key) ? null : await deps.authenticate(hash);
    if (principal === null) {
      unknown.delete(key);
      unknown.set(key, nowMs());
      if (unknown.size > MAX_UNKNOWN) unknown.delete(unknown.keys().next().value!);
      throw failures.refuse(clientAddress(request), 'Unknown or revoked token');
    }
    request.principal = principal;
    if (principal.kind === 'app')
      checkScope(request.method, request.routeOptions.url ?? '', request.routeOptions.config, principal);
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
  if (
    config.adminOnly === true ||
    ADMIN_ONLY_ROUTES.has(`${method} ${url}`) ||
    requirement === undefined ||
    requirement === 'operator'
  )
    throw new AppError('forbidden', OPERATOR_ONLY_DETAIL);
  if (allows(capabilitiesOf(principal), requirement)) return;
  const reading = method === 'GET' || method === 'HEAD';
  if (principal.kind === 'app' && principal.readOnly === true && !reading)
    throw new AppError('forbidden', 'This credential may only read');
  throw new AppError(
    'forbidden',
    `This credential lacks the capability this route needs: one of ${requirement.join(', ')}`,
  );
}
