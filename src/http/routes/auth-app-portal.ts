import { z } from 'zod';
import type { Api, HttpDeps } from '../deps.ts';
import { principalOf } from '../idempotency.ts';
import { applicationIn } from '../schemas/application.ts';
import { commonErrors, refParam, WIRE_LIMITS } from '../schemas/common.ts';
import { applicationInput } from './application-create.ts';

/** Longest application-portal token lifetime a caller may ask for, in seconds (one year). */
const MAX_PORTAL_EXPIRY_SECONDS = 365 * 24 * 3600;

/** Svix `AppPortalAccessIn`. `featureFlags`, `sessionId` and `capabilities` are accepted and ignored. */
const appPortalAccessIn = z.object({
  application: applicationIn.nullish().describe('Created (with this uid) when the application does not exist'),
  expiry: z.number().int().min(1).max(MAX_PORTAL_EXPIRY_SECONDS).nullish().describe('Token lifetime in seconds; default TIDINGS_APP_PORTAL_TOKEN_TTL'),
  readOnly: z.boolean().nullish(),
  featureFlags: z.array(z.string().max(WIRE_LIMITS.nameMaxLength)).nullish(),
  sessionId: z.string().max(WIRE_LIMITS.nameMaxLength).nullish(),
  capabilities: z.array(z.string().max(WIRE_LIMITS.nameMaxLength)).nullish(),
}).meta({ id: 'AppPortalAccessIn' });

const appPortalAccessOut = z.object({ url: z.string(), token: z.string() }).meta({ id: 'AppPortalAccessOut' });

/** Svix `ApplicationTokenExpireIn`: `expiry` = seconds until the tokens expire (absent = now). */
const tokenExpireIn = z.object({
  expiry: z.number().int().min(0).max(MAX_PORTAL_EXPIRY_SECONDS).nullish(),
  sessionIds: z.array(z.string().max(WIRE_LIMITS.nameMaxLength)).nullish(),
}).meta({ id: 'ApplicationTokenExpireIn' });

/**
 * Svix authentication routes (issue 8 §2):
 * - `POST /api/v1/auth/app-portal-access/{app_id}` (operator only): a token scoped to one application
 *   (`{url, token}`; the token also follows `#key=` in the URL), expiring after `expiry` seconds. It is shown
 *   once (only its hash is kept), so an Idempotency-Key does not replay it: each call issues a new token.
 * - `POST /api/v1/auth/logout`: an application token revokes itself.
 * - `POST /api/v1/auth/app/{app_id}/expire-all` (operator only): every token of the application expires.
 */
export function registerAuthRoutes(app: Api, deps: Pick<HttpDeps, 'apiKeys' | 'applications' | 'idempotency' | 'config'>): void {
  app.post('/api/v1/auth/app-portal-access/:appId', {
    config: { adminOnly: true },
    schema: { tags: ['Authentication'], summary: 'Get consumer app portal access', params: z.object({ appId: refParam }), body: appPortalAccessIn, response: { 200: appPortalAccessOut, ...commonErrors } },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const b = request.body;
    const issued = await deps.idempotency.transaction(async (tx) => {
      const target = await deps.applications.resolveForPublish(tx, principal, request.params.appId, b.application == null ? null : applicationInput(b.application));
      return deps.apiKeys.issueAppToken(tx, principal, target.id, {
        name: 'app portal', readOnly: b.readOnly ?? false,
        expiresInMs: b.expiry == null ? deps.config.appPortalTokenTtlMs : b.expiry * 1000,
      });
    });
    const base = deps.config.appPortalUrl ?? `${request.protocol}://${request.host}/app-portal`;
    return reply.header('cache-control', 'no-store').send({ url: `${base}#key=${issued.token}`, token: issued.token });
  });

  app.post('/api/v1/auth/logout', {
    config: { readOnlyAllowed: true },
    schema: { tags: ['Authentication'], summary: 'Logout an app token', response: { 204: z.null(), ...commonErrors } },
  }, async (request, reply) => {
    const token = /^Bearer[ \t]+(\S+)/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
    await deps.apiKeys.logout(principalOf(request), token);
    return reply.code(204).send(null);
  });

  app.post('/api/v1/auth/app/:appId/expire-all', {
    config: { adminOnly: true },
    schema: { tags: ['Authentication'], summary: 'Expire all tokens of an application', params: z.object({ appId: refParam }), body: tokenExpireIn.nullish(), response: { 204: z.null(), ...commonErrors } },
  }, async (request, reply) => {
    await deps.apiKeys.expireAll(principalOf(request), request.params.appId, (request.body?.expiry ?? 0) * 1000);
    return reply.code(204).send(null);
  });
}
